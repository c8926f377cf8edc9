import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEMPLATE_DESCRIPTION } from '../../src/shared/bundle/index.js';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { json, publishForm, publishJson } from './skills-helpers.js';

/**
 * Validator warnings over the real publish endpoint: they never refuse a publish (a bundle
 * with unknown front-matter fields, a long body or the template's description is published as
 * before), and when a bundle is refused for its problems they travel in details.warnings,
 * apart from details.problems. Also the public category list the CLI checks before uploading.
 */
let td: TestDaemon;
let user: TestUser;

beforeAll(async () => {
  td = await startTestDaemon({ yaml: 'marketplace:\n  categories: [scene, other, tools-x]\n' });
  user = await td.user({ balance: 5 });
});
afterAll(async () => {
  await td?.close();
});

const warned = (name: string) =>
  `---\nname: ${name}\ndescription: ${TEMPLATE_DESCRIPTION}\ndescripton: a typo\nauthor: me\n---\n${'line\n'.repeat(600)}`;

describe.each([['json', publishJson], ['multipart', publishForm]] as const)('publish with warnings (%s)', (kind, send) => {
  it('warnings do not refuse a publish', async () => {
    const res = await send(td, user.key, { version: '1.0.0' }, [{ path: 'SKILL.md', content: warned(`warned-${kind}`) }]);
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
    expect(await json(res)).toEqual({ id: expect.any(Number), version: '1.0.0' });
  });

  it('a refused bundle lists its problems in details.problems and its warnings apart in details.warnings', async () => {
    const res = await send(td, user.key, { version: '1.0.0' }, [{ path: 'SKILL.md', content: '---\nname: Bad_Name\ndescription: d\nlicence: MIT\n---\n' }]);
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.code).toBe('INVALID_BUNDLE');
    expect(body.details.problems).toEqual([{ path: 'SKILL.md', rule: 'INVALID_NAME', message: expect.any(String), line: 2, column: 1 }]);
    expect(body.details.warnings).toEqual([
      { path: 'SKILL.md', rule: 'UNKNOWN_FIELD', message: 'unknown front-matter field "licence"; did you mean "license"?', line: 4, column: 1 },
    ]);
  });
});

describe('GET /api/skills/categories', () => {
  it('answers the configured categories without credentials', async () => {
    const res = await td.fetch('/skills/categories');
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ items: ['scene', 'other', 'tools-x'] });
  });
  it('is in the OpenAPI document', async () => {
    const doc = await json(await td.fetch('/openapi.json'));
    expect(Object.keys(doc.paths)).toContain('/api/skills/categories');
  });
});
