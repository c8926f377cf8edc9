import { providerSecrets, type ResolvedConfig } from '../../shared/config/resolve.js';
import { Redactor } from '../../shared/redact.js';

/**
 * Request and answer bodies for the request log (logs.bodies: true): the first BODY_CAP
 * bytes of each, secrets redacted (shared/redact.ts), with the whole body's size. An
 * answer is tapped as it streams by (`BodyTap.push` keeps a bounded prefix and counts
 * the rest): nothing is buffered beyond the cap and nothing waits for it.
 */
export const BODY_CAP = 32 * 1024;
/** kept beyond the cap until redaction, so a secret crossing the cap is still found whole */
const MARGIN = 4096;

export interface KeptBodies {
  request: string | null;
  response: string | null;
  requestBytes: number;
  responseBytes: number;
}

export class BodyTap {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  bytes = 0;

  push(chunk: Buffer | string): void {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.bytes += b.length;
    if (this.kept >= BODY_CAP + MARGIN) return;
    const part = b.subarray(0, BODY_CAP + MARGIN - this.kept);
    this.chunks.push(part);
    this.kept += part.length;
  }

  get empty(): boolean {
    return this.bytes === 0;
  }

  text(redact: Redactor): string | null {
    if (!this.bytes) return null;
    return capRedacted(Buffer.concat(this.chunks).toString('utf8'), redact);
  }
}

/** A redacted text cut to BODY_CAP bytes (on a character boundary). */
function capRedacted(s: string, redact: Redactor): string {
  const r = redact.text(s);
  const b = Buffer.from(r);
  if (b.length <= BODY_CAP) return r;
  return b.subarray(0, BODY_CAP).toString('utf8').replace(/\uFFFD+$/, '');
}

/** What a call's bodies are kept in while it runs (only when logs.bodies is on). */
export class CallBodies {
  readonly request = new BodyTap();
  readonly response = new BodyTap();

  constructor(body: Buffer | string | object | undefined) {
    if (body === undefined) return;
    this.request.push(typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body));
  }

  keep(redact: Redactor): KeptBodies {
    return {
      request: this.request.text(redact),
      response: this.response.text(redact),
      requestBytes: this.request.bytes,
      responseBytes: this.response.bytes,
    };
  }
}

const redactors = new WeakMap<ResolvedConfig, Redactor>();

/** The secrets of a config: every provider key and the master token. */
export function redactorOf(config: ResolvedConfig): Redactor {
  let r = redactors.get(config);
  if (!r) {
    r = new Redactor([...providerSecrets(config), config.masterToken]);
    redactors.set(config, r);
  }
  return r;
}
