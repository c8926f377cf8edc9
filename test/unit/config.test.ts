import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfigText } from '../../src/shared/config/load.js';

/** Issue #2 point 4: YAML merged over the built-in defaults, env overrides, every problem named. */
const dir = mkdtempSync(join(tmpdir(), 'agw-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function file(text: string): string {
  const f = join(dir, `c${++n}.yaml`);
  writeFileSync(f, text);
  return f;
}
function problemsOf(text: string, env: Record<string, string> = {}) {
  try {
    loadConfig(file(text), env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).problems;
  }
  return [];
}

describe('built-in defaults (no file)', () => {
  const c = loadConfig(undefined, {});
  it('serve the 24-provider catalog (the spec\'s 21 and three clouds), margin 2.0, sqlite', () => {
    expect(c.providers.size).toBe(24);
    expect(c.margin).toBe(2);
    expect(c.store).toBe('sqlite');
    expect([...c.providers.values()].every((p) => p.margin === 2 && p.enabled && !p.apiKey)).toBe(true);
  });
  it('have the tiers free/pro/team/enterprise with bands, quotas and allowances', () => {
    expect([...c.tiers.keys()]).toEqual(['free', 'pro', 'team', 'enterprise']);
    expect(c.tiers.get('free')).toMatchObject({ bands: ['lite'], monthlyAllowance: 0 });
    expect(c.tiers.get('enterprise')!.bands).toEqual(['lite', 'standard', 'pro', 'premium']);
    expect(c.tiers.get('enterprise')!.quotas.ai_chat).toBe(-1);
  });
  it('have the default aliases, smart-route classes and marketplace settings', () => {
    expect([...c.aliases.keys()]).toEqual(['smart-lite', 'smart-standard', 'smart-pro', 'smart-premium']);
    expect(Object.keys(c.smartRoutes)).toEqual(['best-cheap-llm', 'best-fast-llm', 'best-quality-llm']);
    expect(c.marketplace.platformFee).toBe(0.2);
    // the contract's list (CONTRACT config example), general ones first: `--category productivity` works out of the box
    expect(c.marketplace.categories).toEqual([
      'coding', 'data', 'writing', 'research', 'productivity', 'design', 'devops', 'scene', 'npc-dialogue',
      'audio-economy', 'story-terrain', 'generation-files', 'physics-camera', 'validation-registry', 'other',
    ]);
    for (const targets of [...c.aliases.values(), ...Object.values(c.smartRoutes)])
      for (const t of targets) expect(c.models.has(`${t.provider}/${t.model}`), `${t.provider}/${t.model}`).toBe(true);
  });
});

describe('a config file merges over the defaults', () => {
  it('changes only the keys it names', () => {
    const c = loadConfig(
      file(`
margin: 2.5
publicUrl: https://agw.example.com/
auth: { masterToken: agw_master_0123456789abcdef }
providers:
  anthropic: { baseUrl: http://127.0.0.1:9002, apiKey: sk-ant-x, margin: 1.2 }
  stability: { enabled: false }
models:
  - { provider: openai, model: gpt-4o-mini, inputPer1M: 0.2 }
  - { provider: openai, model: my-model, band: pro, inputPer1M: 1, outputPer1M: 2 }
tiers:
  free: { quotas: { ai_chat: 7 } }
  gold: { displayName: Gold, bands: [lite, pro] }
aliases:
  smart-mine: [ { provider: openai, model: my-model } ]
smartRoutes:
  best-fast-llm: [ { provider: openai, model: gpt-4o-mini } ]
marketplace: { platformFee: 0.3 }
`),
      {},
    );
    expect(c.margin).toBe(2.5);
    expect(c.publicUrl).toBe('https://agw.example.com');
    expect(c.masterToken).toBe('agw_master_0123456789abcdef');
    expect(c.providers.get('anthropic')).toMatchObject({ baseUrl: 'http://127.0.0.1:9002', apiKey: 'sk-ant-x', margin: 1.2 });
    expect(c.providers.get('openai')!.margin).toBe(2.5);
    expect(c.providers.get('stability')!.enabled).toBe(false);
    expect(c.models.get('openai/gpt-4o-mini')).toMatchObject({ inputPer1M: 0.2, outputPer1M: 0.6, band: 'lite' });
    expect(c.models.get('openai/my-model')).toMatchObject({ band: 'pro', cachedInputPer1M: 1 });
    expect(c.tiers.get('free')!.quotas).toMatchObject({ ai_chat: 7, image_generation: 10 });
    expect(c.tiers.get('free')!.displayName).toBe('Free');
    expect(c.tiers.get('gold')).toMatchObject({ displayName: 'Gold', bands: ['lite', 'pro'], monthlyAllowance: 0 });
    expect(c.aliases.get('smart-mine')).toEqual([{ provider: 'openai', model: 'my-model' }]);
    expect(c.aliases.has('smart-pro')).toBe(true);
    expect(c.smartRoutes['best-fast-llm']).toEqual([{ provider: 'openai', model: 'gpt-4o-mini' }]);
    expect(c.smartRoutes['best-cheap-llm'].length).toBeGreaterThan(1);
    expect(c.marketplace).toMatchObject({ platformFee: 0.3, categories: expect.arrayContaining(['scene']) });
  });

  it('env overrides win over the file', () => {
    const c = loadConfig(file('providers:\n  openai: { apiKey: from-file, baseUrl: http://file.example }\n'), {
      AGW_PROVIDER_OPENAI_KEY: 'from-env',
      AGW_PROVIDER_OPENAI_BASE_URL: 'http://127.0.0.1:9001/',
      AGW_STORE: 'postgres://agw@db/agw',
      AGW_MASTER_TOKEN: 'agw_master_from_env_0000',
      AGW_LOG_LEVEL: 'debug',
    });
    expect(c.providers.get('openai')).toMatchObject({ apiKey: 'from-env', baseUrl: 'http://127.0.0.1:9001' });
    expect(c).toMatchObject({ store: 'postgres://agw@db/agw', masterToken: 'agw_master_from_env_0000', logLevel: 'debug' });
  });
});

describe('problems name the key path and the rule, all at once', () => {
  const cases: [string, string, Record<string, string>, { path: string; rule: string }][] = [
    ['unknown top-level key', 'bogus: 1\n', {}, { path: 'bogus', rule: 'additionalProperties' }],
    ['unknown nested key', 'tiers:\n  free: { colour: red }\n', {}, { path: 'tiers.free.colour', rule: 'additionalProperties' }],
    ['wrong type', 'margin: lots\n', {}, { path: 'margin', rule: 'type' }],
    ['below the minimum', 'tiers:\n  free: { quotas: { ai_chat: -5 } }\n', {}, { path: 'tiers.free.quotas.ai_chat', rule: 'minimum' }],
    ['not an allowed value', 'models:\n  - { provider: openai, model: x, band: huge }\n', {}, { path: 'models.0.band', rule: 'anyOf' }],
    ['unknown provider', 'providers:\n  nope: { apiKey: x }\n', {}, { path: 'providers.nope', rule: 'provider' }],
    ['unknown model in an alias', 'aliases:\n  smart-x: [ { provider: openai, model: gpt-9 } ]\n', {}, { path: 'aliases.smart-x.0', rule: 'model' }],
    ['bad YAML', 'margin: [1\n', {}, { path: 'margin.0', rule: 'yaml' }],
    ['custom YAML tag', 'margin: !js/function "return 1"\n', {}, { path: 'margin', rule: 'yaml-tag' }],
    ['duplicate key', 'margin: 2\nmargin: 3\n', {}, { path: 'margin', rule: 'yaml' }],
    ['bad env value', '{}\n', { AGW_LOG_LEVEL: 'loud' }, { path: 'env.AGW_LOG_LEVEL', rule: 'enum' }],
    ['bad env URL', '{}\n', { AGW_PROVIDER_OPENAI_BASE_URL: 'ftp://x' }, { path: 'env.AGW_PROVIDER_OPENAI_BASE_URL', rule: 'pattern' }],
  ];
  for (const [name, text, env, want] of cases) {
    it(`${name} -> ${want.path} (${want.rule})`, () => {
      expect(problemsOf(text, env)).toContainEqual(expect.objectContaining(want));
    });
  }

  it('reports every problem of a file, and the message says where', () => {
    const problems = problemsOf('bogus: 1\nmargin: lots\nproviders:\n  nope: {}\n');
    expect(problems.map((p) => p.path).sort()).toEqual(['bogus', 'margin']);
    const e = (() => {
      try {
        loadConfig(file('x: !custom 1\n'), {});
      } catch (err) {
        return err as ConfigError;
      }
    })()!;
    expect(e.message).toMatch(/x: custom YAML tags are not allowed: .*line 1, column 4/);
  });

  it('parseConfigText never executes or resolves anything beyond plain YAML', () => {
    expect(parseConfigText('a: &x [1]\nb: *x\n').problems[0]?.path).toBe('a'); // schema: unknown keys, but parsed
    expect(parseConfigText('margin: 2\n')).toEqual({ config: { margin: 2 }, problems: [] });
  });
});

describe('trustProxy (several daemons behind a load balancer)', () => {
  it('defaults to false: the client address is the TCP peer', () => {
    expect(loadConfig(undefined, {}).trustProxy).toBe(false);
  });
  it('takes true, a hop count or a list of proxy addresses', () => {
    expect(loadConfig(file('trustProxy: true\n'), {}).trustProxy).toBe(true);
    expect(loadConfig(file('trustProxy: 2\n'), {}).trustProxy).toBe(2);
    expect(loadConfig(file("trustProxy: '10.0.0.1,10.0.0.2'\n"), {}).trustProxy).toBe('10.0.0.1,10.0.0.2');
  });
  it('refuses anything else, naming the key', () => {
    expect(problemsOf('trustProxy: 0\n').map((p) => p.path)).toContain('trustProxy');
    expect(problemsOf('trustProxy: {a: 1}\n').map((p) => p.path)).toContain('trustProxy');
  });
});
