import type { ChatApi } from '../../../shared/providers/index.js';
import { AgwError } from '../../../shared/errors.js';
import { argsObject, budgetOf, dataUrl, drop, mediaTypeOfUrl, type ImagePart, type NeutralRequest, type Part, type TextPart } from './neutral.js';

/**
 * Neutral → a Gemini generateContent body (https://ai.google.dev/api/generate-content):
 * contents/parts, systemInstruction, functionDeclarations, functionCall/functionResponse,
 * inlineData/fileData, generationConfig with thinkingConfig.
 */
type Obj = Record<string, unknown>;

/**
 * Gemini 3 refuses a replayed function call without the thought signature it came with;
 * for history that never had one (another provider's call) the documented placeholder
 * stands in (https://ai.google.dev/gemini-api/docs/thought-signatures).
 */
const SIGNATURE_PLACEHOLDER = 'skip_thought_signature_validator';
const needsSignature = (model: string) => /^gemini-3/.test(model);

function mediaPart(p: ImagePart): Obj {
  const d = dataUrl(p.url);
  return d ? { inlineData: { mimeType: d.mediaType, data: d.data } } : { fileData: { mimeType: mediaTypeOfUrl(p.url), fileUri: p.url } };
}

function partsOut(parts: Part[], model: string, names: Map<string, string>): Obj[] {
  const out: Obj[] = [];
  let signature: string | undefined; // a signed thought rides on the turn's first function call
  let firstCall = true;
  for (const p of parts) {
    switch (p.type) {
      case 'text':
        if (p.text) out.push({ text: p.text });
        break;
      case 'image':
        out.push(mediaPart(p));
        break;
      case 'file':
        out.push({ inlineData: { mimeType: p.mediaType, data: p.data } });
        break;
      case 'thinking':
        signature ??= p.signature;
        break;
      case 'tool_call': {
        const args = argsObject(p.args);
        if (!args) throw new AgwError('INVALID_REQUEST', `the arguments of tool call ${p.id} are not a JSON object`, { field: 'messages', reason: 'tool_call_arguments' });
        names.set(p.id, p.name);
        const sig = p.signature ?? (firstCall ? (signature ?? (needsSignature(model) ? SIGNATURE_PLACEHOLDER : undefined)) : undefined);
        out.push({ functionCall: { name: p.name, args }, ...(sig && { thoughtSignature: sig }) });
        firstCall = false;
        break;
      }
      case 'tool_result': {
        const text = p.content.filter((c): c is TextPart => c.type === 'text').map((c) => c.text).join('');
        out.push({ functionResponse: { name: names.get(p.id) ?? p.id, response: p.isError ? { error: text } : { output: text } } });
        for (const c of p.content) if (c.type === 'image') out.push(mediaPart(c));
        break;
      }
    }
  }
  return out;
}

function toolConfig(req: NeutralRequest): Obj | undefined {
  const c = req.toolChoice;
  if (c === undefined) return undefined;
  if (c === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (c === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (c === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [c.name] } };
}

function thinkingConfig(req: NeutralRequest, model: string, api: ChatApi, dropped: string[]): Obj | undefined {
  const r = req.reasoning;
  if (!r) return undefined;
  const name = 'reasoning_effort'; // in the common format's words; the caller's own: NeutralRequest.callerNames
  if (!(api.reasoningModels?.test(model) ?? false)) {
    if (r.effort !== 'none') drop(dropped, name);
    return undefined;
  }
  if (r.adaptive) return { thinkingBudget: -1, includeThoughts: true }; // dynamic thinking: the model decides
  const budget = budgetOf(r)!;
  if (budget === 0) {
    // 2.5 Pro cannot stop thinking (https://ai.google.dev/gemini-api/docs/thinking)
    if (/pro/.test(model)) drop(dropped, name);
    return /pro/.test(model) ? undefined : { thinkingBudget: 0 };
  }
  return { thinkingBudget: Math.min(budget, 24576), includeThoughts: true };
}

export interface GeminiCall {
  body: Obj;
  path: string;
  query?: string;
}

/** Neutral → Gemini. `chatPath` holds `{model}`; the method and, streamed, `alt=sse` follow. */
export function neutralToGemini(req: NeutralRequest, model: string, maxOutput: number, chatPath: string, api: ChatApi, dropped: string[]): GeminiCall {
  const names = new Map<string, string>();
  const contents: Obj[] = [];
  for (const turn of req.turns) {
    const parts = partsOut(turn.parts, model, names);
    if (!parts.length) continue;
    const role = turn.role === 'assistant' ? 'model' : 'user';
    const last = contents.at(-1);
    if (last?.role === role) (last.parts as Obj[]).push(...parts);
    else contents.push({ role, parts });
  }
  const body: Obj = { contents };
  if (req.system.length) body.systemInstruction = { parts: req.system.map((p) => ({ text: p.text })) };
  if (req.tools?.length) {
    body.tools = [{ functionDeclarations: req.tools.map((t) => ({ name: t.name, ...(t.description !== undefined && { description: t.description }), parametersJsonSchema: t.parameters })) }];
    if (req.tools.some((t) => t.strict)) drop(dropped, 'tools.strict');
  }
  const tc = toolConfig(req);
  if (tc) body.toolConfig = tc;
  if (req.parallelToolCalls === false && req.tools?.length) drop(dropped, 'parallel_tool_calls');
  const gen: Obj = {};
  if (req.maxTokens !== undefined) gen.maxOutputTokens = Math.min(req.maxTokens, maxOutput);
  if (req.temperature !== undefined) gen.temperature = req.temperature;
  if (req.topP !== undefined) gen.topP = req.topP;
  if (req.topK !== undefined) gen.topK = req.topK;
  if (req.stop?.length) gen.stopSequences = req.stop;
  if (req.n !== undefined) gen.candidateCount = req.n;
  if (req.seed !== undefined) gen.seed = req.seed;
  if (req.presencePenalty !== undefined) gen.presencePenalty = req.presencePenalty;
  if (req.frequencyPenalty !== undefined) gen.frequencyPenalty = req.frequencyPenalty;
  const rf = req.responseFormat;
  if (rf) {
    gen.responseMimeType = 'application/json';
    if (rf.type === 'json_schema') gen.responseJsonSchema = rf.schema;
  }
  const thinking = thinkingConfig(req, model, api, dropped);
  if (thinking) gen.thinkingConfig = thinking;
  if (Object.keys(gen).length) body.generationConfig = gen;
  if (req.user !== undefined) drop(dropped, 'user');
  const base = chatPath.replace('{model}', encodeURIComponent(model));
  return req.stream ? { body, path: `${base}:streamGenerateContent`, query: 'alt=sse' } : { body, path: `${base}:generateContent` };
}
