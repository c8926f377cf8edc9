import { defineConfig } from 'vitest/config';

/**
 * `npm run test:clients`: real third-party clients (Claude Code's native binary, the Vercel
 * AI SDK, LangChain) driving two-turn tool loops against loopback endpoints. Kept out of
 * `npm test` (the default config's projects exclude test/clients) for their install size and
 * run time; .ci/run runs it after `npm test`.
 */
export default defineConfig({
  test: {
    include: ['test/clients/**/*.test.ts'],
    setupFiles: ['test/clients/loopback-only.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 1,
  },
});
