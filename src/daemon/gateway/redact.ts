import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { Dispatcher } from 'undici';
import type { SecretRedactor } from '../../shared/secret-redactor.js';

/** Decoded bodies of error answers are capped; an error answer larger than this is not passed on. */
const MAX_DECODED = 8 * 1024 * 1024;
/** What is read of an error answer as sent: its first MiB (the rest is discarded unread). */
const MAX_ERROR_BODY = 1024 * 1024;

/** The first `max` bytes of a body; the rest of the stream is destroyed, never buffered. */
async function readCapped(body: Dispatcher.ResponseData['body'], max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const b = chunk as Buffer;
    chunks.push(size + b.length > max ? b.subarray(0, max - size) : b);
    size += b.length;
    if (size >= max) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks);
}

/**
 * A non-2xx upstream answer's body (its first MiB), with every secret replaced. A compressed body
 * (agw asks for none, but an upstream may send one) is decoded first, so the secret cannot
 * hide in it: `decoded` then tells the caller to drop Content-Encoding. A body that cannot
 * be decoded is withheld (empty).
 */
export async function readErrorBody(up: Dispatcher.ResponseData, redact: SecretRedactor): Promise<{ body: Buffer; decoded: boolean }> {
  let raw: Buffer;
  try {
    raw = await readCapped(up.body, MAX_ERROR_BODY);
  } catch {
    return { body: Buffer.alloc(0), decoded: false };
  }
  const ce = up.headers['content-encoding'];
  const encoding = (Array.isArray(ce) ? ce.join(',') : (ce ?? '')).trim().toLowerCase();
  if (!encoding || encoding === 'identity') return { body: redact.buffer(raw), decoded: false };
  try {
    const opts = { maxOutputLength: MAX_DECODED };
    const plain =
      encoding === 'gzip' || encoding === 'x-gzip'
        ? gunzipSync(raw, opts)
        : encoding === 'deflate'
          ? inflateSync(raw, opts)
          : encoding === 'br'
            ? brotliDecompressSync(raw, opts)
            : undefined;
    return { body: plain ? redact.buffer(plain) : Buffer.alloc(0), decoded: true };
  } catch {
    return { body: Buffer.alloc(0), decoded: true };
  }
}
