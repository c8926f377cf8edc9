import { describe, expect, it } from 'vitest';
import {
  MAX_FILE_BYTES, RULES, bundleErrorCode, bundleErrorStatus, validateBundle,
  type BundleEntry, type Problem,
} from '../../src/shared/bundle/index.js';

const file = (path: string, content: string | Buffer): BundleEntry => {
  const buf = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  return { path, size: buf.length, kind: 'file', content: buf };
};
const skillMd = (fm = 'name: my-skill\ndescription: Does things.', body = '# Body\n') => `---\n${fm}\n---\n${body}`;
const tool = (m: unknown) => JSON.stringify(m);
const goodTool = { name: 'lookup', description: 'Look things up', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } };
const valid = (): BundleEntry[] => [
  file('SKILL.md', skillMd()),
  file('README.md', '# readme'),
  file('tools/lookup.json', tool(goodTool)),
  file('scripts/run.sh', '#!/bin/sh\necho hi\n'),
];
const rulesOf = (ps: Problem[]) => ps.map((p) => p.rule);
const has = (ps: Problem[], rule: string, path?: string) =>
  expect(ps.some((p) => p.rule === rule && (path === undefined || p.path === path)), JSON.stringify(ps)).toBe(true);

describe('validateBundle: valid bundle', () => {
  it('yields no problems and the meta', () => {
    const r = validateBundle(valid());
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.meta).toEqual({ name: 'my-skill', description: 'Does things.' });
  });
  it('accepts directory entries (trailing slash) without counting them as files', () => {
    const r = validateBundle([...valid(), { path: 'tools/', size: 0, kind: 'directory' }, { path: 'assets', size: 0, kind: 'directory' }]);
    expect(r.problems).toEqual([]);
  });
  it('every problem has path, rule and message with a known UPPER_SNAKE rule', () => {
    const r = validateBundle([file('../x', 'x'), file('tools/a.json', '{')]);
    expect(r.problems.length).toBeGreaterThan(0);
    for (const p of r.problems) {
      expect(RULES).toContain(p.rule);
      expect(p.rule).toMatch(/^[A-Z][A-Z0-9_]*$/);
      expect(typeof p.path).toBe('string');
      expect(p.message.length).toBeGreaterThan(0);
    }
  });
});

// One fixture per rule: each breaks exactly that rule (on top of the valid bundle).
const cases: Array<[rule: string, path: string, mutate: (b: BundleEntry[]) => BundleEntry[]]> = [
  ['MISSING_SKILL_MD', 'SKILL.md', (b) => b.filter((e) => e.path !== 'SKILL.md')],
  ['INVALID_PATH', 'a//b.md', (b) => [...b, file('a//b.md', 'x')]],
  ['PATH_TRAVERSAL', 'a/../b.md', (b) => [...b, file('a/../b.md', 'x')]],
  ['ABSOLUTE_PATH', '/etc/passwd', (b) => [...b, file('/etc/passwd', 'x')]],
  ['BACKSLASH_PATH', 'docs\\a.md', (b) => [...b, file('docs\\a.md', 'x')]],
  ['CONTROL_CHARACTER', 'a\u0007.md', (b) => [...b, file('a\u0007.md', 'x')]],
  ['DUPLICATE_PATH', 'README.md', (b) => [...b, file('README.md', 'again')]],
  ['CASE_COLLISION', 'readme.md', (b) => [...b, file('readme.md', 'x')]],
  ['PATH_CONFLICT', 'scripts', (b) => [...b, file('scripts', 'x')]],
  ['TOO_MANY_FILES', '.', (b) => [...b, ...Array.from({ length: 200 - b.length + 1 }, (_, i) => file(`assets/f${i}.txt`, 'x'))]],
  ['FILE_TOO_LARGE', 'assets/big.bin', (b) => [...b, file('assets/big.bin', Buffer.alloc(MAX_FILE_BYTES + 1))]],
  ['BUNDLE_TOO_LARGE', '.', (b) => [...b, ...Array.from({ length: 13 }, (_, i): BundleEntry => ({ path: `assets/b${i}.bin`, size: MAX_FILE_BYTES, kind: 'file' }))]],
  ['NOT_REGULAR_FILE', 'link', (b) => [...b, { path: 'link', size: 4, kind: 'symlink' }]],
  ['INVALID_UTF8', 'SKILL.md', (b) => [file('SKILL.md', Buffer.concat([Buffer.from(skillMd()), Buffer.from([0xff, 0xfe])])), ...b.slice(1)]],
  ['INVALID_FRONT_MATTER', 'SKILL.md', (b) => [file('SKILL.md', '# no front matter\n'), ...b.slice(1)]],
  ['MISSING_NAME', 'SKILL.md', (b) => [file('SKILL.md', skillMd('description: Does things.')), ...b.slice(1)]],
  ['INVALID_NAME', 'SKILL.md', (b) => [file('SKILL.md', skillMd('name: My_Skill\ndescription: Does things.')), ...b.slice(1)]],
  ['MISSING_DESCRIPTION', 'SKILL.md', (b) => [file('SKILL.md', skillMd('name: my-skill')), ...b.slice(1)]],
  ['INVALID_DESCRIPTION', 'SKILL.md', (b) => [file('SKILL.md', skillMd('name: my-skill\ndescription: [a, b]')), ...b.slice(1)]],
  ['DESCRIPTION_TOO_LONG', 'SKILL.md', (b) => [file('SKILL.md', skillMd(`name: my-skill\ndescription: ${'d'.repeat(1025)}`)), ...b.slice(1)]],
  ['INVALID_LICENSE', 'SKILL.md', (b) => [file('SKILL.md', skillMd('name: my-skill\ndescription: Does things.\nlicense: [MIT]')), ...b.slice(1)]],
  ['INVALID_COMPATIBILITY', 'SKILL.md', (b) => [file('SKILL.md', skillMd(`name: my-skill\ndescription: Does things.\ncompatibility: ${'c'.repeat(501)}`)), ...b.slice(1)]],
  ['INVALID_METADATA', 'SKILL.md', (b) => [file('SKILL.md', skillMd('name: my-skill\ndescription: Does things.\nmetadata: just text')), ...b.slice(1)]],
  ['INVALID_ALLOWED_TOOLS', 'SKILL.md', (b) => [file('SKILL.md', skillMd('name: my-skill\ndescription: Does things.\nallowed-tools: {Bash: yes}')), ...b.slice(1)]],
  ['INVALID_TOOL_MANIFEST', 'tools/bad.json', (b) => [...b, file('tools/bad.json', tool({ name: 'bad', parameters: { type: 'object' } }))]],
  ['INVALID_TOOL_SCHEMA', 'tools/bad.json', (b) => [...b, file('tools/bad.json', tool({ ...goodTool, name: 'bad', parameters: { type: 'object', properties: { a: { type: 'strin' } } } }))]],
  ['DUPLICATE_TOOL_NAME', 'tools/again.json', (b) => [...b, file('tools/again.json', tool(goodTool))]],
];

describe('validateBundle: one fixture per rule', () => {
  it('covers every rule code', () => {
    expect(new Set(cases.map((c) => c[0]))).toEqual(new Set(RULES));
  });
  it.each(cases)('%s at %s', (rule, path, mutate) => {
    const r = validateBundle(mutate(valid()));
    expect(r.ok).toBe(false);
    has(r.problems, rule, path);
    expect(new Set(rulesOf(r.problems)), JSON.stringify(r.problems)).toEqual(new Set([rule]));
  });
});

describe('validateBundle: tool manifests', () => {
  const problemsOf = (m: unknown) => validateBundle([...valid(), file('tools/t.json', typeof m === 'string' ? m : tool(m))]).problems;
  it('rejects invalid JSON, non-objects and missing fields', () => {
    has(problemsOf('{not json'), 'INVALID_TOOL_MANIFEST', 'tools/t.json');
    has(problemsOf([1, 2]), 'INVALID_TOOL_MANIFEST', 'tools/t.json');
    has(problemsOf({ description: 'd', parameters: { type: 'object' } }), 'INVALID_TOOL_MANIFEST');
    has(problemsOf({ name: 'has space', description: 'd', parameters: { type: 'object' } }), 'INVALID_TOOL_MANIFEST');
    has(problemsOf({ name: 'n', description: 'd' }), 'INVALID_TOOL_MANIFEST');
  });
  it('requires type object and required ⊆ properties', () => {
    has(problemsOf({ name: 'n', description: 'd', parameters: { type: 'string' } }), 'INVALID_TOOL_SCHEMA');
    has(problemsOf({ name: 'n', description: 'd', parameters: { type: 'object', properties: { a: {} }, required: ['a', 'b'] } }), 'INVALID_TOOL_SCHEMA');
    has(problemsOf({ name: 'n', description: 'd', parameters: { type: 'object', required: 'a' } }), 'INVALID_TOOL_SCHEMA');
    has(problemsOf({ name: 'n', description: 'd', parameters: { type: 'object', properties: { a: { pattern: '(' } } } }), 'INVALID_TOOL_SCHEMA');
    has(problemsOf({ name: 'n', description: 'd', parameters: { type: 'object', $schema: 'http://example.com/s' } }), 'INVALID_TOOL_SCHEMA');
  });
  it('accepts ordinary schemas: formats, unknown keywords, $defs/$ref, draft-07 and 2020-12, same $id twice', () => {
    const ok = [
      { type: 'object', properties: { e: { type: 'string', format: 'email' }, d: { type: 'string', format: 'date-time' } }, 'x-ui': 1 },
      { $schema: 'http://json-schema.org/draft-07/schema#', $id: 'same', type: 'object', definitions: { p: { type: 'number' } }, properties: { p: { $ref: '#/definitions/p' } } },
      { $schema: 'https://json-schema.org/draft/2020-12/schema', $id: 'same', type: 'object', $defs: { p: { type: 'number' } }, properties: { p: { $ref: '#/$defs/p' } } },
    ];
    const entries = ok.map((parameters, i) => file(`tools/t${i}.json`, tool({ name: `t${i}`, description: 'd', parameters })));
    expect(validateBundle([...valid(), ...entries]).problems).toEqual([]);
    expect(validateBundle([...valid(), ...entries]).problems).toEqual([]); // module-level ajv keeps no state
  });
  it('only direct children tools/*.json are manifests', () => {
    expect(validateBundle([...valid(), file('tools/data/x.json', '[1]'), file('tools/notes.txt', 'x')]).problems).toEqual([]);
  });
});

describe('validateBundle: every problem at once', () => {
  it('reports three different faults together', () => {
    const r = validateBundle([
      file('SKILL.md', skillMd('name: Bad--Name\ndescription: ok')),
      file('../escape.txt', 'x'),
      file('tools/t.json', tool({ name: 't', description: 'd', parameters: { type: 'object', required: ['nope'] } })),
    ]);
    expect(r.problems).toHaveLength(3);
    expect(new Set(rulesOf(r.problems))).toEqual(new Set(['INVALID_NAME', 'PATH_TRAVERSAL', 'INVALID_TOOL_SCHEMA']));
  });
  it('reports name and description problems together', () => {
    const r = validateBundle([file('SKILL.md', skillMd(`name: -x\ndescription: ''`))]);
    expect(new Set(rulesOf(r.problems))).toEqual(new Set(['INVALID_NAME', 'MISSING_DESCRIPTION']));
  });
});

describe('bundleErrorCode', () => {
  const p = (rule: string): Problem => ({ path: 'x', rule, message: 'm' });
  it('prefers the 413 codes, then MISSING_SKILL_MD alone, else INVALID_BUNDLE', () => {
    expect(bundleErrorCode([p('MISSING_SKILL_MD'), p('TOO_MANY_FILES')])).toBe('TOO_MANY_FILES');
    expect(bundleErrorCode([p('INVALID_PATH'), p('FILE_TOO_LARGE')])).toBe('FILE_TOO_LARGE');
    expect(bundleErrorCode([p('FILE_TOO_LARGE'), p('TOO_MANY_FILES')])).toBe('TOO_MANY_FILES');
    expect(bundleErrorCode([p('MISSING_SKILL_MD')])).toBe('MISSING_SKILL_MD');
    expect(bundleErrorCode([p('MISSING_SKILL_MD'), p('PATH_TRAVERSAL')])).toBe('INVALID_BUNDLE');
    expect(bundleErrorCode([p('INVALID_NAME')])).toBe('INVALID_BUNDLE');
    expect(bundleErrorStatus('TOO_MANY_FILES')).toBe(413);
    expect(bundleErrorStatus('FILE_TOO_LARGE')).toBe(413);
    expect(bundleErrorStatus('INVALID_BUNDLE')).toBe(400);
  });
  it('maps real validation results', () => {
    expect(bundleErrorCode(validateBundle([file('README.md', 'x')]).problems)).toBe('MISSING_SKILL_MD');
    expect(bundleErrorCode(validateBundle([file('SKILL.md', 'x')]).problems)).toBe('INVALID_BUNDLE');
  });
});
