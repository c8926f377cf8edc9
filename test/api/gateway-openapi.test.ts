import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

let d: TestDaemon;
beforeAll(async () => {
  d = await startTestDaemon();
});
afterAll(async () => {
  await d?.close();
});

type Op = { requestBody?: { content: Record<string, { schema: { required?: string[]; properties: Record<string, unknown> } }> }; responses: Record<string, unknown>; parameters?: { name: string; in: string }[] };

describe('gateway routes in the OpenAPI document', () => {
  it('lists every gateway path, named as in the spec, with request and response schemas', async () => {
    const doc = (await (await d.fetch('/openapi.json')).json()) as { paths: Record<string, Record<string, Op>> };
    const paths = doc.paths;
    const proxy = paths['/api/external/{provider}/{path}'];
    expect(Object.keys(proxy).sort()).toEqual(['get', 'post']);
    expect(proxy.post.parameters!.filter((p) => p.in === 'path').map((p) => p.name).sort()).toEqual(['path', 'provider']);
    expect(Object.keys(proxy.post.responses).sort()).toEqual(['200', '400', '401', '402', '403', '404', '429', '501', '503']);

    const chat = paths['/api/gateway/chat'].post;
    const body = chat.requestBody!.content['application/json'].schema;
    expect(body.required).toEqual(['model', 'messages']);
    expect(Object.keys(body.properties)).toEqual(expect.arrayContaining(['model', 'messages', 'stream', 'temperature', 'top_p', 'max_tokens', 'stop']));
    expect(Object.keys(chat.responses).sort()).toEqual(['200', '400', '401', '402', '403', '429', '503']);

    const smart = paths['/api/external/smart/v1/chat/completions'].post;
    expect(Object.keys(smart.responses)).toEqual(expect.arrayContaining(['200', '401', '402', '503']));
    expect(Object.keys(paths['/api/gateway/entitlements'].get.responses)).toEqual(expect.arrayContaining(['200', '304', '401']));
    expect(paths['/api/gateway/aliases'].get.responses['200']).toBeDefined();
  });

  it('lists the two compatible base URLs, with the imitated APIs’ error objects (issue #28)', async () => {
    const doc = (await (await d.fetch('/openapi.json')).json()) as { paths: Record<string, Record<string, Op>> };
    const p = doc.paths;
    const cc = p['/api/gateway/v1/chat/completions'].post;
    expect(cc.requestBody!.content['application/json'].schema.required).toEqual(['model', 'messages']);
    expect(Object.keys(cc.requestBody!.content['application/json'].schema.properties)).toEqual(
      expect.arrayContaining(['tools', 'tool_choice', 'parallel_tool_calls', 'response_format', 'reasoning_effort', 'max_completion_tokens']),
    );
    expect(JSON.stringify(cc.responses['400'])).toContain('param');
    expect(p['/api/gateway/v1/models'].get.responses['200']).toBeDefined();
    const m = p['/api/gateway/v1/messages'].post;
    expect(m.requestBody!.content['application/json'].schema.required).toEqual(['model', 'messages']);
    expect(JSON.stringify(m.responses['402'])).toContain('"error"');
    expect(p['/api/gateway/v1/messages/count_tokens'].post.responses['200']).toBeDefined();
  });
});
