import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

/**
 * Issue #2 point 9: the OpenAPI 3.1 document (version 1.0.0) is generated from the schemas
 * that validate requests, served as JSON, YAML and Markdown, and passes `redocly lint`
 * with every route group registered.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  responses: Record<string, unknown>;
  requestBody?: { content: Record<string, { schema: { properties?: Record<string, Record<string, unknown>> } }> };
}
interface Doc {
  openapi: string;
  info: { version: string; title: string };
  paths: Record<string, Record<string, Operation>>;
}

let d: TestDaemon;
let doc: Doc;
let json: string;
const operations = () =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([m]) => METHODS.includes(m))
      .map(([method, op]) => ({ path, method, op })),
  );

beforeAll(async () => {
  d = await startTestDaemon({ yaml: 'wallet: { selfTopup: true }\n' });
  const res = await d.fetch('/openapi.json');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  json = await res.text();
  doc = JSON.parse(json);
});
afterAll(() => d.close());

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1, document version 1.0.0, and lists the foundation routes', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.paths['/api/healthz']?.get).toBeDefined();
    expect(doc.paths['/api/portal/providers/public']?.get).toBeDefined();
    expect(doc.paths['/api/wallet/topup']?.post).toBeDefined();
  });

  it('passes `redocly lint` with no errors', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agw-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, json);
      const cli = join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');
      const run = await promisify(execFile)(process.execPath, [cli, 'lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format', 'json'], {
        cwd: ROOT,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
        maxBuffer: 32 * 1024 * 1024,
      }).catch((e: { stdout?: string; stderr?: string }) => ({ stdout: e.stdout ?? '', stderr: e.stderr ?? '' }));
      const report = JSON.parse(run.stdout.slice(run.stdout.indexOf('{')));
      const errors = report.problems.filter((p: { severity: string }) => p.severity === 'error');
      expect(errors.map((p: { ruleId: string; message: string; location: { pointer: string }[] }) => `${p.ruleId} ${p.location?.[0]?.pointer}: ${p.message}`)).toEqual([]);
      expect(report.totals.errors).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('every operation has a unique operationId; authenticated ones declare security and a 401', () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { path, method, op } of operations()) {
      expect(Array.isArray(op.security), `${method} ${path}`).toBe(true);
      // credentials required (no anonymous `{}` alternative): the 401 answer is documented
      const required = op.security!.length > 0 && op.security!.every((s) => Object.keys(s).length > 0);
      if (required) expect(op.responses['401'], `${method} ${path}`).toBeDefined();
    }
    expect(doc.paths['/api/wallet'].get.security).toEqual([{ bearer: [] }, { session: [] }]);
    expect(doc.paths['/api/healthz'].get.security).toEqual([]);
  });

  it('is generated from the schema that validates: the documented top-up limit is the enforced one', async () => {
    const amount = doc.paths['/api/wallet/topup'].post.requestBody!.content['application/json'].schema.properties!.amount;
    expect(amount).toMatchObject({ type: 'number', exclusiveMinimum: 0, maximum: 10000 });
    const u = await d.user();
    const over = await d.fetch('/wallet/topup', { method: 'POST', key: u.key, json: { amount: (amount.maximum as number) + 1 } });
    expect(over.status).toBe(400);
    const at = await d.fetch('/wallet/topup', { method: 'POST', key: u.key, json: { amount: amount.maximum } });
    expect(at.status).toBe(200);
  });

  it('the YAML form is the same document', async () => {
    const res = await d.fetch('/openapi.yaml');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/yaml/);
    expect(parseYaml(await res.text())).toEqual(doc);
  });

  it('the Markdown form has a section for every operation', async () => {
    const res = await d.fetch('/openapi.md');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/markdown/);
    const md = await res.text();
    expect(md).toMatch(/^# .+\n\nOpenAPI 3\.1\.\d+, document version 1\.0\.0\./);
    for (const { path, method } of operations()) expect(md).toContain(`### ${method.toUpperCase()} ${path}\n`);
  });
});
