/** The skill scanner (shared by the daemon's publish and `agw skill scan`). */
export { SCAN_RULES, SCAN_RULE_IDS, type Matcher, type ScanRule, type Severity, type Signature } from './rules.js';
export { MAX_FINDINGS_PER_RULE_AND_FILE, excerpt, hasErrors, scanBundle, scanFile, textOf, type Finding } from './scan.js';
