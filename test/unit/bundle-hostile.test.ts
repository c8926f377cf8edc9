import { describe, expect, it } from 'vitest';
import {
  MAX_FILE_BYTES, MAX_FILES, checkPath, parseFrontMatter, validateBundle,
  type BundleEntry, type Problem,
} from '../../src/shared/bundle/index.js';

const file = (path: string, content: string | Buffer = 'x'): BundleEntry => {
  const buf = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  return { path, size: buf.length, kind: 'file', content: buf };
};
const SKILL = file('SKILL.md', '---\nname: safe-skill\ndescription: A safe skill.\n---\nbody\n');
const withSkill = (...extra: BundleEntry[]) => validateBundle([SKILL, ...extra]).problems;
const expectRule = (ps: Problem[], rule: string, path?: string) =>
  expect(ps.some((p) => p.rule === rule && (path === undefined || p.path === path)), JSON.stringify(ps)).toBe(true);

describe('hostile paths', () => {
  it.each([
    ['../x', 'PATH_TRAVERSAL'],
    ['a/../../x', 'PATH_TRAVERSAL'],
    ['..', 'PATH_TRAVERSAL'],
    ['..\\x', 'PATH_TRAVERSAL'],
    ['/etc/passwd', 'ABSOLUTE_PATH'],
    ['//server/share/x', 'ABSOLUTE_PATH'],
    ['C:\\x', 'ABSOLUTE_PATH'],
    ['C:\\x', 'BACKSLASH_PATH'],
    ['c:x', 'ABSOLUTE_PATH'],
    ['a\\b.md', 'BACKSLASH_PATH'],
    ['a\u0000b.md', 'CONTROL_CHARACTER'],
    ['a\nb.md', 'CONTROL_CHARACTER'],
    ['a\u001bb.md', 'CONTROL_CHARACTER'],
    ['a\u007fb.md', 'CONTROL_CHARACTER'],
    ['a\u202eb.md', 'CONTROL_CHARACTER'],
    ['', 'INVALID_PATH'],
    ['a//b', 'INVALID_PATH'],
    ['a/', 'INVALID_PATH'],
    ['./a', 'INVALID_PATH'],
    ['a\ud800.md', 'INVALID_PATH'],
    ['x'.repeat(256), 'INVALID_PATH'],
  ])('%j → %s', (path, rule) => {
    expectRule(checkPath(path), rule, path);
    expectRule(withSkill(file(path)), rule, path);
  });

  it('accepts ordinary relative paths', () => {
    for (const p of ['a.md', 'tools/x.json', 'assets/img/logo.png', '.agwignore', 'a..b.txt', '...', 'ünïcødé/é.md', 'with space.txt']) {
      expect(checkPath(p), p).toEqual([]);
    }
  });

  it('case collision A.md / a.md', () => {
    const ps = withSkill(file('A.md'), file('a.md'));
    expectRule(ps, 'CASE_COLLISION', 'a.md');
    expect(ps).toHaveLength(1);
  });
  it('case collision against SKILL.md itself', () => {
    expectRule(withSkill(file('skill.md')), 'CASE_COLLISION', 'skill.md');
  });
  it('NFC collision e\\u0301.md vs \\u00e9.md', () => {
    const ps = withSkill(file('\u00e9.md'), file('e\u0301.md'));
    expectRule(ps, 'DUPLICATE_PATH', 'e\u0301.md');
    expect(ps).toHaveLength(1);
  });
  it('exact duplicate', () => {
    expectRule(withSkill(file('x.md'), file('x.md')), 'DUPLICATE_PATH', 'x.md');
  });
  it('file that is also a directory', () => {
    expectRule(withSkill(file('docs'), file('Docs/a.md')), 'PATH_CONFLICT', 'docs');
  });
});

describe('hostile sizes and entry kinds', () => {
  it(`${MAX_FILES + 1} files → TOO_MANY_FILES, ${MAX_FILES} files are fine`, () => {
    const many = (n: number) => Array.from({ length: n - 1 }, (_, i) => file(`f/${i}.txt`));
    expectRule(withSkill(...many(MAX_FILES + 1)), 'TOO_MANY_FILES', '.');
    expect(withSkill(...many(MAX_FILES))).toEqual([]);
  });
  it('5 MB + 1 byte → FILE_TOO_LARGE, exactly 5 MB is fine', () => {
    expectRule(withSkill(file('big.bin', Buffer.alloc(MAX_FILE_BYTES + 1))), 'FILE_TOO_LARGE', 'big.bin');
    expect(withSkill(file('big.bin', Buffer.alloc(MAX_FILE_BYTES)))).toEqual([]);
  });
  it('size is trusted from the entry even without content, and content cannot understate it', () => {
    expectRule(withSkill({ path: 'big.bin', size: MAX_FILE_BYTES + 1, kind: 'file' }), 'FILE_TOO_LARGE');
    const lying = { ...file('lie.bin', Buffer.alloc(MAX_FILE_BYTES + 1)), size: 10 };
    expectRule(withSkill(lying), 'FILE_TOO_LARGE', 'lie.bin');
  });
  it('oversized SKILL.md is reported, not parsed', () => {
    const big = Buffer.concat([Buffer.from('---\nname: x\n'), Buffer.alloc(MAX_FILE_BYTES)]);
    const ps = validateBundle([file('SKILL.md', big)]).problems;
    expect(ps.map((p) => p.rule)).toEqual(['FILE_TOO_LARGE']);
  });
  it.each(['symlink', 'other'] as const)('%s entries → NOT_REGULAR_FILE', (kind) => {
    expectRule(withSkill({ path: 'x', size: 0, kind }), 'NOT_REGULAR_FILE', 'x');
  });
  it('a symlinked SKILL.md is not read', () => {
    const ps = validateBundle([{ path: 'SKILL.md', size: 9, kind: 'symlink' }]).problems;
    expectRule(ps, 'NOT_REGULAR_FILE', 'SKILL.md');
  });
  it('directory entries are path-checked too', () => {
    expectRule(withSkill({ path: '../evil/', size: 0, kind: 'directory' }), 'PATH_TRAVERSAL');
  });
});

describe('hostile front matter', () => {
  const fm = (text: string) => validateBundle([file('SKILL.md', text)]).problems;
  const only = (ps: Problem[], rule: string) => {
    expectRule(ps, rule, 'SKILL.md');
    expect(new Set(ps.map((p) => p.rule))).toEqual(new Set([rule]));
  };

  it('malformed YAML', () => {
    only(fm('---\nname: [unclosed\ndescription: x\n---\n'), 'INVALID_FRONT_MATTER');
    only(fm('---\nname: a\n  bad: indent\n---\n'), 'INVALID_FRONT_MATTER');
    only(fm('---\nname: a\nname: b\ndescription: d\n---\n'), 'INVALID_FRONT_MATTER');
  });
  it('!!js/function is a problem, not executed', () => {
    only(fm('---\nname: !!js/function "function(){ globalThis.pwned = 1 }"\ndescription: d\n---\n'), 'INVALID_FRONT_MATTER');
    expect((globalThis as Record<string, unknown>).pwned).toBeUndefined();
  });
  it('custom tags (!custom, !<tag:x>, !!binary, !!set) are problems', () => {
    for (const tag of ['!custom x', '!<tag:example.com,2000:x> y', '!!binary aGVsbG8=', '!!set {a}', '!!python/object:os.system x']) {
      only(fm(`---\nname: my-skill\ndescription: ${tag}\n---\n`), 'INVALID_FRONT_MATTER');
    }
  });
  it('core tags are fine', () => {
    expect(fm('---\nname: !!str my-skill\ndescription: !!str d\n---\n')).toEqual([]);
  });
  it('---js / ---json / ---toml engines are refused', () => {
    only(fm('---js\n({ name: "x", description: require("fs").readFileSync("/etc/passwd","utf8") })\n---\n'), 'INVALID_FRONT_MATTER');
    only(fm('---json\n{"name":"x","description":"d"}\n---\n'), 'INVALID_FRONT_MATTER');
    only(fm('+++\nname = "x"\n+++\n'), 'INVALID_FRONT_MATTER');
  });
  it('unclosed, missing and non-mapping front matter', () => {
    only(fm('---\nname: x\n'), 'INVALID_FRONT_MATTER');
    only(fm('# Title\n---\nname: x\n---\n'), 'INVALID_FRONT_MATTER');
    only(fm('---\n- a\n- b\n---\n'), 'INVALID_FRONT_MATTER');
    only(fm('---\njust a string\n---\n'), 'INVALID_FRONT_MATTER');
  });
  it('alias bombs are refused', () => {
    const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i++) lines.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`);
    only(fm(`---\n${lines.join('\n')}\nname: my-skill\ndescription: d\n---\n`), 'INVALID_FRONT_MATTER');
  });
  it('deeply nested or oversized front matter is refused before parsing (no stack exhaustion)', () => {
    for (const n of [1_000, 10_000, 32_000]) {
      only(fm(`---\nname: ${'['.repeat(n)}${']'.repeat(n)}\ndescription: d\n---\n`), 'INVALID_FRONT_MATTER');
    }
    only(fm(`---\nname: my-skill\ndescription: d\nx:\n  ${'- '.repeat(100)}a\n---\n`), 'INVALID_FRONT_MATTER');
    only(fm(`---\nname: my-skill\ndescription: d\npad: ${'p'.repeat(70_000)}\n---\n`), 'INVALID_FRONT_MATTER');
  });
  it('ordinary nested metadata is fine', () => {
    expect(fm('---\nname: my-skill\ndescription: Tools - pdf - docx - xlsx - csv\nlicense: MIT\nmetadata:\n  author: me\n  tags: [a, b]\nallowed-tools:\n  - Bash\n  - Read\n---\n')).toEqual([]);
  });
  it('deeply nested tool manifests are refused before ajv recurses', () => {
    for (const n of [100, 100_000]) {
      const deep = `{"name":"t","description":"d","parameters":{"type":"object","properties":{"a":${'{"items":'.repeat(n)}{}${'}'.repeat(n)}}}}`;
      expectRule(withSkill(file('tools/t.json', deep)), 'INVALID_TOOL_MANIFEST', 'tools/t.json');
    }
  });
  it('__proto__ keys do not pollute prototypes', () => {
    const r = parseFrontMatter('---\n__proto__: {polluted: yes}\nname: my-skill\ndescription: d\n---\n');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(r.data)).toBe(Object.prototype);
  });
  it('BOM and CRLF are accepted; body is returned', () => {
    const r = parseFrontMatter('\uFEFF---\r\nname: my-skill\r\ndescription: d\r\n---\r\n# Hello\r\n');
    expect(r.problems).toEqual([]);
    expect(r.data).toEqual({ name: 'my-skill', description: 'd' });
    expect(r.body.trim()).toBe('# Hello');
  });
  it('non-UTF-8 tool manifest → INVALID_UTF8', () => {
    expectRule(withSkill(file('tools/t.json', Buffer.from([0x7b, 0xc3, 0x28, 0x7d]))), 'INVALID_UTF8', 'tools/t.json');
  });
});
