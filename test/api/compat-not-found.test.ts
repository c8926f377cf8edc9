import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayFixture, type GatewayFixture } from '../helpers/gateway-fixture.js';
import type { TestUser } from '../helpers/daemon.js';

/**
 * Review (Low): on the two compatible base URLs, the answers no route gives (404 for an
 * unknown path, 405 for a method the path does not take) come in the imitated API's error
 * object too, so the SDKs show agw's message: under /gateway/v1/messages (and for a request
 * an Anthropic client sends: `anthropic-version`) Anthropic's, elsewhere under /gateway/v1
 * OpenAI's; every other path keeps the spec's Error body. GET /gateway/v1/models takes the
 * key as `x-api-key`, as the Anthropic SDK's models.list sends it.
 */
let f: GatewayFixture;
let u: TestUser;
beforeAll(async () => {
  f = await startGatewayFixture({ yaml: 'aliases:\n  to-gpt: [ { provider: openai, model: gpt-4o-mini } ]\n' });
  u = await f.d.user({ tier: 'pro', balance: 1 });
});
afterAll(async () => {
  await f?.close();
});

const send = (path: string, init: RequestInit = {}) => f.d.fetch(path, { ...init, headers: { authorization: `Bearer ${u.key}`, ...(init.headers as Record<string, string>) } });

describe('404 and 405 on the base URLs', () => {
  it('an unknown path under /gateway/v1: OpenAI’s error object', async () => {
    const res = await send('/gateway/v1/embeddings', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { message: expect.stringContaining('/gateway/v1/embeddings'), type: 'not_found_error', code: 'NOT_FOUND', param: null } });
  });

  it('a method the path does not take: 405 with Allow, in OpenAI’s error object', async () => {
    const res = await send('/gateway/v1/chat/completions');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'METHOD_NOT_ALLOWED', param: null } });
  });

  it('under /gateway/v1/messages, or with anthropic-version: Anthropic’s error object', async () => {
    const get = await send('/gateway/v1/messages');
    expect(get.status).toBe(405);
    expect(await get.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'METHOD_NOT_ALLOWED' } });
    const batches = await send('/gateway/v1/messages/batches', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(batches.status).toBe(404);
    expect(await batches.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error', code: 'NOT_FOUND', message: expect.stringContaining('batches') } });
    const files = await send('/gateway/v1/files', { headers: { 'anthropic-version': '2023-06-01' } });
    expect(files.status).toBe(404);
    expect(await files.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error', code: 'NOT_FOUND' } });
  });

  it('the SDKs show agw’s message and status', async () => {
    const openai = new OpenAI({ apiKey: u.key, baseURL: `${f.d.api}/gateway/v1`, maxRetries: 0 });
    const e1 = await openai.embeddings.create({ model: 'x', input: 'hi' }).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(OpenAI.NotFoundError);
    expect((e1 as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('NOT_FOUND');
    const anthropic = new Anthropic({ apiKey: u.key, baseURL: `${f.d.api}/gateway`, maxRetries: 0 });
    const e2 = await anthropic.messages.batches.list().catch((e: unknown) => e);
    expect(e2).toBeInstanceOf(Anthropic.NotFoundError);
    expect((e2 as InstanceType<typeof Anthropic.NotFoundError>).message).toContain('no route');
  });

  it('every other path keeps the spec’s Error body', async () => {
    const res = await send('/gateway/nope');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: expect.stringContaining('/api/gateway/nope'), code: 'NOT_FOUND' });
    const chat = await send('/gateway/chat');
    expect(chat.status).toBe(405);
    expect(await chat.json()).toMatchObject({ code: 'METHOD_NOT_ALLOWED', error: expect.any(String) });
  });
});

describe('GET /gateway/v1/models', () => {
  it('takes the key as x-api-key (the Anthropic SDK’s models.list) and lists what the caller may call', async () => {
    const res = await f.d.fetch('/gateway/v1/models', { headers: { 'x-api-key': u.key, 'anthropic-version': '2023-06-01' } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.data.map((m: { id: string }) => m.id)).toContain('to-gpt');
    const anthropic = new Anthropic({ apiKey: u.key, baseURL: `${f.d.api}/gateway`, maxRetries: 0 });
    const ids: string[] = [];
    for await (const m of anthropic.models.list()) {
      expect(m).toMatchObject({ type: 'model', id: expect.any(String), display_name: expect.any(String), created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) });
      ids.push(m.id);
    }
    expect(ids).toContain('to-gpt');
  });

  it('a wrong x-api-key is 401 in OpenAI’s error object', async () => {
    const res = await f.d.fetch('/gateway/v1/models', { headers: { 'x-api-key': 'agw_nope' } });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { type: 'authentication_error', code: 'UNAUTHORIZED' } });
  });
});
