import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

/** The tiers table mirrors the configured tiers (config is the source of truth), on start. */
describe('tiers table', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startTestDaemon({ yaml: 'tiers:\n  pro: { displayName: Pro Plus }\n  studio: { displayName: Studio, bands: [lite, standard] }\n' });
  });
  afterAll(() => d?.close());

  it('holds every configured tier with its display name', async () => {
    const rows = await d.daemon.ctx.db.all<{ id: string; display_name: string }>('SELECT id, display_name FROM tiers ORDER BY id');
    expect(rows.map((r) => [r.id, r.display_name])).toEqual([
      ['enterprise', 'Enterprise'],
      ['free', 'Free'],
      ['pro', 'Pro Plus'],
      ['studio', 'Studio'],
      ['team', 'Team'],
    ]);
  });
});
