import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

/**
 * `agw admin prices diff` (issue #29 item 5): where the prices in force differ from the
 * bundled @pydantic/genai-prices data, and where each difference comes from. Reads the
 * config only: no store is needed or created.
 */
const dir = mkdtempSync(join(tmpdir(), 'agw-prices-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('agw admin prices diff', () => {
  it('names the catalog’s own overrides and the config’s, class by class', async () => {
    const config = join(dir, 'agw.yaml');
    writeFileSync(
      config,
      'models:\n  - { provider: openai, model: gpt-4o, inputPer1M: 3 }\n  - { provider: anthropic, model: claude-sonnet-4-5, tiers: [] }\n  - { provider: openai, model: in-house, band: pro, inputPer1M: 1, outputPer1M: 2 }\n',
    );
    const r = await runCli(['admin', 'prices', 'diff', '--data', join(dir, 'data'), '--config', config, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const diff = JSON.parse(r.stdout);
    expect(diff).toMatchObject({ dataVersion: '0.1.8', models: 49, covered: 48 });
    const at = (model: string, price: string) => diff.items.find((i: { model: string; price: string }) => i.model === model && i.price === price);
    expect(at('gpt-4o', 'inputPer1M')).toEqual({ provider: 'openai', model: 'gpt-4o', price: 'inputPer1M', inForce: 3, data: 2.5, source: 'config' });
    expect(at('claude-sonnet-4-5', 'tiers[200000].outputPer1M')).toMatchObject({ inForce: null, data: 22.5, source: 'config' });
    expect(at('deepseek-chat', 'outputPer1M')).toMatchObject({ inForce: 0.42, source: 'catalog' });
    expect(at('in-house', 'model')).toMatchObject({ data: null, source: 'config' });
    expect(at('gpt-4o-mini', 'inputPer1M')).toBeUndefined();
    const human = await runCli(['admin', 'prices', 'diff', '--data', join(dir, 'data')]);
    expect(human.stdout).toMatch(/^@pydantic\/genai-prices 0\.1\.8: 48 of 48 LLM models priced by the data; \d+ difference/);
  });
});
