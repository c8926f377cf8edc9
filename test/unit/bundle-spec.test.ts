/**
 * The validator against the Agent Skills specification (agentskills.io, docs/specification.mdx):
 * the specification's own examples, every front-matter rule, the warnings (unknown fields with
 * a did-you-mean, a body over 500 lines, the template's placeholder, a folder not named after
 * the skill) and problems placed at line:column instead of an offset.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  RULES, TEMPLATE_DESCRIPTION, WARNING_RULES, didYouMean, validateBundle, type BundleEntry, type Problem,
} from '../../src/shared/bundle/index.js';

const file = (path: string, content: string): BundleEntry => ({ path, size: Buffer.byteLength(content), kind: 'file', content: Buffer.from(content) });
const skill = (frontMatter: string, body = '# Body\n', opts?: { dirName?: string }) =>
  validateBundle([file('SKILL.md', `---\n${frontMatter}\n---\n${body}`)], opts);
const rules = (ps: Problem[]) => ps.map((p) => p.rule);
const D = 'description: A fine description.';

describe('the specification’s own examples', () => {
  it('the minimal example is valid', () => {
    const r = skill('name: skill-name\ndescription: A description of what this skill does and when to use it.', '', { dirName: 'skill-name' });
    expect({ problems: r.problems, warnings: r.warnings }).toEqual({ problems: [], warnings: [] });
  });
  it('the example with optional fields is valid', () => {
    const r = skill('name: pdf-processing\ndescription: Extract PDF text, fill forms, merge files. Use when handling PDFs.\nlicense: Apache-2.0\nmetadata:\n  author: example-org\n  version: "1.0"');
    expect({ problems: r.problems, warnings: r.warnings }).toEqual({ problems: [], warnings: [] });
  });
  it.each(['pdf-processing', 'data-analysis', 'code-review'])('valid name %s', (name) => {
    expect(skill(`name: ${name}\n${D}`).problems).toEqual([]);
  });
  it.each(['PDF-Processing', '-pdf', 'pdf--processing'])('invalid name %s', (name) => {
    expect(rules(skill(`name: ${name}\n${D}`).problems)).toEqual(['INVALID_NAME']);
  });
  it('the good and the poor description examples are both valid (quality is advice)', () => {
    expect(skill('name: pdf\ndescription: Extracts text and tables from PDF files, fills PDF forms, and merges multiple PDFs. Use when working with PDF documents or when the user mentions PDFs, forms, or document extraction.').problems).toEqual([]);
    expect(skill('name: pdf\ndescription: Helps with PDFs.').problems).toEqual([]);
  });
  it('the license, compatibility, metadata and allowed-tools examples are valid', () => {
    for (const fm of [
      'license: Proprietary. LICENSE.txt has complete terms',
      'compatibility: Designed for Claude Code (or similar products)',
      'compatibility: Requires git, docker, jq, and access to the internet',
      'compatibility: Requires Python 3.14+ and uv',
      'metadata:\n  author: example-org\n  version: "1.0"',
      'allowed-tools: Bash(git:*) Bash(jq:*) Read',
    ]) {
      const r = skill(`name: my-skill\n${D}\n${fm}`);
      expect({ fm, problems: r.problems, warnings: r.warnings }).toEqual({ fm, problems: [], warnings: [] });
    }
  });
});

describe('front-matter rules', () => {
  it('name: 1-64 characters', () => {
    expect(skill(`name: ${'a'.repeat(64)}\n${D}`).problems).toEqual([]);
    expect(rules(skill(`name: ${'a'.repeat(65)}\n${D}`).problems)).toEqual(['INVALID_NAME']);
    expect(rules(skill(`name: ''\n${D}`).problems)).toEqual(['MISSING_NAME']);
  });
  it('description: 1-1024 characters', () => {
    expect(skill(`name: a\ndescription: ${'d'.repeat(1024)}`).problems).toEqual([]);
    expect(rules(skill(`name: a\ndescription: ${'d'.repeat(1025)}`).problems)).toEqual(['DESCRIPTION_TOO_LONG']);
    expect(rules(skill('name: a\ndescription: ""').problems)).toEqual(['MISSING_DESCRIPTION']);
  });
  it('compatibility: 1-500 characters when given', () => {
    expect(skill(`name: a\n${D}\ncompatibility: ${'c'.repeat(500)}`).problems).toEqual([]);
    expect(rules(skill(`name: a\n${D}\ncompatibility: ${'c'.repeat(501)}`).problems)).toEqual(['INVALID_COMPATIBILITY']);
    expect(rules(skill(`name: a\n${D}\ncompatibility: ''`).problems)).toEqual(['INVALID_COMPATIBILITY']);
    expect(rules(skill(`name: a\n${D}\ncompatibility: [a]`).problems)).toEqual(['INVALID_COMPATIBILITY']);
  });
  it('license: a string', () => {
    expect(skill(`name: a\n${D}\nlicense: MIT`).problems).toEqual([]);
    expect(rules(skill(`name: a\n${D}\nlicense: {name: MIT}`).problems)).toEqual(['INVALID_LICENSE']);
  });
  it('metadata: a mapping of strings; other scalar values are a warning that says to quote them', () => {
    expect(rules(skill(`name: a\n${D}\nmetadata: [a, b]`).problems)).toEqual(['INVALID_METADATA']);
    const r = skill(`name: a\n${D}\nmetadata:\n  version: 1.0\n  stable: true`);
    expect(r.ok).toBe(true);
    expect(r.warnings).toEqual([expect.objectContaining({ rule: 'METADATA_NOT_STRING', line: 4, column: 1 })]);
    expect(r.warnings[0].message).toContain('quote the value of version, stable');
  });
  it('allowed-tools: a space-delimited string; a list of strings is a warning (Claude Code reads it, the specification asks for the string)', () => {
    expect(skill(`name: a\n${D}\nallowed-tools: Read`).problems).toEqual([]);
    const list = skill(`name: a\n${D}\nallowed-tools:\n  - Bash(git:*)\n  - Read`);
    expect(list.ok).toBe(true);
    expect(list.warnings).toEqual([expect.objectContaining({ rule: 'ALLOWED_TOOLS_LIST', line: 4, column: 1, message: expect.stringContaining('"Bash(git:*) Read"') })]);
    for (const bad of ['42', "''", '[]', '[Read, 3]', '{Bash: yes}']) {
      expect(rules(skill(`name: a\n${D}\nallowed-tools: ${bad}`).problems), bad).toEqual(['INVALID_ALLOWED_TOOLS']);
    }
  });
});

describe('warnings never fail a bundle', () => {
  it('an unknown field is a warning with a did-you-mean, placed on its line', () => {
    const r = skill('name: my-skill\ndescription: Does things.\ndescripton: typo here\nallowed_tools: Read\nLicence: MIT\nauthor: me');
    expect(r.ok).toBe(true);
    expect(r.problems).toEqual([]);
    expect(r.warnings.map((w) => [w.rule, w.line, w.column])).toEqual([
      ['UNKNOWN_FIELD', 4, 1], ['UNKNOWN_FIELD', 5, 1], ['UNKNOWN_FIELD', 6, 1], ['UNKNOWN_FIELD', 7, 1],
    ]);
    expect(r.warnings[0].message).toBe('unknown front-matter field "descripton"; did you mean "description"?');
    expect(r.warnings[1].message).toContain('did you mean "allowed-tools"?');
    expect(r.warnings[2].message).toContain('did you mean "license"?');
    expect(r.warnings[3].message).toContain('put your own under "metadata"');
  });
  it('a typo of a required field: the field is missing (error) and the typo says which it meant', () => {
    const r = skill('name: my-skill\ndescripton: Does things.');
    expect(rules(r.problems)).toEqual(['MISSING_DESCRIPTION']);
    expect(r.warnings.map((w) => w.message)).toEqual(['unknown front-matter field "descripton"; did you mean "description"?']);
  });
  it('a body over 500 lines is a warning at its 501st line', () => {
    const at500 = skill(`name: a\n${D}`, 'line\n'.repeat(500));
    expect(at500.warnings).toEqual([]);
    const r = skill(`name: a\n${D}`, 'line\n'.repeat(501));
    expect(r.ok).toBe(true);
    expect(r.warnings).toEqual([expect.objectContaining({ rule: 'BODY_TOO_LONG', line: 5 + 500, column: 1 })]);
  });
  it('the template’s placeholder description is a warning', () => {
    const template = readFileSync(fileURLToPath(new URL('../../templates/skill/SKILL.md', import.meta.url)), 'utf8');
    expect(template).toContain(`description: ${TEMPLATE_DESCRIPTION}\n`);
    const r = skill(`name: a\ndescription: ${TEMPLATE_DESCRIPTION}`);
    expect(r.ok).toBe(true);
    expect(r.warnings).toEqual([expect.objectContaining({ rule: 'PLACEHOLDER_DESCRIPTION', line: 3 })]);
  });
  it('a folder not named after the skill is a warning when the folder is known', () => {
    expect(skill(`name: my-skill\n${D}`, '', { dirName: 'my-skill' }).warnings).toEqual([]);
    expect(rules(skill(`name: my-skill\n${D}`, '', { dirName: 'work' }).warnings)).toEqual(['NAME_DIRECTORY_MISMATCH']);
  });
  it('every warning code is distinct from the problem codes', () => {
    for (const w of WARNING_RULES) expect(RULES as readonly string[]).not.toContain(w);
  });
});

describe('problems at line:column, not offsets', () => {
  it('YAML syntax errors name the SKILL.md line and column', () => {
    const r = skill('name: a\ndescription: ok\nkey: [unclosed\nother: 1');
    expect(r.problems.length).toBeGreaterThan(0);
    for (const p of r.problems) {
      expect(p).toMatchObject({ rule: 'INVALID_FRONT_MATTER', line: expect.any(Number), column: expect.any(Number) });
      expect(p.line).toBeGreaterThanOrEqual(4);
      expect(p.message).not.toMatch(/position|offset/);
    }
  });
  it('a duplicate key is placed on the second occurrence', () => {
    expect(skill('name: a\ndescription: d\nname: b').problems).toEqual([
      expect.objectContaining({ rule: 'INVALID_FRONT_MATTER', line: 4, column: 1, message: 'invalid YAML: Map keys must be unique' }),
    ]);
  });
  it('a name problem is placed on the name line', () => {
    expect(skill(`${D}\nname: Bad`).problems).toEqual([expect.objectContaining({ rule: 'INVALID_NAME', line: 3, column: 1 })]);
  });
  it('invalid JSON in a tool manifest is placed at line:column without V8’s "at position"', () => {
    const manifest = '{\n  "name": "t",\n  "description": "d",\n}\n';
    const r = validateBundle([file('SKILL.md', `---\nname: a\n${D}\n---\n`), file('tools/t.json', manifest)]);
    expect(r.problems).toEqual([{ path: 'tools/t.json', rule: 'INVALID_TOOL_MANIFEST', message: expect.stringMatching(/^not valid JSON: /), line: 4, column: 1 }]);
    expect(r.problems[0].message).not.toMatch(/position/);
    const cut = validateBundle([file('SKILL.md', `---\nname: a\n${D}\n---\n`), file('tools/t.json', '{\n  "name": "t"')]);
    expect(cut.problems[0]).toMatchObject({ line: 2, column: 14 });
  });
});

describe('didYouMean', () => {
  it('suggests the nearest field for typos, case and underscores, and nothing for far-off keys', () => {
    const known = ['name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools'];
    expect(didYouMean('descripton', known)).toBe('description');
    expect(didYouMean('desciption', known)).toBe('description');
    expect(didYouMean('Name', known)).toBe('name');
    expect(didYouMean('compatability', known)).toBe('compatibility');
    expect(didYouMean('allowed_tools', known)).toBe('allowed-tools');
    expect(didYouMean('meta-data', known)).toBe('metadata');
    expect(didYouMean('version', known)).toBeNull();
    expect(didYouMean('tags', known)).toBeNull();
  });
});
