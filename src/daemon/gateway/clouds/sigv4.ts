import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentials } from '../../../shared/config/provider-keys.js';

/**
 * AWS Signature Version 4 over one request (bedrock), with AWS's own signer
 * (@smithy/signature-v4, the one the AWS SDK uses). Signed: host, content-type, the
 * x-amz-* headers it adds, the path (each segment escaped once more, as AWS does for every
 * service but S3), the query and the body's SHA-256. Other forwarded headers go unsigned.
 * The signature is sent in `authorization`; it is returned so the call can redact it.
 */
const signers = new WeakMap<AwsCredentials, Map<string, SignatureV4>>();

function signerFor(creds: AwsCredentials, region: string, service: string): SignatureV4 {
  let byScope = signers.get(creds);
  if (!byScope) signers.set(creds, (byScope = new Map()));
  const scope = `${region}/${service}`;
  let s = byScope.get(scope);
  if (!s) {
    s = new SignatureV4({ credentials: { ...creds }, region, service, sha256: Sha256, uriEscapePath: true, applyChecksum: true });
    byScope.set(scope, s);
  }
  return s;
}

/** The headers the signer adds; a retry on another key replaces them all. */
export const SIGV4_HEADERS = ['authorization', 'x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256'];

export interface SignInput {
  method: string;
  /** host[:port] as the request sends it */
  host: string;
  /** the full request path (base path included) as sent, and the raw query */
  path: string;
  query: string;
  contentType: string | undefined;
  body: Buffer | string | undefined;
}

/** Signs and returns the headers to send, and the signature (a derived credential). */
export async function signV4(creds: AwsCredentials, region: string, service: string, r: SignInput): Promise<{ headers: Record<string, string>; signature: string }> {
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(r.query)) {
    const prev = query[k];
    query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  const colon = r.host.lastIndexOf(':');
  const hostname = colon > 0 && !r.host.endsWith(']') ? r.host.slice(0, colon) : r.host;
  const port = colon > 0 && !r.host.endsWith(']') ? Number(r.host.slice(colon + 1)) : undefined;
  const headers: Record<string, string> = { host: r.host };
  if (r.contentType) headers['content-type'] = r.contentType;
  const signed = await signerFor(creds, region, service).sign({
    method: r.method,
    protocol: 'https:',
    hostname,
    port,
    path: r.path,
    query,
    headers,
    body: r.body ?? '',
  });
  const out: Record<string, string> = {};
  for (const name of SIGV4_HEADERS) {
    const v = signed.headers[name];
    if (typeof v === 'string') out[name] = v;
  }
  const signature = /Signature=([0-9a-f]+)/.exec(out.authorization ?? '')?.[1] ?? '';
  return { headers: out, signature };
}
