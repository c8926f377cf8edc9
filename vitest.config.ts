import { defineConfig } from 'vitest/config';

/**
 * The test matrix: the API suites (they start real daemons through test/helpers/daemon.ts)
 * run once per store backend, SQLite and PostgreSQL (AGW_TEST_STORE=postgres gives each
 * daemon a fresh database of its own); everything else runs once, the tests kept beside
 * their code under src/ (the migrations' parity test) included.
 * `npx vitest run --project sqlite|postgres|other` picks one leg.
 */
const MATRIX = ['test/api/**/*.test.ts', 'test/foundation/**/*.test.ts'];
/** Foundation suites that never open the test store (they run `agw` on its own SQLite): once is enough. */
const STORE_FREE = ['test/foundation/config-cli.test.ts', 'test/foundation/serve.test.ts', 'test/foundation/install.test.ts', 'test/foundation/ledger.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      // the API suites share their workers' module graph (isolate: false): each file starts
      // its own daemon and store, and importing the daemon afresh for every file cost more
      // than a minute of the run
      { extends: true, test: { name: 'sqlite', include: MATRIX, exclude: STORE_FREE, isolate: false, env: { AGW_TEST_STORE: 'sqlite' } } },
      { extends: true, test: { name: 'postgres', include: MATRIX, exclude: STORE_FREE, isolate: false, env: { AGW_TEST_STORE: 'postgres' } } },
      // test/clients (real third-party clients, heavy) run apart: npm run test:clients
      { extends: true, test: { name: 'other', include: ['test/**/*.test.ts', 'src/**/*.test.ts'], exclude: [...MATRIX, 'test/clients/**'] } },
      { extends: true, test: { name: 'once', include: STORE_FREE } },
    ],
  },
});
