import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { AGW_BIN } from '../helpers/cli.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';

/**
 * Telemetry off costs nothing: a real `agw serve --demo` serving gateway calls never
 * loads a module of @opentelemetry (every module the process resolves is logged by a
 * loader hook); the same daemon with telemetry.otlpEndpoint loads them and exports.
 */
const HOOK = fileURLToPath(new URL('../helpers/import-log/register.mjs', import.meta.url));
const dirs: string[] = [];
let rx: OtlpReceiver | undefined;
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await rx?.close();
});

async function serveAndChat(yaml: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'agw-otel-'));
  dirs.push(dir);
  const log = join(dir, 'imports.log');
  writeFileSync(join(dir, 'agw.yaml'), yaml);
  const child = spawn(process.execPath, ['--import', HOOK, AGW_BIN, 'serve', '--demo', '--json', '--port', '0', '--data', dir], {
    env: { ...process.env, AGW_IMPORT_LOG: log, AGW_IMPORT_LOG_MATCH: '@opentelemetry', AGW_STORE: undefined, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((r) => child.on('close', r));
  try {
    const demo = await new Promise<{ url: string; key: string }>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        const line = out.split('\n').find((l) => l.includes('"event":"demo"'));
        if (line) resolve(JSON.parse(line));
      });
      exited.then((c) => reject(new Error(`agw serve exited with ${c}`)));
    });
    for (const stream of [false, true]) {
      const res = await fetch(`${demo.url}/api/gateway/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${demo.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'smart-lite', stream, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(200);
      await res.text();
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  return existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : [];
}

describe('OpenTelemetry is loaded only when configured', () => {
  test('telemetry off: gateway calls are served and no @opentelemetry module is ever resolved', async () => {
    expect(await serveAndChat('{}\n')).toEqual([]);
  });

  test('telemetry on: the same daemon loads the exporter and the spans arrive', async () => {
    rx = await startOtlpReceiver();
    const loaded = await serveAndChat(`telemetry:\n  otlpEndpoint: ${rx.url}\n`);
    expect(loaded.some((u) => u.includes('@opentelemetry/exporter-trace-otlp-http'))).toBe(true);
    await rx.waitForSpan((s) => s.attributes['gen_ai.request.model'] === 'smart-lite');
  });
});
