import { generateKeyPairSync } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { converseEvent, eventFrame, json, sigV4Problem, startMock, verifyAssertion, type Mock, type Seen } from './cloud-mocks.js';

/**
 * The three clouds on loopback, answering what a test queues (else a short text answer in
 * the cloud's shape), after checking each request as the cloud would: Azure's `api-key`,
 * Bedrock's SigV4 signature (recomputed, cloud-mocks.ts), Vertex's access token issued by
 * its token endpoint for a verified JWT assertion. Wire formats: Azure = OpenAI chat
 * completions; Bedrock InvokeModel = the Anthropic body, its stream as `chunk` frames whose
 * `bytes` are the messages format's events
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModelWithResponseStream.html),
 * Converse and ConverseStream (API_runtime_Converse.html, API_runtime_ConverseStream.html);
 * Vertex = the messages format (rawPredict / streamRawPredict) and generateContent.
 */
export type Answer =
  | { json: unknown; status?: number }
  /** text/event-stream frames */
  | { sse: string[] }
  /** application/vnd.amazon.eventstream frames */
  | { frames: Buffer[] }
  /** a 400 whose message echoes the request's credentials */
  | { echo: true };

export const AZ_KEY = 'azure-test-key-0123456789abcdef';
export const AWS = { accessKeyId: 'AKIDTESTEXAMPLE0002', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYSCRIPTED' };
const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PUBLIC_PEM = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const SA_EMAIL = 'agw-targets@agw-test-project.iam.gserviceaccount.com';

export interface Clouds {
  azure: Mock;
  bedrock: Mock;
  vertex: Mock;
  queue: { azure: Answer[]; bedrock: Answer[]; vertex: Answer[] };
  tokens: string[];
  /** the providers: block of a config for them */
  yaml: string;
  /** the last non-token request a cloud got, its body parsed */
  last(cloud: 'azure' | 'bedrock' | 'vertex'): Seen & { json: Record<string, unknown> };
  close(): Promise<void>;
}

/** The messages format's SSE frames as InvokeModelWithResponseStream sends them: one `chunk` frame per event, base64 JSON. */
export function invokeChunks(sse: string[]): Buffer[] {
  return sse.flatMap((f) => {
    const data = f.split('\n').find((l) => l.startsWith('data: '));
    if (!data) return [];
    const ev = JSON.parse(data.slice(6)) as { type: string };
    if (ev.type === 'ping') return [];
    const bytes = Buffer.from(JSON.stringify(ev)).toString('base64');
    return [eventFrame({ ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' }, JSON.stringify({ bytes }))];
  });
}

/** A ConverseStream answer: text pieces, tool calls (id, name, input fragments), the stop reason and usage. */
export function converseStream(o: { text?: string[]; tools?: { id: string; name: string; fragments: string[] }[]; stop?: string; usage: { inputTokens: number; outputTokens: number } }): Buffer[] {
  const frames = [converseEvent('messageStart', { role: 'assistant' })];
  let index = 0;
  if (o.text) {
    for (const t of o.text) frames.push(converseEvent('contentBlockDelta', { contentBlockIndex: index, delta: { text: t } }));
    frames.push(converseEvent('contentBlockStop', { contentBlockIndex: index++ }));
  }
  for (const t of o.tools ?? []) {
    frames.push(converseEvent('contentBlockStart', { contentBlockIndex: index, start: { toolUse: { toolUseId: t.id, name: t.name } } }));
    for (const f of t.fragments) frames.push(converseEvent('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: f } } }));
    frames.push(converseEvent('contentBlockStop', { contentBlockIndex: index++ }));
  }
  frames.push(converseEvent('messageStop', { stopReason: o.stop ?? 'end_turn' }));
  frames.push(converseEvent('metadata', { usage: { ...o.usage, totalTokens: o.usage.inputTokens + o.usage.outputTokens }, metrics: { latencyMs: 5 } }));
  return frames;
}

function send(res: ServerResponse, a: Answer, s: Seen): void {
  if ('echo' in a) return json(res, 400, { message: `bad request: ${String(s.headers.authorization)} key=${String(s.headers['api-key'])}` });
  if ('json' in a) return json(res, a.status ?? 200, a.json);
  if ('sse' in a) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const f of a.sse) res.write(f);
    return void res.end();
  }
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
  const all = Buffer.concat(a.frames);
  // cut in the middle of a frame: a frame may arrive in pieces
  res.write(all.subarray(0, 40));
  res.end(all.subarray(40));
}

export async function startClouds(): Promise<Clouds> {
  const queue: Clouds['queue'] = { azure: [], bedrock: [], vertex: [] };
  const tokens: string[] = [];
  const azure = await startMock((s, res) => {
    if (s.headers['api-key'] !== AZ_KEY) return json(res, 401, { error: { code: '401', message: 'Access denied due to invalid subscription key' } });
    send(res, queue.azure.shift() ?? { json: { id: 'c', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 1 } } }, s);
  });
  const bedrock = await startMock((s, res) => {
    const problem = sigV4Problem(s, AWS.secretAccessKey);
    if (problem) return json(res, 403, { message: problem });
    send(res, queue.bedrock.shift() ?? { json: { message: 'nothing queued' }, status: 500 }, s);
  });
  const vertex = await startMock((s, res) => {
    if (s.url === '/token') {
      const v = verifyAssertion(new URLSearchParams(s.body).get('assertion') ?? '', PUBLIC_PEM);
      if (!v.claims || v.claims.iss !== SA_EMAIL) return json(res, 400, { error: 'invalid_grant', error_description: v.problem });
      const token = `ya29.targets-token-${tokens.length + 1}-abcdefghijkl`;
      tokens.push(token);
      return json(res, 200, { access_token: token, expires_in: 3600, token_type: 'Bearer' });
    }
    if (!tokens.includes(String(s.headers.authorization ?? '').replace(/^Bearer /, ''))) return json(res, 401, { error: { code: 401, message: 'Request had invalid authentication credentials.' } });
    send(res, queue.vertex.shift() ?? { json: { error: { code: 500, message: 'nothing queued' } }, status: 500 }, s);
  });
  const sa = JSON.stringify({
    type: 'service_account',
    project_id: 'agw-test-project',
    private_key_id: 'kid-targets',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: SA_EMAIL,
    token_uri: `${vertex.url}/token`,
  });
  const yaml = `
providers:
  azure-openai:
    baseUrl: ${azure.url}
    apiKey: ${AZ_KEY}
    deployments: { gpt-4o-mini: chat-mini }
  bedrock:
    baseUrl: ${bedrock.url}
    region: us-west-2
    accessKeyId: ${AWS.accessKeyId}
    secretAccessKey: ${AWS.secretAccessKey}
  vertex:
    baseUrl: ${vertex.url}
    location: us-east5
    serviceAccount: '${sa}'
`;
  const mocks = { azure, bedrock, vertex };
  return {
    ...mocks,
    queue,
    tokens,
    yaml,
    last(cloud) {
      const s = mocks[cloud].seen.filter((x) => x.url !== '/token').at(-1)!;
      return { ...s, json: JSON.parse(s.body) as Record<string, unknown> };
    },
    close: async () => {
      await Promise.all([azure.close(), bedrock.close(), vertex.close()]);
    },
  };
}
