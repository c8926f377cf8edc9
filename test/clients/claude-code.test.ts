import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loop, startTarget, type ClientTarget } from './target.js';

/**
 * Claude Code itself (@anthropic-ai/claude-code: its native binary, from the per-platform
 * package), offline, in a two-turn loop with one of its own tools: the model asks to Read
 * a file, Claude Code reads it and sends the result back, the model answers with it.
 * `--allowedTools Read` because permissions cannot be skipped as root; a temporary HOME so
 * nothing of the machine's own configuration is read or written.
 */
/**
 * The native binary from the per-platform package (what the wrapper's postinstall links
 * to node_modules/.bin/claude); the wrapper's bin when that package is not where we look.
 */
const platformBin = join(process.cwd(), 'node_modules', '@anthropic-ai', `claude-code-${process.platform}-${process.arch}`, 'claude');
const CLAUDE = existsSync(platformBin) ? platformBin : join(process.cwd(), 'node_modules', '.bin', 'claude');
const work = mkdtempSync(join(tmpdir(), 'agw-claude-code-'));
const note = join(work, 'note.txt');
writeFileSync(note, 'the password is periwinkle-42\n');

interface ClaudeResult {
  type: string;
  subtype: string;
  is_error: boolean;
  num_turns: number;
  result: string;
}

function claude(t: ClientTarget): Promise<{ code: number | null; json?: ClaudeResult; stderr: string; ms: number }> {
  const home = mkdtempSync(join(work, 'home-'));
  mkdirSync(join(home, '.claude'), { recursive: true });
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(CLAUDE, ['-p', `Read ${note} and tell me the password.`, '--output-format', 'json', '--allowedTools', 'Read'], {
      cwd: work,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        ANTHROPIC_BASE_URL: t.anthropicBase,
        ANTHROPIC_API_KEY: t.key,
        ANTHROPIC_MODEL: t.anthropicModel,
        ANTHROPIC_SMALL_FAST_MODEL: t.anthropicModel,
        ANTHROPIC_DEFAULT_HAIKU_MODEL: t.anthropicModel,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => {
      let json: ClaudeResult | undefined;
      try {
        json = JSON.parse(stdout) as ClaudeResult;
      } catch {
        json = undefined;
      }
      resolve({ code, json, stderr, ms: Date.now() - started });
    });
  });
}

const script = [{ name: 'Read', input: { file_path: note } }, (r: string) => `The note says: ${r}`] as const;
const targets = { mock: await startTarget('mock', ...script), proxy: await startTarget('proxy', ...script), agw: await startTarget('agw', ...script) };
afterAll(async () => {
  await Promise.all(Object.values(targets).map((t) => t.close()));
  rmSync(work, { recursive: true, force: true });
});

describe.each(Object.values(targets))('Claude Code -p, two-turn loop with its Read tool, via $via', (t) => {
  it.skipIf(t.unavailable !== '')(`reads the file and answers with it${t.unavailable ? ` (skipped: ${t.unavailable})` : ''}`, async () => {
    const r = await claude(t);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ type: 'result', subtype: 'success', is_error: false, num_turns: 2 });
    expect(r.json!.result).toContain('periwinkle-42');
    const up = t.forAnthropicClients;
    expect(loop(up)).toEqual(['tool', 'final']);
    // streamed, with the Read tool on offer, and the second turn carries the tool's output
    const [first, second] = up.requests.filter((q) => q.answered !== 'other');
    expect(first.body.stream).toBe(true);
    expect(JSON.stringify(second.body)).toContain('periwinkle-42');
    // straight to the mock the caller's key arrives; through agw, agw's provider key instead
    if (t.via === 'mock') expect(first.headers['x-api-key']).toBe(t.key);
    else expect(JSON.stringify(first.headers)).not.toContain(t.key);
    if (t.via === 'agw') {
      // through /api/gateway to the common-format provider: the tool loop in its format
      expect(first.path).toBe('/v1/chat/completions');
      const calls = (second.body.messages as { role: string; tool_calls?: { function: { name: string } }[] }[]).flatMap((m) => m.tool_calls ?? []);
      expect(calls.map((c) => c.function.name)).toEqual(['Read']);
      expect((second.body.messages as { role: string }[]).some((m) => m.role === 'tool')).toBe(true);
      // never more output than the model writes (Claude Code asks for 32000; gpt-4o-mini: 16,384)
      expect(first.body.max_completion_tokens).toBeLessThanOrEqual(16_384);
      // metered and logged like unified chat; what gpt-4o-mini cannot honour named in Claude
      // Code's own words (its betas, cache_control; its adaptive thinking and effort: the model does not reason)
      const recs = (await t.records!()).filter((x) => x.alias === t.anthropicModel);
      expect(recs.length).toBe(2);
      for (const rec of recs) {
        expect(rec).toMatchObject({ endpoint: 'chat', provider: 'openai', model: 'gpt-4o-mini', stream: true, status: 200 });
        expect(rec.droppedParams).toEqual(expect.arrayContaining(['anthropic-beta', 'cache_control']));
        for (const ours of ['reasoning_effort', 'parallel_tool_calls', 'user', 'response_format']) expect(rec.droppedParams).not.toContain(ours);
      }
    }
    console.log(`claude -p via ${t.via}: ${r.ms} ms`);
  });
});
