import type { ResolvedProvider } from '../../../shared/config/resolve.js';
import type { ProviderKey } from '../../../shared/config/provider-keys.js';
import type { SecretRedactor } from '../../../shared/secret-redactor.js';
import type { Base, UpstreamRequest } from '../upstream.js';

/**
 * The clouds' libraries (@smithy/signature-v4 with @aws-crypto, google-auth-library: ~25 MB
 * resident together) are loaded with the first call that needs them, so a daemon with no
 * Bedrock or Vertex key never holds them (issue #32: RSS after load < 150 MB).
 */
const sigv4 = () => import('./sigv4.js');
const vertex = () => import('./vertex-token.js');

/**
 * Puts one key's credentials on a request about to be sent (the general path of
 * relay.ts's Call.send: several keys, limits, or credentials computed per request):
 *   bearer / header  the key in its header (replacing another key's);
 *   query            the key is added to the query by Upstreams.request (returned here);
 *   aws-sigv4        the request signed with the key's AWS credentials, for the region;
 *   google-service-account  a Bearer access token of the key's service account.
 * Derived credentials are redacted like the keys: an access token in the shared redactor
 * (it lives an hour), a request's signature only in that call's answer (returned).
 */
export interface Authorized {
  /** the query-parameter key for Upstreams.request */
  apiKey?: string;
  /** a secret derived for this request alone (a signature): redacted from its answer */
  derived?: string;
}

export async function authorize(provider: ResolvedProvider, key: ProviderKey, req: UpstreamRequest, base: Base, redact: SecretRedactor): Promise<Authorized> {
  const auth = provider.def.auth;
  const h = req.headers;
  switch (auth.style) {
    case 'bearer':
      if (key.apiKey) h.authorization = `Bearer ${key.apiKey}`;
      return {};
    case 'header':
      if (key.apiKey) h[auth.header.toLowerCase()] = `${auth.prefix ?? ''}${key.apiKey}`;
      return {};
    case 'query':
      return { apiKey: key.apiKey };
    case 'google-service-account': {
      const { vertexAccessToken, VERTEX_TOKEN_POLICY } = await vertex();
      const token = await vertexAccessToken(key.serviceAccount!);
      // a token is replaced this long before it expires: the one replaced stays redacted till then
      redact.setDerived(`vertex:${key.name}`, token, Date.now() + VERTEX_TOKEN_POLICY.refreshBeforeExpiryMs + 5_000);
      h.authorization = `Bearer ${token}`;
      return {};
    }
    case 'aws-sigv4': {
      const { signV4, SIGV4_HEADERS } = await sigv4();
      // AWS wants every x-amz-* header signed: the caller's own are not passed on
      for (const name of Object.keys(h)) if (name.startsWith('x-amz-')) delete h[name];
      for (const name of SIGV4_HEADERS) delete h[name];
      const { headers, signature } = await signV4(key.aws!, provider.cloud.region!, auth.service, {
        method: req.method,
        host: base.host,
        path: `${base.basePath}${req.path}`,
        query: req.query ?? '',
        contentType: h['content-type'],
        body: req.body,
      });
      Object.assign(h, headers);
      return { derived: signature };
    }
  }
}
