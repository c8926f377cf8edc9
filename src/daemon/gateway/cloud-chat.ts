import type { Dispatcher } from 'undici';
import { AgwError } from '../../shared/errors.js';
import type { ChatApi, ProviderDef, UsageFormat } from '../../shared/providers/index.js';
import { ConverseStreamToSse, converseToMessages } from './clouds/converse.js';
import { EventStreamToSse } from './clouds/eventstream.js';
import { outbound, type CallTarget, type Inbound, type Outbound } from './translate/plan.js';

/**
 * The cloud providers (azure-openai, bedrock, vertex) as unified-chat and smart-route
 * targets. Their chat API depends on the model (`chatFor`: Vertex's Claude takes the
 * messages format, its Gemini Google's; every Bedrock model the messages format), and
 * their requests are built by their modules (`chatUpstream`: Azure's deployment path and
 * api-version, Bedrock's InvokeModel or Converse, Vertex's project and location). Their
 * credentials are put on each request when it is sent (relay.ts Call.send). Answers
 * Bedrock streams as AWS event stream frames, and Converse answers, become the messages
 * format's before the answer rewriters (translate/answer.ts) take them.
 */
type Obj = Record<string, unknown>;

/** The chat API a provider serves a model in: its own, or a cloud's for that model; undefined: none. */
export function chatApiOf(def: ProviderDef, model: string): ChatApi | undefined {
  if (def.chat && def.chatPath) return def.chat;
  return def.chatUpstream ? def.chatFor?.(model) : undefined;
}

/** The request of a chat call, with (for a cloud) how its answer is read. */
export interface ChatOutbound extends Outbound {
  cloud?: { usageFormat: UsageFormat; eventStream: boolean; answer?: 'converse' };
}

/**
 * outbound() for every chat provider: a cloud's body is built in the format its model takes
 * (as if that were the provider's chat API), then made the cloud's request. What the cloud
 * leaves out joins `dropped` (X-Service-Dropped-Params; strict mode refuses).
 */
export function chatOutbound(i: Inbound, t: CallTarget): ChatOutbound {
  const def = t.provider.def;
  if (!def.chatUpstream) return outbound(i, t);
  const api = def.chatFor?.(t.model);
  const refuse = () => new AgwError('INVALID_REQUEST', `${def.id} cannot serve ${t.model} through unified chat: call it through the proxy (/api/external/${def.id}/…)`, { field: 'model', provider: def.id });
  if (!api) throw refuse();
  const as = { ...t.provider, def: { ...def, chat: api, chatPath: '/models/{model}' } };
  const out = outbound(i, { ...t, provider: as });
  const body: Obj = i.body.stream === true ? { ...out.body, stream: true } : out.body;
  const up = def.chatUpstream(api.format, body, t.model, t.provider.cloud, out.headers);
  if (!up) throw refuse();
  const dropped = [...out.dropped];
  for (const d of up.dropped ?? []) if (!dropped.includes(d)) dropped.push(d);
  const { 'content-type': _ct, ...headers } = up.headers;
  return {
    ...out,
    path: up.path,
    query: up.query || undefined,
    text: up.body,
    headers,
    dropped,
    cloud: { usageFormat: up.usageFormat, eventStream: up.eventStream, answer: up.answer },
  };
}

/** Whether an answer is an AWS event stream (Bedrock's streams). */
export function isAwsEventStream(res: Dispatcher.ResponseData): boolean {
  const ct = res.headers['content-type'];
  return typeof ct === 'string' && ct.includes('application/vnd.amazon.eventstream');
}

interface StreamStep {
  push(b: Buffer): string;
  end(): string;
}
export interface Rewriters {
  json?: (body: Buffer) => Buffer;
  sse?: () => StreamStep;
}

/** Two stream steps one after the other (the second takes the first's text). */
class Chained implements StreamStep {
  constructor(
    private readonly first: StreamStep,
    private readonly then: StreamStep | undefined,
  ) {}

  push(b: Buffer): string {
    const s = this.first.push(b);
    if (!this.then) return s;
    return s ? this.then.push(Buffer.from(s)) : '';
  }

  end(): string {
    const s = this.first.end();
    if (!this.then) return s;
    return (s ? this.then.push(Buffer.from(s)) : '') + this.then.end();
  }
}

/**
 * The rewriters of a chat call's answer (`rw`: from the call's format to the wanted one),
 * with a cloud's own shapes turned into the messages format first: Converse JSON, and AWS
 * event streams (InvokeModel's Anthropic chunks, ConverseStream's events). A converted
 * answer always has `json` (agw sets its content type, text/event-stream for a stream).
 */
export function cloudRewriters(out: ChatOutbound, up: Dispatcher.ResponseData, rw: Rewriters, model: string): Rewriters {
  if (!out.cloud) return rw;
  const converse = out.cloud.answer === 'converse';
  if (isAwsEventStream(up)) {
    return {
      json: rw.json ?? ((b) => b),
      sse: () => new Chained(converse ? new ConverseStreamToSse(model) : new EventStreamToSse(), rw.sse?.()),
    };
  }
  if (converse) {
    const then = rw.json;
    return { ...rw, json: (b) => (then ? then(converseToMessages(b, model)) : converseToMessages(b, model)) };
  }
  return rw;
}
