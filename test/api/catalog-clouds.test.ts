import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

/**
 * Review (Low): the public catalog (GET /api/portal/providers/public, no credentials) shows
 * a cloud provider's generic base URL, never the operator's own endpoint: an Azure OpenAI
 * resource's host names the operator's resource, a Bedrock VPC endpoint or a Vertex
 * private endpoint their network. Other providers show their base URL as configured.
 */
const YAML = `
providers:
  azure-openai:
    baseUrl: https://contoso-private-llm.openai.azure.com
    apiKey: azure-test-key-0123456789abcdef
    deployments: { gpt-4o-mini: chat-mini }
  bedrock:
    baseUrl: https://vpce-0abc123def.bedrock-runtime.eu-west-1.vpce.amazonaws.com
    region: eu-west-1
    accessKeyId: AKIDTESTEXAMPLE0009
    secretAccessKey: wJalrXUtnFEMI/K7MDENG+bPxRfiCYCATALOG
  vertex:
    baseUrl: https://internal-vertex.corp.example
    location: europe-west4
    project: p
  mistral:
    baseUrl: http://127.0.0.1:9/mistral
`;
let d: TestDaemon;
beforeAll(async () => {
  d = await startTestDaemon({ yaml: YAML });
});
afterAll(async () => {
  await d?.close();
});

describe('the public catalog and the clouds', () => {
  it('shows each cloud’s generic endpoint, not the configured one', async () => {
    const res = await fetch(`${d.api}/portal/providers/public`);
    const text = await res.text();
    const byId = new Map((JSON.parse(text).providers as { id: string; baseUrl: string }[]).map((p) => [p.id, p.baseUrl]));
    expect(byId.get('azure-openai')).toBe('https://your-resource.openai.azure.com');
    expect(byId.get('bedrock')).toBe('https://bedrock-runtime.eu-west-1.amazonaws.com');
    expect(byId.get('vertex')).toBe('https://europe-west4-aiplatform.googleapis.com');
    for (const own of ['contoso', 'vpce-0abc123def', 'internal-vertex']) expect(text).not.toContain(own);
    expect(byId.get('mistral')).toBe('http://127.0.0.1:9/mistral');
  });
});
