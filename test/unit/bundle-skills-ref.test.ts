/**
 * Our front-matter verdicts against the reference Agent Skills validator (skills-ref).
 * Each case is written as a real skill directory (named like the skill, since skills-ref also
 * requires directory name == skill name) and both validators judge it. Only the rules both
 * implement are compared (name, description, compatibility); skills-ref's directory-name and
 * allowed-fields checks are warnings here (NAME_DIRECTORY_MISMATCH, UNKNOWN_FIELD), pinned below.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validate as refValidate } from 'skills-ref';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBundleDir, validateBundle } from '../../src/shared/bundle/index.js';

const NAME_DESC_RULES = new Set(['MISSING_NAME', 'INVALID_NAME', 'MISSING_DESCRIPTION', 'INVALID_DESCRIPTION', 'DESCRIPTION_TOO_LONG', 'INVALID_COMPATIBILITY']);
const SHARED = /name|description|compatibility/i;
const REF_ONLY = /^Directory name|^Unexpected fields/;

let root: string;
let seq = 0;
beforeAll(async () => { root = await mkdtemp(join(tmpdir(), 'agw-skills-ref-')); });
afterAll(async () => { await rm(root, { recursive: true, force: true }); });

async function judge(frontMatter: string, dirName: string) {
  const dir = join(root, String(seq++), dirName.replace(/[/\\]/g, '-') || 'x');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'SKILL.md'), `---\n${frontMatter}\n---\n# Body\n`);
  const refProblems = (await refValidate(dir)).filter((m) => SHARED.test(m) && !REF_ONLY.test(m));
  const ours = validateBundle(await readBundleDir(dir)).problems;
  expect(ours.filter((p) => !NAME_DESC_RULES.has(p.rule)), JSON.stringify(ours)).toEqual([]);
  return { ref: refProblems.length === 0, ours: ours.length === 0, refProblems, ourRules: ours.map((p) => p.rule) };
}

const D = 'description: A fine description.';
const N = 'name: good-name';
const cases: Array<[label: string, frontMatter: string, dirName: string, valid: boolean]> = [
  ['simple name', `${N}\n${D}`, 'good-name', true],
  ['single letter', `name: a\n${D}`, 'a', true],
  ['digits only', `name: '123'\n${D}`, '123', true],
  ['letters and digits', `name: pdf2text-v2\n${D}`, 'pdf2text-v2', true],
  ['64 chars', `name: ${'a'.repeat(64)}\n${D}`, 'a'.repeat(64), true],
  ['65 chars', `name: ${'a'.repeat(65)}\n${D}`, 'a'.repeat(65), false],
  ['64 chars with hyphens', `name: ${'ab-'.repeat(21)}a\n${D}`, `${'ab-'.repeat(21)}a`, true],
  ['uppercase', `name: Good-Name\n${D}`, 'Good-Name', false],
  ['all caps', `name: PDF\n${D}`, 'PDF', false],
  ['leading hyphen', `name: -name\n${D}`, '-name', false],
  ['trailing hyphen', `name: name-\n${D}`, 'name-', false],
  ['double hyphen', `name: a--b\n${D}`, 'a--b', false],
  ['underscore', `name: a_b\n${D}`, 'a_b', false],
  ['space', `name: a b\n${D}`, 'a b', false],
  ['dot', `name: a.b\n${D}`, 'a.b', false],
  ['slash', `name: a/b\n${D}`, 'a-b', false],
  ['empty name', `name: ''\n${D}`, 'x', false],
  ['blank name', `name: '   '\n${D}`, 'x', false],
  ['missing name', D, 'x', false],
  ['missing description', N, 'good-name', false],
  ['empty description', `${N}\ndescription: ''`, 'good-name', false],
  ['blank description', `${N}\ndescription: '  '`, 'good-name', false],
  ['1024-char description', `${N}\ndescription: ${'d'.repeat(1024)}`, 'good-name', true],
  ['1025-char description', `${N}\ndescription: ${'d'.repeat(1025)}`, 'good-name', false],
  ['multi-line description', `${N}\ndescription: >\n  line one\n  line two`, 'good-name', true],
  ['description with unicode', `${N}\ndescription: Résumé helper — für alle`, 'good-name', true],
  ['both missing', 'license: MIT', 'x', false],
  ['500-char compatibility', `${N}\n${D}\ncompatibility: ${'c'.repeat(500)}`, 'good-name', true],
  ['501-char compatibility', `${N}\n${D}\ncompatibility: ${'c'.repeat(501)}`, 'good-name', false],
  ['compatibility not a string', `${N}\n${D}\ncompatibility: [a, b]`, 'good-name', false],
  ['the specification example with optional fields', 'name: pdf-processing\ndescription: Extract PDF text, fill forms, merge files. Use when handling PDFs.\nlicense: Apache-2.0\nmetadata:\n  author: example-org\n  version: "1.0"', 'pdf-processing', true],
  ['every optional field', `${N}\n${D}\nlicense: MIT\ncompatibility: Requires git\nmetadata:\n  author: me\nallowed-tools: Bash(git:*) Read`, 'good-name', true],
];

describe('name/description rules agree with skills-ref', () => {
  it.each(cases)('%s', async (_label, frontMatter, dirName, expected) => {
    const v = await judge(frontMatter, dirName);
    expect({ ours: v.ours, ref: v.ref }, JSON.stringify(v)).toEqual({ ours: expected, ref: expected });
  });
});

// Where skills-ref is more permissive than the marketplace (which turns names into slugs).
// These pin the known, intended differences so a change on either side is noticed.
describe('known differences (agw is stricter)', () => {
  it.each([
    ['non-ASCII letters (skills-ref allows Unicode letters)', `name: café\n${D}`, 'café'],
    ['CJK name', `name: 技能\n${D}`, '技能'],
    ['surrounding spaces in a quoted name (skills-ref trims)', `name: ' good-name '\n${D}`, 'good-name'],
    ['numeric name (skills-ref stringifies)', `name: 123\n${D}`, '123'],
    ['numeric description (skills-ref stringifies)', `${N}\ndescription: 42`, 'good-name'],
    ['empty compatibility (the specification says 1-500 characters; skills-ref accepts "")', `${N}\n${D}\ncompatibility: ''`, 'good-name'],
  ])('%s', async (_label, frontMatter, dirName) => {
    const v = await judge(frontMatter, dirName);
    expect({ ours: v.ours, ref: v.ref }, JSON.stringify(v)).toEqual({ ours: false, ref: true });
  });
});

// Where skills-ref refuses and agw only warns (the marketplace publishes such bundles).
describe('skills-ref errors that are agw warnings', () => {
  it.each([
    ['an unknown field', `${N}\n${D}\ndescripton: typo`, 'good-name', 'UNKNOWN_FIELD', /^Unexpected fields in frontmatter: descripton/],
    ['a folder not named after the skill', `${N}\n${D}`, 'other-dir', 'NAME_DIRECTORY_MISMATCH', /^Directory name 'other-dir' must match/],
  ])('%s', async (_label, frontMatter, dirName, warning, refMessage) => {
    const dir = join(root, String(seq++), dirName);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'SKILL.md'), `---\n${frontMatter}\n---\n# Body\n`);
    expect(await refValidate(dir)).toEqual([expect.stringMatching(refMessage)]);
    const ours = validateBundle(await readBundleDir(dir), { dirName });
    expect(ours.ok).toBe(true);
    expect(ours.warnings.map((w) => w.rule)).toEqual([warning]);
  });
});

// Rules of the specification skills-ref does not check, where agw warns (the bundle stays valid on both).
describe('what skills-ref does not check and agw warns about', () => {
  it.each([
    ['allowed-tools as a YAML list (the specification: a space-delimited string)', `${N}\n${D}\nallowed-tools:\n  - Read\n  - Bash(git:*)`, 'ALLOWED_TOOLS_LIST'],
    ['a metadata value that is not a string (skills-ref stringifies it)', `${N}\n${D}\nmetadata:\n  version: 1.0`, 'METADATA_NOT_STRING'],
  ])('%s', async (_label, frontMatter, warning) => {
    const dir = join(root, String(seq++), 'good-name');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'SKILL.md'), `---\n${frontMatter}\n---\n# Body\n`);
    expect(await refValidate(dir)).toEqual([]);
    const ours = validateBundle(await readBundleDir(dir), { dirName: 'good-name' });
    expect(ours.ok).toBe(true);
    expect(ours.warnings.map((w) => w.rule)).toEqual([warning]);
  });
});
