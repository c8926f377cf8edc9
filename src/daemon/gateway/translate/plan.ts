import type { ResolvedProvider } from '../../../shared/config/resolve.js';
import type { ChatApi, ChatFormat } from '../../../shared/providers/index.js';
import { adaptCommon, commonToNeutral, neutralToCommon } from './common-request.js';
import { neutralToGemini } from './gemini-request.js';
import { adaptMessages, messagesToNeutral, neutralToMessages } from './messages-request.js';
import { drop, dropAsCaller, type NeutralRequest } from './neutral.js';
import { DEARER_TIERS } from '../../money/unpriced.js';

/**
 * The request one chat call sends upstream, from the caller's body in the common or the
 * messages format, for a provider of any chat format. A body already in the provider's
 * format passes with the least change (the concrete model; usage on common streams; the
 * output cap on messages calls; the provider's own names and what it does not take); any
 * other goes through the neutral form. What the provider cannot honour is in `dropped`; an
 * output cap above the model's limit is lowered to it, whichever the formats.
 */
type Obj = Record<string, unknown>;
export type InboundFormat = 'common' | 'messages';

export interface Outbound {
  /** the upstream's format */
  format: ChatFormat;
  body: Obj;
  text: string;
  path: string;
  query?: string;
  /** request headers for the upstream beyond auth and content type (anthropic-beta) */
  headers: Record<string, string>;
  /** the caller's fields the provider cannot honour (X-Service-Dropped-Params) */
  dropped: string[];
}

export interface CallTarget {
  provider: ResolvedProvider;
  model: string;
  /** the model's output limit (what a messages-format call gets as max_tokens without one) */
  maxOutput: number;
}

export interface Inbound {
  format: InboundFormat;
  body: Obj;
  /** the caller's anthropic-beta header and query string (messages format) */
  betas?: string;
  query?: string;
}

interface Emitted {
  body: Obj;
  path: string;
  query?: string;
}

type Emit = (req: NeutralRequest, t: CallTarget, api: ChatApi, dropped: string[]) => Emitted;

const EMIT: Record<ChatFormat, Emit> = {
  common: (req, t, api, dropped) => ({ body: neutralToCommon(req, t.model, t.maxOutput, api, dropped), path: t.provider.def.chatPath! }),
  messages: (req, t, api, dropped) => ({ body: neutralToMessages(req, t.model, t.maxOutput, api, dropped), path: t.provider.def.chatPath! }),
  gemini: (req, t, api, dropped) => neutralToGemini(req, t.model, t.maxOutput, t.provider.def.chatPath!, api, dropped),
};

const PARSE: Record<InboundFormat, (b: Obj) => NeutralRequest> = { common: commonToNeutral, messages: messagesToNeutral };

/** The same format on both sides: the caller's body, fitted to the provider. */
function sameFormat(i: Inbound, t: CallTarget, api: ChatApi): Outbound {
  const path = t.provider.def.chatPath!;
  if (i.format === 'messages') {
    const body = adaptMessages(i.body, t.model, t.maxOutput);
    return { format: api.format, body, text: JSON.stringify(body), path, query: i.query, headers: i.betas ? { 'anthropic-beta': i.betas } : {}, dropped: [] };
  }
  const body: Obj = { ...i.body, model: t.model };
  // the output cap at most the model's limit, as on the messages format: behind an alias the
  // caller cannot know the model, and coding agents ask every model for 128000 (refused upstream)
  for (const k of ['max_completion_tokens', 'max_tokens']) {
    if (typeof body[k] === 'number' && (body[k] as number) > t.maxOutput) body[k] = t.maxOutput;
  }
  // a provider that does not enforce its models' output limits would write up to the context
  // window without a cap: it gets the model's limit, what the call is held for (money/hold.ts)
  if (t.provider.def.outputCapEnforced !== true && body.max_tokens === undefined && body.max_completion_tokens === undefined) body.max_tokens = t.maxOutput;
  if (body.stream === true) {
    const so = body.stream_options && typeof body.stream_options === 'object' ? (body.stream_options as Obj) : {};
    body.stream_options = { ...so, include_usage: true };
  }
  const dropped: string[] = [];
  // a service tier billed above the standard price is not served (money/unpriced.ts): left out and named
  if (DEARER_TIERS.has(body.service_tier)) {
    delete body.service_tier;
    drop(dropped, 'service_tier');
  }
  adaptCommon(body, t.model, api, dropped);
  return { format: api.format, body, text: JSON.stringify(body), path, headers: {}, dropped };
}

export function outbound(i: Inbound, t: CallTarget): Outbound {
  const api = t.provider.def.chat!;
  if (api.format === i.format) return sameFormat(i, t, api);
  const req = PARSE[i.format](i.body);
  const dropped = [...req.dropped];
  if (i.betas) drop(dropped, 'anthropic-beta');
  const named: string[] = [];
  const e = EMIT[api.format](req, t, api, named);
  dropAsCaller(dropped, named, req.callerNames);
  return { format: api.format, body: e.body, text: JSON.stringify(e.body), path: e.path, query: e.query, headers: {}, dropped };
}
