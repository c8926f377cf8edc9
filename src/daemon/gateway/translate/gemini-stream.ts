import { callId, geminiStop, geminiUsage } from './gemini-response.js';
import { isObj, str, type StreamEvent } from './neutral.js';
import type { SseEvent } from './sse.js';

/**
 * Gemini's streamGenerateContent?alt=sse (each event a GenerateContentResponse;
 * https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent) to
 * neutral events. A function call arrives whole in one chunk: it starts, gets its
 * arguments and ends at once.
 */
type Obj = Record<string, unknown>;

export class GeminiStreamParser {
  private started = false;
  private id = 'gemini';
  private calls = 0;
  private finished = false;

  parse(e: SseEvent): StreamEvent[] {
    let o: Obj;
    try {
      o = JSON.parse(e.data) as Obj;
    } catch {
      return [];
    }
    if (isObj(o.error)) return [{ t: 'error', type: String(o.error.status ?? 'api_error'), message: String(o.error.message ?? 'upstream error') }];
    const out: StreamEvent[] = [];
    if (!this.started) {
      this.started = true;
      this.id = str(o.responseId) ?? this.id;
      out.push({ t: 'start', id: this.id, model: str(o.modelVersion) });
    }
    const cand = Array.isArray(o.candidates) && isObj(o.candidates[0]) ? o.candidates[0] : {};
    const content = isObj(cand.content) ? cand.content : {};
    for (const p of Array.isArray(content.parts) ? (content.parts as Obj[]) : []) {
      const sig = str(p.thoughtSignature);
      if (isObj(p.functionCall)) {
        const fc = p.functionCall;
        const call = this.calls++;
        out.push({ t: 'tool_start', call, id: callId(this.id, call, fc.id), name: String(fc.name), signature: sig });
        out.push({ t: 'tool_args', call, json: JSON.stringify(fc.args ?? {}) }, { t: 'tool_end', call });
      } else if (typeof p.text === 'string') {
        if (p.thought === true) {
          out.push({ t: 'thinking', text: p.text });
          if (sig) out.push({ t: 'signature', signature: sig });
        } else if (p.text) out.push({ t: 'text', text: p.text });
      }
    }
    if (cand.finishReason && !this.finished) {
      this.finished = true;
      out.push({ t: 'finish', stop: geminiStop(cand.finishReason, this.calls > 0) });
    }
    if (isObj(o.usageMetadata)) out.push({ t: 'usage', usage: geminiUsage(o.usageMetadata) });
    return out;
  }
}
