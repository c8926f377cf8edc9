import { emptyUsage, isObj, num, str, type NeutralAnswer, type StopReason, type Usage } from './neutral.js';

/** Gemini answers (https://ai.google.dev/api/generate-content#generatecontentresponse) to the neutral form. */
type Obj = Record<string, unknown>;

const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

export function geminiStop(reason: unknown, hasCalls: boolean): StopReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(String(reason))) return 'content_filter';
  return hasCalls ? 'tool_calls' : 'stop';
}

/** usageMetadata → neutral: promptTokenCount includes cached tokens; output includes thoughts. */
export function geminiUsage(u: Obj): Partial<Usage> {
  const prompt = (num(u.promptTokenCount) ?? 0) + (num(u.toolUsePromptTokenCount) ?? 0);
  const cached = num(u.cachedContentTokenCount) ?? 0;
  const thoughts = num(u.thoughtsTokenCount);
  return { input: Math.max(0, prompt - cached), cacheRead: cached, output: (num(u.candidatesTokenCount) ?? 0) + (thoughts ?? 0), ...(thoughts !== undefined && { reasoning: thoughts }) };
}

/** The call id of a function call (Gemini's own when it gives one). */
export const callId = (responseId: string, n: number, id: unknown): string => str(id) ?? `call_${responseId}_${n}`;

export function parseGeminiAnswer(o: Obj, fallbackModel: string): NeutralAnswer {
  const cand = Array.isArray(o.candidates) && isObj(o.candidates[0]) ? o.candidates[0] : {};
  const content = isObj(cand.content) ? cand.content : {};
  const id = str(o.responseId) ?? 'gemini';
  const parts: NeutralAnswer['parts'] = [];
  let calls = 0;
  for (const p of Array.isArray(content.parts) ? (content.parts as Obj[]) : []) {
    const sig = str(p.thoughtSignature);
    if (isObj(p.functionCall)) {
      const fc = p.functionCall;
      parts.push({ type: 'tool_call', id: callId(id, calls++, fc.id), name: String(fc.name), args: JSON.stringify(fc.args ?? {}), signature: sig });
    } else if (typeof p.text === 'string') {
      if (p.thought === true) parts.push({ type: 'thinking', text: p.text, signature: sig });
      else parts.push({ type: 'text', text: p.text });
    }
  }
  return {
    id,
    model: str(o.modelVersion) ?? fallbackModel,
    parts,
    stop: geminiStop(cand.finishReason, calls > 0),
    usage: { ...emptyUsage(), ...(isObj(o.usageMetadata) ? geminiUsage(o.usageMetadata) : {}) },
  };
}
