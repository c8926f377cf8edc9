import { createHash, createHmac, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32 } from 'node:zlib';

/**
 * Loopback stand-ins for the three clouds, each checking a request as the cloud would:
 * Azure OpenAI its `api-key` header, Bedrock the AWS Signature V4 (recomputed here with
 * node:crypto's HMAC chain from the AWS documentation, not with the signer agw uses),
 * Vertex the OAuth access token its token endpoint issued for a JWT assertion whose RS256
 * signature it verifies with the service account's public key.
 * References: https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv4-create-signed-request.html,
 * https://developers.google.com/identity/protocols/oauth2/service-account#httprest,
 * https://learn.microsoft.com/azure/ai-services/openai/reference.
 */
export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface Mock {
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

type Handler = (req: Seen, res: ServerResponse) => void;

export async function startMock(handler: Handler): Promise<Mock> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      seen.push(s);
      try {
        handler(s, res);
      } catch (err) {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ message: String(err) }));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

// ---- AWS Signature V4, recomputed ----

const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
const hmac = (key: string | Buffer, s: string) => createHmac('sha256', key).update(s).digest();
/** RFC 3986 encoding as AWS specifies it (unreserved: A-Z a-z 0-9 - _ . ~). */
const awsEncode = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * Whether the request's Authorization header is the SigV4 signature of what arrived, for
 * `secret`: the canonical request (method, each path segment encoded once more, the sorted
 * query, the signed headers, the body's hash), the string to sign, the key derived by
 * HMAC-SHA256 through date, region, service and "aws4_request".
 */
export function sigV4Problem(s: Seen, secret: string): string | null {
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(String(s.headers.authorization ?? ''));
  if (!m) return `no SigV4 authorization header: ${s.headers.authorization}`;
  const [, , date, region, service, signedHeaders, signature] = m;
  const amzDate = String(s.headers['x-amz-date'] ?? '');
  if (!amzDate.startsWith(date)) return 'x-amz-date does not match the credential scope';
  const q = s.url.indexOf('?');
  const rawPath = q < 0 ? s.url : s.url.slice(0, q);
  const rawQuery = q < 0 ? '' : s.url.slice(q + 1);
  const canonicalUri = rawPath.split('/').map(awsEncode).join('/');
  const canonicalQuery = [...new URLSearchParams(rawQuery)]
    .map(([k, v]) => [awsEncode(k), awsEncode(v)])
    .sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : 1) : a[0] < b[0] ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const names = signedHeaders.split(';');
  if (!names.includes('host')) return 'host is not signed';
  const canonicalHeaders = names.map((n) => `${n}:${String(s.headers[n] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const payloadHash = sha256(s.body);
  if (s.headers['x-amz-content-sha256'] !== undefined && s.headers['x-amz-content-sha256'] !== payloadHash) return 'x-amz-content-sha256 is not the body’s hash';
  const canonicalRequest = [s.method, canonicalUri, canonicalQuery, canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
  const expected = createHmac('sha256', key).update(stringToSign).digest('hex');
  return expected === signature ? null : `signature mismatch for canonical request:\n${canonicalRequest}`;
}

/** The credential scope's parts of a SigV4 authorization header. */
export function sigV4Scope(s: Seen): { accessKeyId: string; region: string; service: string } | undefined {
  const m = /Credential=([^/]+)\/\d{8}\/([^/]+)\/([^/]+)\//.exec(String(s.headers.authorization ?? ''));
  return m ? { accessKeyId: m[1], region: m[2], service: m[3] } : undefined;
}

// ---- AWS event stream frames ----

function header(name: string, value: string): Buffer {
  const n = Buffer.from(name);
  const v = Buffer.from(value);
  const len = Buffer.alloc(2);
  len.writeUInt16BE(v.length);
  return Buffer.concat([Buffer.from([n.length]), n, Buffer.from([7]), len, v]);
}

/** One event stream message (prelude, CRCs and all) with string headers. */
export function eventFrame(headers: Record<string, string>, payload: string | Buffer): Buffer {
  const h = Buffer.concat(Object.entries(headers).map(([k, v]) => header(k, v)));
  const p = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  const total = 12 + h.length + p.length + 4;
  const prelude = Buffer.alloc(8);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(h.length, 4);
  const preludeCrc = Buffer.alloc(4);
  preludeCrc.writeUInt32BE(crc32(prelude));
  const head = Buffer.concat([prelude, preludeCrc, h, p]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(head));
  return Buffer.concat([head, crc]);
}

export const converseEvent = (type: string, body: unknown) =>
  eventFrame({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, JSON.stringify(body));

// ---- Google service account: a JWT bearer assertion, checked ----

/** The claims of a JWT assertion if its RS256 signature verifies with `publicKeyPem`, else the reason it does not. */
export function verifyAssertion(assertion: string, publicKeyPem: string): { claims?: Record<string, unknown>; header?: Record<string, unknown>; problem?: string } {
  const parts = assertion.split('.');
  if (parts.length !== 3) return { problem: 'not a JWT' };
  const header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as Record<string, unknown>;
  if (header.alg !== 'RS256') return { problem: `alg ${String(header.alg)}` };
  const ok = verify('RSA-SHA256', Buffer.from(`${parts[0]}.${parts[1]}`), publicKeyPem, Buffer.from(parts[2], 'base64url'));
  if (!ok) return { problem: 'bad signature' };
  return { header, claims: JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as Record<string, unknown> };
}
