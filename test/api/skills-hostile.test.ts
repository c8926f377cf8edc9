import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FILE_BYTES, MAX_FILES } from '../../src/shared/bundle/index.js';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { bundle, json, publishForm, publishJson, skillMd, storeSnapshot, type FileSpec } from './skills-helpers.js';

/**
 * Hostile and broken bundles over the real publish endpoint: each fixture breaks exactly one
 * rule, is rejected with the contract's status and code (the rule named in details.problems),
 * and leaves the store and the public catalog exactly as they were.
 */
let td: TestDaemon;
let user: TestUser;
let baseline: Record<string, unknown>;
let catalog: unknown;

const tool = (name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ name, description: `tool ${name}`, parameters: { type: 'object', properties: {} }, ...extra });
const many = (n: number): FileSpec[] => Array.from({ length: n }, (_, i) => ({ path: `assets/f${i}.txt`, content: `${i}` }));

beforeAll(async () => {
  td = await startTestDaemon();
  user = await td.user({ balance: 5 });
  // one good skill, so "unchanged" covers existing rows too
  const ok = await publishJson(td, user.key, { version: '1.0.0', category: 'scene' }, bundle('good-skill'));
  expect(ok.status).toBe(200);
  baseline = await storeSnapshot(td);
  catalog = await json(await td.fetch('/skills'));
});
afterAll(async () => {
  await td?.close();
});

type Send = typeof publishJson;
const senders: [string, Send][] = [
  ['json', publishJson],
  ['multipart', publishForm],
];

async function expectRejected(send: Send, files: FileSpec[], status: number, code: string, rule?: string, path?: string) {
  const res = await send(td, user.key, { version: '9.9.9', category: 'scene' }, files);
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(status);
  expect(body.code).toBe(code);
  expect(typeof body.error).toBe('string');
  if (rule) {
    const problems = body.details.problems as { path: string; rule: string; message: string }[];
    expect(problems.some((p) => p.rule === rule && (path === undefined || p.path === path)), JSON.stringify(problems)).toBe(true);
    // the contract's {path, rule, message}, plus line and column where the problem has a place
    for (const p of problems) {
      expect(Object.keys(p).filter((k) => k !== 'line' && k !== 'column').sort()).toEqual(['message', 'path', 'rule']);
      expect('line' in p).toBe('column' in p);
    }
  }
  expect(await storeSnapshot(td)).toEqual(baseline);
  expect(await json(await td.fetch('/skills'))).toEqual(catalog);
}

describe.each(senders)('hostile bundles (%s)', (_kind, send) => {
  it.each([
    ['traversal', '../escape.md', 'PATH_TRAVERSAL'],
    ['inner traversal', 'assets/../../escape.md', 'PATH_TRAVERSAL'],
    ['absolute', '/etc/passwd', 'ABSOLUTE_PATH'],
    ['drive letter', 'C:/x.md', 'ABSOLUTE_PATH'],
    ['backslash', 'assets\\x.md', 'BACKSLASH_PATH'],
    ['NUL', 'a\u0000b.md', 'CONTROL_CHARACTER'],
    ['bidi override', 'a\u202eb.md', 'CONTROL_CHARACTER'],
    ['empty segment', 'assets//x.md', 'INVALID_PATH'],
    ['dot segment', './x.md', 'INVALID_PATH'],
  ])('%s path → 400 INVALID_BUNDLE %s', async (_name, path, rule) => {
    await expectRejected(send, bundle('good-skill', { path, content: 'x' }), 400, 'INVALID_BUNDLE', rule, path);
  });

  it('case collision → CASE_COLLISION', async () => {
    await expectRejected(send, bundle('good-skill', { path: 'README.md', content: 'a' }, { path: 'readme.md', content: 'b' }), 400, 'INVALID_BUNDLE', 'CASE_COLLISION', 'readme.md');
  });

  it('NFC collision → DUPLICATE_PATH', async () => {
    const files = bundle('good-skill', { path: '\u00e9.md', content: 'a' }, { path: 'e\u0301.md', content: 'b' });
    await expectRejected(send, files, 400, 'INVALID_BUNDLE', 'DUPLICATE_PATH', 'e\u0301.md');
  });

  it('exact duplicate → DUPLICATE_PATH', async () => {
    await expectRejected(send, bundle('good-skill', { path: 'a.md', content: 'a' }, { path: 'a.md', content: 'b' }), 400, 'INVALID_BUNDLE', 'DUPLICATE_PATH', 'a.md');
  });

  it('file that is also a directory → PATH_CONFLICT', async () => {
    await expectRejected(send, bundle('good-skill', { path: 'assets', content: 'a' }, { path: 'assets/x.md', content: 'b' }), 400, 'INVALID_BUNDLE', 'PATH_CONFLICT');
  });

  it(`${MAX_FILES + 1} files → 413 TOO_MANY_FILES`, async () => {
    await expectRejected(send, bundle('good-skill', ...many(MAX_FILES)), 413, 'TOO_MANY_FILES', 'TOO_MANY_FILES');
  });

  it('5 MiB + 1 byte → 413 FILE_TOO_LARGE', async () => {
    const big = Buffer.alloc(MAX_FILE_BYTES + 1, 0x61);
    await expectRejected(send, bundle('good-skill', { path: 'assets/big.bin', content: big }), 413, 'FILE_TOO_LARGE', 'FILE_TOO_LARGE', 'assets/big.bin');
  });

  it('no SKILL.md → 400 MISSING_SKILL_MD', async () => {
    await expectRejected(send, [{ path: 'README.md', content: '# hi' }], 400, 'MISSING_SKILL_MD', 'MISSING_SKILL_MD');
  });

  it('skill.md in the wrong case is not SKILL.md', async () => {
    await expectRejected(send, [{ path: 'skill.md', content: skillMd('good-skill') }], 400, 'MISSING_SKILL_MD', 'MISSING_SKILL_MD');
  });

  it('SKILL.md in a subdirectory is not at the root', async () => {
    await expectRejected(send, [{ path: 'sub/SKILL.md', content: skillMd('good-skill') }], 400, 'MISSING_SKILL_MD');
  });
});

describe.each(senders)('SKILL.md and tool rules (%s)', (_kind, send) => {
  const md = (text: string | Buffer) => [{ path: 'SKILL.md', content: text }];
  it.each([
    ['malformed YAML', '---\nname: [unclosed\ndescription: x\n---\n', 'INVALID_FRONT_MATTER'],
    ['YAML custom tag', '---\nname: !!js/function "function(){}"\ndescription: x\n---\n', 'INVALID_FRONT_MATTER'],
    ['YAML local tag', '---\nname: !custom good-skill\ndescription: x\n---\n', 'INVALID_FRONT_MATTER'],
    ['no front matter', '# just markdown\n', 'INVALID_FRONT_MATTER'],
    ['unclosed front matter', '---\nname: good-skill\ndescription: x\n', 'INVALID_FRONT_MATTER'],
    ['missing name', '---\ndescription: x\n---\n', 'MISSING_NAME'],
    ['invalid name', '---\nname: Bad_Name\ndescription: x\n---\n', 'INVALID_NAME'],
    ['missing description', '---\nname: good-skill\n---\n', 'MISSING_DESCRIPTION'],
    ['non-string description', '---\nname: good-skill\ndescription: [a, b]\n---\n', 'INVALID_DESCRIPTION'],
    ['description too long', `---\nname: good-skill\ndescription: ${'d'.repeat(1025)}\n---\n`, 'DESCRIPTION_TOO_LONG'],
  ])('%s → 400 INVALID_BUNDLE %s', async (_name, text, rule) => {
    await expectRejected(send, md(text), 400, 'INVALID_BUNDLE', rule, 'SKILL.md');
  });

  it('SKILL.md that is not UTF-8 → INVALID_UTF8', async () => {
    await expectRejected(send, md(Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0xff, 0xfe, 0x0a])), 400, 'INVALID_BUNDLE', 'INVALID_UTF8', 'SKILL.md');
  });

  it.each([
    ['tool manifest not JSON', { path: 'tools/a.json', content: '{nope' }, 'INVALID_TOOL_MANIFEST'],
    ['tool manifest without name', { path: 'tools/a.json', content: JSON.stringify({ description: 'd', parameters: { type: 'object' } }) }, 'INVALID_TOOL_MANIFEST'],
    ['tool parameters not an object schema', { path: 'tools/a.json', content: tool('a', { parameters: { type: 'string' } }) }, 'INVALID_TOOL_SCHEMA'],
  ])('%s → %s', async (_name, file, rule) => {
    await expectRejected(send, bundle('good-skill', file), 400, 'INVALID_BUNDLE', rule, file.path);
  });

  it('two tools with one name → DUPLICATE_TOOL_NAME', async () => {
    const files = bundle('good-skill', { path: 'tools/a.json', content: tool('same') }, { path: 'tools/b.json', content: tool('same') });
    await expectRejected(send, files, 400, 'INVALID_BUNDLE', 'DUPLICATE_TOOL_NAME', 'tools/b.json');
  });
});

describe('every problem at once', () => {
  it('lists all problems of a bundle with several faults', async () => {
    const files = [
      { path: 'SKILL.md', content: '---\nname: Bad\ndescription: x\n---\n' },
      { path: '../up.md', content: 'x' },
      { path: '/abs.md', content: 'x' },
    ];
    const res = await publishJson(td, user.key, { version: '9.9.9', category: 'scene' }, files);
    const body = await json(res);
    expect(res.status).toBe(400);
    expect(body.code).toBe('INVALID_BUNDLE');
    const rules = body.details.problems.map((p: { rule: string }) => p.rule).sort();
    expect(rules).toEqual(['ABSOLUTE_PATH', 'INVALID_NAME', 'PATH_TRAVERSAL']);
    expect(await storeSnapshot(td)).toEqual(baseline);
  });

  it('far more files than allowed over multipart is refused early with 413 TOO_MANY_FILES', async () => {
    await expectRejected(publishForm, bundle('good-skill', ...many(MAX_FILES + 60)), 413, 'TOO_MANY_FILES');
  });

  it('JSON base64 that is not base64 → 400 INVALID_REQUEST naming the field', async () => {
    const res = await td.fetch('/skills', {
      method: 'POST',
      key: user.key,
      json: { version: '9.9.9', files: [{ path: 'SKILL.md', content: 'not base64!', encoding: 'base64' }] },
    });
    const body = await json(res);
    expect(res.status).toBe(400);
    expect(body.code).toBe('INVALID_REQUEST');
    expect(body.details.field).toBe('files.0.content');
    expect(await storeSnapshot(td)).toEqual(baseline);
  });
});
