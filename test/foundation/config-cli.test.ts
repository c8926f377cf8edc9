import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

/**
 * Issue #2 point 4 through the real CLI: `agw config schema` (and its generated copy in
 * docs/), `agw config check FILE`, and `agw serve` refusing a bad config with exit 2 and a
 * message naming the key and the rule, before it touches the store.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'agw-config-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function configFile(text: string): string {
  const f = join(dir, `c${++n}.yaml`);
  writeFileSync(f, text);
  return f;
}

describe('agw config schema', () => {
  it('prints the JSON Schema, and docs/config.schema.json is exactly that output', async () => {
    const r = await runCli(['config', 'schema']);
    expect(r.code).toBe(0);
    const schema = JSON.parse(r.stdout);
    expect(schema).toMatchObject({ type: 'object', additionalProperties: false, $schema: 'http://json-schema.org/draft-07/schema#' });
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining(['publicUrl', 'store', 'margin', 'auth', 'providers', 'models', 'tiers', 'aliases', 'smartRoutes', 'marketplace']),
    );
    // regenerate with: npm run docs:config-schema
    expect(readFileSync(join(ROOT, 'docs/config.schema.json'), 'utf8')).toBe(r.stdout);
  });
});

describe('agw config check', () => {
  it('a valid file: exit 0, and --json says valid', async () => {
    const f = configFile('margin: 2.5\nproviders:\n  openai: { apiKey: sk-x }\n');
    const human = await runCli(['config', 'check', f]);
    expect(human).toMatchObject({ code: 0, stdout: `${f}: valid\n` });
    const json = await runCli(['config', 'check', f, '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ valid: true, file: f, problems: [] });
  });

  it('no FILE is a usage error: exit 2', async () => {
    expect((await runCli(['config', 'check'])).code).toBe(2);
  });
});

const BAD: [string, string, { path: string; rule: string }][] = [
  ['unknown key', 'margin: 2\ncolour: blue\n', { path: 'colour', rule: 'additionalProperties' }],
  ['wrong type', 'margin: "lots"\n', { path: 'margin', rule: 'type' }],
  ['unknown provider', 'providers:\n  nope: { apiKey: x }\n', { path: 'providers.nope', rule: 'provider' }],
  ['unknown model in an alias', 'aliases:\n  smart-x:\n    - { provider: openai, model: gpt-9 }\n', { path: 'aliases.smart-x.0', rule: 'model' }],
  ['bad YAML', 'tiers:\n  free: { bands: [lite }\n', { path: 'tiers.free.bands', rule: 'yaml' }],
  ['custom YAML tag', 'margin: !!js/function "process.exit(9)"\n', { path: 'margin', rule: 'yaml-tag' }],
];

describe('a bad config file', () => {
  for (const [name, text, want] of BAD) {
    it(`${name}: serve exits 2 naming ${want.path} (${want.rule}) and creates no store; check exits 1`, async () => {
      const f = configFile(text);
      const data = mkdtempSync(join(dir, 'data-'));
      const [serve, checkJson] = await Promise.all([
        runCli(['serve', '--port', '0', '--data', data, '--config', f]),
        runCli(['config', 'check', f, '--json']),
      ]);
      expect(serve.code, serve.stderr).toBe(2);
      expect(serve.stdout).toBe('');
      expect(serve.stderr).toContain(`${want.path}:`);
      expect(serve.stderr).toContain(`(${want.rule})`);
      expect(existsSync(join(data, 'agw.db'))).toBe(false);

      expect(checkJson.code).toBe(1);
      const out = JSON.parse(checkJson.stdout);
      expect(out.valid).toBe(false);
      expect(out.problems).toContainEqual(expect.objectContaining(want));
    });
  }

  it('check without --json: exit 1, the code and every bad key on stderr', async () => {
    const r = await runCli(['config', 'check', configFile('colour: blue\nmargin: "lots"\n')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error INVALID_CONFIG: /);
    expect(r.stderr).toContain('colour: unknown key (additionalProperties)');
    expect(r.stderr).toContain('margin: must be number (type)');
  });

  it('a bad environment override stops serve the same way', async () => {
    const data = mkdtempSync(join(dir, 'data-'));
    const r = await runCli(['serve', '--port', '0', '--data', data], { env: { AGW_LOG_LEVEL: 'loud', AGW_CONFIG: undefined } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('env.AGW_LOG_LEVEL:');
    expect(existsSync(join(data, 'agw.db'))).toBe(false);
  });

  it('a config file that does not exist stops serve with exit 2', async () => {
    const r = await runCli(['serve', '--port', '0', '--data', dir, '--config', join(dir, 'missing.yaml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('missing.yaml');
  });
});
