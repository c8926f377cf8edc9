import { accessSync, constants, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

/**
 * Issue #2 points 1 and 2, as far as a test can see them: the README's two commands, the
 * CI script running the same test command, the build on install, dependencies chosen for
 * Node 20.18+, and no prebuilt binary downloaded from outside the npm registry.
 * (A fresh clone passing `bash .ci/run` is checked by running it; see docs/foundation.md.)
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (f: string) => readFileSync(`${ROOT}/${f}`, 'utf8');
const pkg = JSON.parse(read('package.json'));
const lock = JSON.parse(read('package-lock.json'));

describe('install and run on a fresh machine', () => {
  it('the README starts with the command that starts the daemon and the one that runs the tests', () => {
    const firstBlock = /```\w*\n([\s\S]*?)```/.exec(read('README.md'))![1];
    expect(read('README.md').indexOf('```')).toBeLessThan(20);
    expect(firstBlock).toContain('node bin/agw.js serve --demo');
    expect(firstBlock).toMatch(/^npm test\b/m);
    expect(pkg.scripts.test).toBe('vitest run');
  });

  it('.ci/run installs from the lockfile and runs the type-check and that same test command', () => {
    const ci = read('.ci/run');
    accessSync(`${ROOT}/.ci/run`, constants.X_OK);
    expect(ci).toMatch(/^set -euo pipefail$/m);
    for (const cmd of ['npm ci', 'npm run typecheck', 'npm test']) expect(ci).toMatch(new RegExp(`^${cmd}\\b`, 'm'));
  });

  it('npm install builds dist/ (prepare) so bin/agw.js runs straight after', async () => {
    expect(pkg.bin).toEqual({ agw: 'bin/agw.js' });
    expect(pkg.scripts.prepare).toMatch(/npm run build/);
    const r = await runCli(['--version']);
    expect(r).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
  });

  it('better-sqlite3 compiles from source: its installer never downloads a prebuilt binary', () => {
    expect(read('.npmrc')).toMatch(/^build-from-source=better-sqlite3$/m);
    for (const [name, entry] of Object.entries(lock.packages as Record<string, { resolved?: string }>)) {
      if (entry.resolved) expect(entry.resolved, name).toMatch(/^https:\/\/registry\.npmjs\.org\//);
    }
  });
});

describe('dependencies', () => {
  it('are the chosen majors', () => {
    const all = { ...pkg.dependencies, ...pkg.devDependencies };
    const major = (name: string) => semver.minVersion(all[name])!.major;
    expect(major('commander')).toBe(14);
    expect(major('fastify')).toBe(5);
    expect(all['@fastify/type-provider-typebox']).toBeDefined();
    expect(major('undici')).toBe(7);
    expect(major('better-sqlite3')).toBe(12);
    expect(major('vitest')).toBe(4);
    expect(major('ink')).toBe(6);
    for (const name of ['yaml', 'pino', 'react', '@napi-rs/keyring']) expect(all[name], name).toBeDefined();
  });

  it('every runtime package supports Node 20.18.1, and the dev tooling Node 20.19', () => {
    expect(pkg.engines.node).toBe('>=20.18.1');
    // Claude Code's JS launcher asks for Node 22; test/clients runs its native binary
    // (the per-platform package), which needs no Node at all
    const NATIVE_ONLY = new Set(['node_modules/@anthropic-ai/claude-code']);
    const bad: string[] = [];
    for (const [path, e] of Object.entries(lock.packages as Record<string, { version: string; dev?: boolean; engines?: { node?: string } }>)) {
      const range = e.engines?.node;
      if (!path || !range || (e.dev && NATIVE_ONLY.has(path))) continue;
      const node = e.dev ? '20.19.0' : '20.18.1';
      if (!semver.satisfies(node, range)) bad.push(`${path}@${e.version} needs node ${range}`);
    }
    expect(bad).toEqual([]);
  });
});
