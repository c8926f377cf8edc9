import type { Finding } from '../../shared/scan/index.js';
import type { VersionSeal } from '../marketplace/trust/seal.js';
import { escapeHtml } from './escape.js';

/**
 * The skill page's "Scan and signature" card for the current version: its digest, the key
 * that signed it, and every finding the scan kept at publish (warnings; an error would have
 * refused the publish), or that there were none. The findings are shown as text, never as
 * markup, and invisible characters in them already read <U+XXXX> (shared/scan).
 */
function findingItem(f: Finding): string {
  const where = `${f.path}${f.line !== null ? `:${f.line}` : ''}`;
  return `<li data-rule="${escapeHtml(f.rule)}"><span class="status bad">${escapeHtml(f.severity)}</span> <strong>${escapeHtml(f.rule)}</strong> <code class="wrap">${escapeHtml(where)}</code><div class="wrap">${escapeHtml(f.message)}</div></li>`;
}

export function trustSection(slug: string, version: string, seal: VersionSeal): string {
  const n = seal.findings.length;
  const findings = n
    ? `<p id="scan-summary" class="banner" role="note">The scan reported ${n} warning${n === 1 ? '' : 's'} for version ${escapeHtml(version)}. Read ${n === 1 ? 'it' : 'them'} before you install; <code>agw skill install</code> asks too.</p>
  <ul class="versions findings" id="scan-findings">${seal.findings.map(findingItem).join('')}</ul>`
    : `<p id="scan-summary" class="note">The scan reported nothing for version ${escapeHtml(version)}.</p>`;
  return `<section class="card" aria-labelledby="trust-h" id="trust">
  <h2 id="trust-h">Scan and signature</h2>
  ${findings}
  <dl class="facts"><div><dt>Digest</dt><dd><code class="wrap" id="skill-digest">${escapeHtml(seal.digest)}</code></dd></div><div><dt>Signed with key</dt><dd><code class="wrap">${escapeHtml(seal.signature.kid)}</code></dd></div></dl>
  <p class="note"><code>agw skill install</code> checks the files against this digest and its signature (keys at <code>/.well-known/agw-skill-keys.json</code>) before it writes them; <code>agw skill verify ${escapeHtml(slug)}</code> checks an installed copy.</p>
</section>`;
}
