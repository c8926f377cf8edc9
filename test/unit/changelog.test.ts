import { describe, expect, test } from 'vitest';
import { changelogSection } from '../../src/cli/commands/skill/changelog.js';

/** `--notes-file CHANGELOG.md` takes this version's section (issue #33: the whole file was stored). */
const KEEP_A_CHANGELOG = `# Changelog

All notable changes to this project will be documented in this file.

## [Unreleased]

- Nothing yet.

## [1.2.0] - 2024-05-01

### Added
- Forecasts for any city.

### Fixed
- Units in Fahrenheit.

## [1.1.0] - 2024-04-01

### Added
- Hourly forecasts.

[1.2.0]: https://example.com/compare/v1.1.0...v1.2.0
[1.1.0]: https://example.com/releases/v1.1.0
`;

describe('changelogSection', () => {
  test('a Keep a Changelog file: only the version’s section, without its heading, up to the next version', () => {
    expect(changelogSection(KEEP_A_CHANGELOG, '1.2.0')).toEqual({
      notes: '### Added\n- Forecasts for any city.\n\n### Fixed\n- Units in Fahrenheit.',
      fromSection: true,
      versions: ['1.2.0', '1.1.0'],
    });
  });

  test('the last section leaves out the link references that follow it', () => {
    expect(changelogSection(KEEP_A_CHANGELOG, '1.1.0').notes).toBe('### Added\n- Hourly forecasts.');
  });

  test('plain headings (## 1.2.0, ## v1.2.0 (date), # 1.2.0-beta.1) and CRLF line ends', () => {
    const plain = '## 1.2.0\n\nNew.\n\n## 1.1.0\n\nOld.\n';
    expect(changelogSection(plain, '1.2.0').notes).toBe('New.');
    expect(changelogSection('## v1.2.0 (2024-05-01)\r\nNew.\r\n## v1.1.0\r\nOld.\r\n', '1.2.0').notes).toBe('New.');
    const pre = '# 1.2.0-beta.1\n\nBeta.\n\n# 1.1.0\n\nOld.\n';
    expect(changelogSection(pre, '1.2.0-beta.1').notes).toBe('Beta.');
    expect(changelogSection(pre, '1.2.0').notes).toBeNull();
  });

  test('a heading inside a code block is not a section', () => {
    const text = '## 1.2.0\n\n```md\n## 1.1.0\n```\n\nStill 1.2.0.\n\n## 1.1.0\nOld.\n';
    expect(changelogSection(text, '1.2.0').notes).toBe('```md\n## 1.1.0\n```\n\nStill 1.2.0.');
  });

  test('a file without version headings is the notes as it is; a changelog without the version is null, naming the ones it has', () => {
    expect(changelogSection('Adds data.bin\n', '1.1.0')).toEqual({ notes: 'Adds data.bin\n', fromSection: false, versions: [] });
    expect(changelogSection(KEEP_A_CHANGELOG, '9.9.9')).toEqual({ notes: null, fromSection: false, versions: ['1.2.0', '1.1.0'] });
  });
});
