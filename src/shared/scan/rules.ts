/**
 * The skill scanner's rules, as data: one row per rule with its id, severity, what it looks
 * for and why, and the matcher the engine (scan.ts) runs. The daemon runs them on every
 * publish (an error refuses it with 400 BUNDLE_REJECTED), `agw skill scan DIR` runs them
 * locally. docs/marketplace.md "Trust" lists the same table, and what no rule can catch.
 *
 * Every pattern is linear on hostile input: gaps are bounded (`{0,300}`, never `.*`), so a
 * 5 MiB line cannot make a match backtrack without end; long encoded runs are counted in one
 * pass (runs.ts), not matched from every start.
 */
import type { RunLimits } from './runs.js';

export type Severity = 'error' | 'warning';

/**
 * How a rule looks at a file:
 * - `text`: every match of any `patterns` in a text file, at its line (`hint`, when given,
 *   is a cheap test the file must pass first, so most files skip the rule).
 * - `together`: matches of `patterns` in a text file that also has a match of `with`
 *   (`absent: true`: that has none), at the line of the `patterns` match.
 * - `magic`: the file's leading bytes (any file, text or not), once per file.
 * - `longLines`: text lines of `minLength` characters or more with fewer than `maxSpaceRatio`
 *   blanks, not mostly base64 (that is ENCODED_BLOB's), reported once per file.
 * - `runs`: encoded runs in a text file at least `limits` long (runs.ts), at their line.
 */
export type Matcher =
  | { kind: 'text'; hint?: RegExp; patterns: RegExp[]; paths?: boolean }
  | { kind: 'together'; hint?: RegExp; patterns: RegExp[]; with: RegExp[]; absent?: boolean }
  | { kind: 'magic'; signatures: Signature[] }
  | { kind: 'longLines'; minLength: number; maxSpaceRatio: number }
  | { kind: 'runs'; limits: RunLimits };

export interface Signature {
  label: string;
  /** Bytes at `offset` (default 0). */
  bytes: number[];
  offset?: number;
  /** A further check of the whole file, for magic numbers that text can start with. */
  confirm?: (data: Uint8Array) => boolean;
}

export interface ScanRule {
  id: string;
  severity: Severity;
  /** What it looks for, in one line. */
  looksFor: string;
  /** Why a skill that does this is a risk. */
  why: string;
  /** A finding's message starts with this. */
  says: string;
  match: Matcher;
}

/** A PE image: "MZ", then at the offset stored at 0x3C the signature "PE\0\0". */
function isPe(d: Uint8Array): boolean {
  if (d.length < 0x40) return false;
  const at = d[0x3c] | (d[0x3d] << 8) | (d[0x3e] << 16) | (d[0x3f] << 24);
  return at >= 0x40 && at + 4 <= d.length && d[at] === 0x50 && d[at + 1] === 0x45 && d[at + 2] === 0 && d[at + 3] === 0;
}

/** bzip2: "BZh", a block size digit, then a block or end-of-stream magic. */
const isBzip2 = (d: Uint8Array) =>
  d.length >= 10 && d[3] >= 0x31 && d[3] <= 0x39 &&
  ([0x31, 0x41, 0x59, 0x26, 0x53, 0x59].every((b, i) => d[4 + i] === b) || [0x17, 0x72, 0x45, 0x38, 0x50, 0x90].every((b, i) => d[4 + i] === b));

const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));

// ---- shared pieces of the credential rules ----

/** Files that hold credentials. */
const CREDENTIAL_FILE =
  /\.aws\/(?:credentials|config)\b|\.ssh\/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.netrc\b|\.git-credentials\b|\.docker\/config\.json|\.kube\/config\b|\.npmrc\b|\.pypirc\b|\/etc\/shadow\b|\.config\/gh\/hosts\.yml|\.config\/gcloud\/|\.azure\/|\.gnupg\/|Library\/Keychains|\bLogin Data\b|['"]\.ssh['"]|['"]\.aws['"]\s{0,3},\s{0,3}['"]credentials['"]/g;
/** A `.env` file opened, printed or loaded (not `.env.example` and the like). */
const ENV_FILE_READ =
  /\b(?:cat|less|more|head|tail|source|type|Get-Content|open|readFile|readFileSync|read_text|load_dotenv|dotenv_values)\b[^\n]{0,60}?[\s'"(/]\.env(?!\.(?:example|sample|template|dist)\b)(?:\.[a-z]{1,12})?\b/g;
/** The whole environment at once (every secret in it). */
const ENV_DUMP =
  /\bprintenv\b(?![ \t]{1,3}[A-Z_])|(?:^|[|;&]|\$\()[ \t]{0,3}env[ \t]{0,3}(?:$|[|>)])|\b(?:JSON\.stringify|Object\.(?:entries|keys|values)|util\.inspect|console\.log)\(\s{0,3}process\.env\s{0,3}[,)]|\b(?:str|print|repr|json\.dumps)\(\s{0,3}(?:dict\(\s{0,3})?os\.environ\b|\bGet-ChildItem\s{1,3}env:|\bgci\s{1,3}env:/gm;
/** One environment variable named like a secret. */
const SECRET_ENV =
  /(?:process\.env\.|process\.env\[['"]|os\.environ\[['"]|os\.environ\.get\(\s{0,3}['"]|os\.getenv\(\s{0,3}['"]|\$\{?|\$env:|ENV\[['"]|System\.getenv\(\s{0,3}")[A-Z0-9_]{0,40}(?:SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?)[A-Z0-9_]{0,40}\b/g;
/** Anything that sends data off the machine: network clients in code and shell, and prose asking the agent to. */
const SENDS_OUT = [
  /\b(?:curl|wget|nc|ncat|netcat|socat|scp|sftp|rsync|ftp|telnet)\b|\/dev\/(?:tcp|udp)\/|\bfetch\s{0,3}\(|\bXMLHttpRequest\b|\baxios\b|\brequests\.(?:get|post|put|patch)\b|\burllib\b|\bhttpx\b|\bhttp\.client\b|\bhttps?\.(?:request|get)\s{0,3}\(|\bnet\.(?:connect|createConnection)\b|\bsocket\.(?:socket|connect|create_connection)\b|\b(?:Invoke-WebRequest|Invoke-RestMethod|iwr|irm)\b|\bWebClient\b|\bsmtplib\b|\bnodemailer\b/,
  /\b(?:send|post|upload|transmit|forward|exfiltrate|e-?mail)\b[^\n]{0,80}\bhttps?:\/\/|\b(?:send|post|upload|forward|e-?mail)\s{1,3}(?:it|them|this|(?:the|its|their)\s{1,3}(?:contents?|files?|keys?|values?|output|secrets?))\s{1,3}to\b/i,
];

/** The rules, in the order findings of one line are listed. */
export const SCAN_RULES: readonly ScanRule[] = [
  {
    id: 'BIDI_CONTROL',
    says: 'a bidirectional control character reorders how this text displays',
    severity: 'error',
    looksFor: 'Unicode bidirectional embedding, override and isolate controls (U+202A-U+202E, U+2066-U+2069) in text or in a file name',
    why: 'They make text display in another order than it is read ("Trojan Source", CVE-2021-42574): a reviewer sees one instruction or command and the agent or shell gets another.',
    match: { kind: 'text', patterns: [/[\u202A-\u202E\u2066-\u2069]/g], paths: true },
  },
  {
    id: 'UNICODE_TAGS',
    says: 'invisible Unicode tag characters (read by a model, not shown)',
    severity: 'error',
    looksFor: 'Unicode tag characters (U+E0000-U+E007F) in text or in a file name',
    why: 'They are invisible on screen but read by a model as ASCII: a way to smuggle instructions past anyone reviewing the skill.',
    match: { kind: 'text', patterns: [/[\u{E0000}-\u{E007F}]/gu], paths: true },
  },
  {
    id: 'ZERO_WIDTH',
    says: 'an invisible zero-width or formatting character',
    severity: 'warning',
    looksFor: 'zero-width and invisible formatting characters (U+200B-U+200D, U+2060-U+2064, U+180E, U+00AD, U+FEFF past the start); a joiner inside an emoji sequence and a non-joiner between letters of a non-Latin script are allowed',
    why: 'Invisible characters can hide words from a reviewer, split keywords so filters miss them, or carry a hidden message bit by bit.',
    match: {
      kind: 'text',
      patterns: [
        /[\u200B\u2060-\u2064\u180E\u00AD\uFEFF]|(?<![\p{Extended_Pictographic}\u{FE0F}\u{1F3FB}-\u{1F3FF}])\u200D|\u200D(?!\p{Extended_Pictographic})|(?<![^\p{Script=Latin}\P{L}]\p{M}{0,3})\u200C|\u200C(?![^\p{Script=Latin}\P{L}])/gu,
      ],
      paths: true,
    },
  },
  {
    id: 'PROMPT_OVERRIDE',
    says: 'tries to override the agent\'s system or user instructions',
    severity: 'error',
    looksFor: 'instructions to ignore, disregard or override the previous, system, developer or user instructions; fake chat-template markers (<|im_start|>system, <<SYS>>, [INST]); "you are now in developer mode"',
    why: 'A skill is loaded into the agent\'s context with the user\'s trust; text that tells the agent to drop its system prompt or its user\'s instructions is a prompt injection, not a skill.',
    match: {
      kind: 'text',
      hint: /ignore|disregard|forget|override|bypass|im_start|<<SYS>>|INST\]|mode|instructions/i,
      patterns: [
        /(?<!(?:\bnot|\bnever|n't)\s{1,3})\b(?:ignore|disregard|forget|override|bypass)\s{1,3}(?:(?:all|any|the|your|my|of|these|those|every)\s{1,3}){0,3}(?:previous|prior|above|earlier|preceding|foregoing|original|system|developer|user'?s?|safety)\s{1,3}(?:instructions?|prompts?|directives|guidelines|guardrails)\b/gi,
        /<\|im_start\|>\s{0,3}system|<<SYS>>|\[\/?INST\]/g,
        /\byou\s{1,3}are\s{1,3}now\s{1,3}(?:in\s{1,3})?(?:developer|god|jailbreak|unrestricted|DAN)\s{0,3}mode\b|\b(?:new|updated|real|true|actual)\s{1,3}system\s{1,3}(?:prompt|instructions?)\s{0,3}:/gi,
      ],
    },
  },
  {
    id: 'CONCEAL_FROM_USER',
    says: 'tells the agent to keep something from the user',
    severity: 'warning',
    looksFor: 'instructions to keep something from the user: "do not tell the user", "without telling the user", "hide this from the user"',
    why: 'An agent acting for a user should not be told to keep secrets from them; it is how injected instructions keep themselves unnoticed.',
    match: {
      kind: 'text',
      hint: /user/i,
      patterns: [
        /\b(?:do\s{1,3}not|don'?t|never)\s{1,3}(?:tell|inform|show|mention|reveal|disclose|notify|alert)\s{1,3}(?:(?:this|it|anything|that)\s{1,3})?(?:to\s{1,3})?the\s{1,3}user\b|\bwithout\s{1,3}(?:telling|informing|asking|notifying|alerting)\s{1,3}the\s{1,3}user\b|\b(?:hide|conceal|keep)\s{1,3}(?:this|it|that)\s{1,3}(?:secret\s{1,3})?from\s{1,3}the\s{1,3}user\b/gi,
      ],
    },
  },
  {
    id: 'DOWNLOAD_EXECUTE',
    says: 'downloads code and runs it',
    severity: 'error',
    looksFor: 'code fetched from the network and run at once: curl|sh, wget … | bash, bash <(curl …), sh -c "$(curl …)", wget … && chmod +x, iwr … | iex, exec(urlopen(…).read())',
    why: 'What runs is whatever the server sends that day, never what was reviewed or signed; the classic way to ship malware in an installer.',
    match: {
      kind: 'text',
      hint: /curl|wget|fetch|iwr|irm|invoke-|webclient|urlopen|requests\.get|httpx/i,
      patterns: [
        /\b(?:curl|wget)\b(?:(?!curl|wget)[^\n|;&]){0,300}\|\s{0,5}(?:sudo\s{1,5}(?:-\S{1,10}\s{1,5}){0,3})?(?:(?:ba|z|da|k|fi)?sh|python[23]?|node|perl|ruby|php)\b/g,
        /\b(?:ba|z)?sh\s{1,5}(?:-c\s{1,5})?["']?\$\(\s{0,5}(?:curl|wget)\b|\b(?:ba|z)?sh\s{1,5}<\(\s{0,5}(?:curl|wget)\b/g,
        /\b(?:wget|curl)\b(?:(?!curl|wget|&&|;|\|\|)[^\n]){0,200}(?:&&|;|\|\|)[ \t]{0,20}(?:sudo\s{1,5})?chmod\s{1,5}(?:[ugoa]{0,3}\+[rwX]{0,2}x|[0-7]?[1357][0-7]{2}\b)/g,
        /\b(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod|(?:System\.)?Net\.WebClient)\b[^\n|]{0,300}\|\s{0,5}(?:iex|Invoke-Expression)\b|\b(?:iex|Invoke-Expression)\b[^\n]{0,40}(?:DownloadString|\biwr\b|\birm\b|Invoke-WebRequest|Invoke-RestMethod)/gi,
        /\b(?:exec|eval)\s{0,3}\(\s{0,3}(?:await\s{1,3})?\(?\s{0,3}(?:await\s{1,3})?(?:urllib\.request\.urlopen|urlopen|requests\.get|httpx\.get|fetch)\s{0,3}\(/g,
      ],
    },
  },
  {
    id: 'DECODE_EXECUTE',
    says: 'decodes hidden code and runs it',
    severity: 'error',
    looksFor: 'encoded code decoded and run: base64 -d | sh, eval(atob(…)), exec(base64.b64decode(…)), powershell -EncodedCommand, iex … FromBase64String',
    why: 'Encoding hides what runs from the reader and from every other rule here; a skill has no honest reason to run code it does not show.',
    match: {
      kind: 'text',
      hint: /base64|atob|b64decode|fromhex|decompress|-e(?:nc|c)?\b|FromBase64/i,
      patterns: [
        /\bbase64\s{1,5}(?:-d|--decode|-D)\b(?:(?!base64)[^\n|]){0,200}\|\s{0,5}(?:sudo\s{1,5})?(?:(?:ba|z|da)?sh|python[23]?|node|perl)\b/g,
        /\b(?:eval|exec|Function)\s{0,3}\(\s{0,3}(?:atob|Buffer\.from|base64\.b64decode|b64decode|codecs\.decode|bytes\.fromhex|zlib\.decompress)\s{0,3}\(/g,
        /\bpowershell(?:\.exe)?\b[^\n]{0,100}\s-(?:e|ec|enc|encodedcommand)\s{1,5}[A-Za-z0-9+/=]{16,}|\b(?:iex|Invoke-Expression)\b[^\n]{0,100}FromBase64String/gi,
      ],
    },
  },
  {
    id: 'CREDENTIAL_EXFILTRATION',
    says: 'reads credentials in a file that also sends data out',
    severity: 'error',
    looksFor: 'a file that reads credentials (~/.aws/credentials, ~/.ssh, id_rsa, .netrc, .git-credentials, a .env file, the whole environment) and also sends data out (curl, wget, nc, fetch, requests, /dev/tcp, "send it to https://…")',
    why: 'Reading secrets and talking to the network in the same script or instruction is how stolen keys leave the machine; no skill needs the user\'s SSH or cloud keys.',
    match: { kind: 'together', patterns: [CREDENTIAL_FILE, ENV_FILE_READ, ENV_DUMP], with: SENDS_OUT },
  },
  {
    id: 'SECRET_SENT',
    says: 'a secret from the environment in a file that sends data out',
    severity: 'warning',
    looksFor: 'an environment variable named like a secret (…TOKEN, …SECRET, …API_KEY, …PASSWORD) in a file that also sends data out',
    why: 'Often legitimate (a token sent to the API it belongs to), but it is also how one key is stolen: check where it goes.',
    match: { kind: 'together', hint: /SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL/, patterns: [SECRET_ENV], with: SENDS_OUT },
  },
  {
    id: 'CREDENTIAL_READ',
    says: 'reads credentials',
    severity: 'warning',
    looksFor: 'credentials read (the files and the whole environment above) in a file that sends nothing out',
    why: 'A skill rarely needs them; another file, or the agent itself, can still carry them off.',
    match: { kind: 'together', patterns: [CREDENTIAL_FILE, ENV_FILE_READ, ENV_DUMP], with: SENDS_OUT, absent: true },
  },
  {
    id: 'EXECUTABLE_FILE',
    says: 'a compiled executable',
    severity: 'error',
    looksFor: 'compiled programs: ELF, Mach-O (and universal/Java class files), Windows PE, WebAssembly, by their magic numbers',
    why: 'A binary cannot be reviewed or scanned like a script, and runs with the user\'s rights; ship the source and build steps instead.',
    match: {
      kind: 'magic',
      signatures: [
        { label: 'an ELF executable', bytes: [0x7f, 0x45, 0x4c, 0x46] },
        { label: 'a Mach-O executable', bytes: [0xfe, 0xed, 0xfa, 0xce] },
        { label: 'a Mach-O executable', bytes: [0xfe, 0xed, 0xfa, 0xcf] },
        { label: 'a Mach-O executable', bytes: [0xce, 0xfa, 0xed, 0xfe] },
        { label: 'a Mach-O executable', bytes: [0xcf, 0xfa, 0xed, 0xfe] },
        { label: 'a Mach-O universal binary or Java class file', bytes: [0xca, 0xfe, 0xba, 0xbe] },
        { label: 'a Windows PE executable', bytes: ascii('MZ'), confirm: isPe },
        { label: 'a WebAssembly module', bytes: [0x00, 0x61, 0x73, 0x6d] },
      ],
    },
  },
  {
    id: 'ARCHIVE_FILE',
    says: 'an archive whose contents are not scanned',
    severity: 'warning',
    looksFor: 'archives and compressed files: zip (and .docx/.xlsx/.jar, which are zips), gzip, bzip2, xz, 7z, rar, zstd, tar, by their magic numbers',
    why: 'Their contents are not scanned: a nested archive is where a payload hides from every other rule.',
    match: {
      kind: 'magic',
      signatures: [
        { label: 'a zip archive', bytes: [0x50, 0x4b, 0x03, 0x04] },
        { label: 'a zip archive', bytes: [0x50, 0x4b, 0x05, 0x06] },
        { label: 'a zip archive', bytes: [0x50, 0x4b, 0x07, 0x08] },
        { label: 'gzip data', bytes: [0x1f, 0x8b, 0x08] },
        { label: 'bzip2 data', bytes: ascii('BZh'), confirm: isBzip2 },
        { label: 'xz data', bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00] },
        { label: 'a 7z archive', bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c] },
        { label: 'a rar archive', bytes: [0x52, 0x61, 0x72, 0x21, 0x1a, 0x07] },
        { label: 'zstd data', bytes: [0x28, 0xb5, 0x2f, 0xfd] },
        { label: 'a tar archive', bytes: ascii('ustar'), offset: 257 },
      ],
    },
  },
  {
    id: 'MINIFIED_CODE',
    says: 'minified or packed code',
    severity: 'warning',
    looksFor: 'lines of 500 characters or more with fewer than one blank in 10 (minified or packed code)',
    why: 'Minified code cannot be reviewed by the people installing the skill, nor read sensibly by the agent; ship the readable source.',
    match: { kind: 'longLines', minLength: 500, maxSpaceRatio: 0.1 },
  },
  {
    id: 'ENCODED_BLOB',
    says: 'a long encoded blob',
    severity: 'warning',
    looksFor: 'long encoded runs in text: 256+ characters of the base64, base64url or hex alphabets in a row, 32+ \\xNN or \\uNNNN escapes, 48+ %NN escapes',
    why: 'An encoded blob hides what it carries (a script, a binary, a prompt) from review and from the other rules.',
    match: { kind: 'runs', limits: { base64: 256, escapes: 32, percent: 48 } },
  },
];

export const SCAN_RULE_IDS = SCAN_RULES.map((r) => r.id);
