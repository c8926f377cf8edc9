/**
 * The scan's findings as a SARIF 2.1.0 log (OASIS), the format GitHub code scanning reads
 * (github/codeql-action/upload-sarif): one run of the tool `agw skill scan`, its rules from
 * the shared rule table (what each looks for and why), one result per finding located at
 * the file (a URI relative to the folder the scan ran in, `%SRCROOT%`) and its line. A
 * finding about a whole file is placed on its line 1, as code scanning needs a line.
 */
import { readFileSync } from 'node:fs';
import { SCAN_RULES, type Finding } from '../../../shared/scan/index.js';

export const SARIF_SCHEMA = 'https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json';

function toolVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

/** A relative POSIX path as a URI reference (each segment percent-encoded). */
export const pathUri = (path: string) => path.split('/').map(encodeURIComponent).join('/');

export function toSarif(findings: readonly { finding: Finding; file: string }[]): object {
  const index = new Map(SCAN_RULES.map((r, i) => [r.id, i]));
  return {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'agw skill scan',
            semanticVersion: toolVersion(),
            informationUri: 'https://agentskills.io/specification',
            rules: SCAN_RULES.map((r) => ({
              id: r.id,
              name: r.id.toLowerCase().replace(/_(\w)/g, (_m, c: string) => c.toUpperCase()),
              shortDescription: { text: r.says.replace(/^./, (c) => c.toUpperCase()) },
              fullDescription: { text: r.looksFor },
              help: { text: `${r.looksFor}. Why: ${r.why}`, markdown: `Looks for ${r.looksFor}.\n\n**Why:** ${r.why}` },
              defaultConfiguration: { level: r.severity },
              properties: { tags: ['security', 'agent-skills'], precision: 'medium', 'security-severity': r.severity === 'error' ? '8.0' : '5.0' },
            })),
          },
        },
        columnKind: 'unicodeCodePoints',
        results: findings.map(({ finding: f, file }) => ({
          ruleId: f.rule,
          ruleIndex: index.get(f.rule) ?? -1,
          level: f.severity,
          message: { text: f.message },
          locations: [{ physicalLocation: { artifactLocation: { uri: pathUri(file), uriBaseId: '%SRCROOT%' }, region: { startLine: f.line ?? 1 } } }],
        })),
      },
    ],
  };
}
