import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { AGW_BIN } from '../helpers/cli.js';

/**
 * Start-up of the everyday CLI commands stays light: `agw skill validate` (what CI runs on
 * every bundle) and `agw keys` never load TypeBox (its ~370 modules cost ~130 ms of every
 * command: shared/schemas/key-bounds.ts). A loader hook logs every module URL the process
 * resolves that contains "typebox"; `agw config schema`, which needs it, shows the hook sees it.
 */
const HOOK = fileURLToPath(new URL('../helpers/import-log/register.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'agw-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function typeboxImports(args: string[]): { status: number | null; stdout: string; imports: string[] } {
  const log = join(dir, `imports-${++n}.log`);
  const r = spawnSync(process.execPath, ['--import', HOOK, AGW_BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, AGW_IMPORT_LOG: log, AGW_IMPORT_LOG_MATCH: '/typebox/', NO_COLOR: '1', AGW_API_KEY: undefined, AGW_BASE_URL: undefined },
  });
  return { status: r.status, stdout: r.stdout, imports: existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : [] };
}

describe('what the CLI loads to start', () => {
  test('agw skill validate and agw keys --help load no TypeBox module', () => {
    const bundle = join(dir, 'light-skill');
    mkdirSync(bundle);
    writeFileSync(join(bundle, 'SKILL.md'), '---\nname: light-skill\ndescription: Checks what the CLI loads.\n---\n\n# light-skill\n');
    const validate = typeboxImports(['skill', 'validate', bundle]);
    expect(validate.status).toBe(0);
    expect(validate.stdout).toMatch(/valid/);
    expect(validate.imports).toEqual([]);
    const keys = typeboxImports(['keys', '--help']);
    expect(keys.status).toBe(0);
    expect(keys.imports).toEqual([]);
  });

  test('the hook does see TypeBox where a command needs it (agw config schema)', () => {
    const schema = typeboxImports(['config', 'schema']);
    expect(schema.status).toBe(0);
    expect(schema.imports.length).toBeGreaterThan(0);
  });
});
