import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { pricesSync } from '../../src/shared/providers/prices.js';
import { snapshotText } from '../helpers/genai-prices-snapshot.js';

/**
 * The catalog's built-in LLM prices come from @pydantic/genai-prices (issue #29 item 5),
 * through a snapshot in src/shared/providers/genai-prices.ts that the provider modules read.
 * This test regenerates the snapshot from the installed package and compares: bumping the
 * package without `npm run prices:sync` (AGW_WRITE_PRICES=1) fails here, and the sync's diff
 * shows every price that moved.
 */
const FILE = fileURLToPath(new URL('../../src/shared/providers/genai-prices.ts', import.meta.url));
const PKG = join(dirname(createRequire(import.meta.url).resolve('@pydantic/genai-prices')), '..', 'package.json');
const VERSION = (JSON.parse(readFileSync(PKG, 'utf8')) as { version: string }).version;

describe('bundled price data', () => {
  it('is the installed package’s data for every LLM model of the catalog', async () => {
    pricesSync.lenient = true; // a model new to the catalog is priced by the snapshot this writes
    const { PROVIDERS } = await import('../../src/shared/providers/index.js');
    const keys = Object.values(PROVIDERS).flatMap((d) => (d.pricing.kind === 'llm' ? d.pricing.models.map((m) => `${d.id}/${m.model}`) : []));
    const text = snapshotText(keys, VERSION);
    if (process.env.AGW_WRITE_PRICES === '1') writeFileSync(FILE, text);
    expect(readFileSync(FILE, 'utf8')).toBe(text);
  });
});
