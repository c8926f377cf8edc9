import type { ModelInfo, ResolvedConfig, ResolvedProvider } from '../../shared/config/resolve.js';
import { DEFAULT_CONTEXT_TOKENS, DEFAULT_MAX_OUTPUT_TOKENS } from '../../shared/providers/index.js';
import { nanoToUsd, picoToNano } from '../../shared/money.js';
import { dearestRow, priceRow, unitCost, type UnitCharge } from './pricing.js';

/**
 * What a call may cost at most, known before the upstream is contacted (CONTRACT
 * "Spending order … Holds"): the hold its admission takes.
 *
 * Token-priced: promptBound × the dearest input-side price + outputCap × the output price,
 * × margin, at the dearest level the prompt could reach (CONTRACT third round, "Exact cost
 * for every token class"):
 * - promptBound: the UTF-8 byte count of the request body as sent upstream, plus
 *   MEDIA_PART_TOKENS per image/audio/file part. Byte-level BPE tokenizers never make more
 *   tokens than bytes, and the body's JSON syntax ({"role":"user","content":""} per
 *   message) is more than the per-message overhead providers add, so text is bounded.
 *   A media part's tokens depend on its pixels, which the body does not say: a provider
 *   that reports more than the hold covered is capped at the hold and the rest written
 *   off (settle.ts), never charged. Context held at the provider (`previous_response_id`,
 *   `conversation`, a Gemini `cachedContent`) is not in the body: such a call's prompt is
 *   bounded by the model's context window (`contextTokens`) instead.
 * - the dearest input-side price: the dearest of uncached input, cache reads, 5-minute and
 *   1-hour cache writes (any of the prompt's tokens may be any of them), at the dearest
 *   level (base or tier) whose threshold the prompt bound is above; the output price at
 *   that level too (a tier prices all the call's tokens).
 * - outputCap: the largest of max_tokens / max_completion_tokens / max_output_tokens /
 *   generationConfig.maxOutputTokens / inferenceConfig.maxTokens (× n choices) as asked, at
 *   most the model's own limit (the catalog's maxOutputTokens: coding agents ask 128000 of
 *   every model); without one, that limit. Through the proxy, to a provider that does not
 *   refuse a cap above that limit: as asked, at most the context window, else the window. A model the catalog does not know is held for what
 *   was asked (bounded by 10M tokens), else DEFAULT_MAX_OUTPUT_TOKENS.
 * Unit-priced: the unit charge, known exactly from the request.
 */
export interface Quote {
  /** the hold: most the call can cost the customer, nano-USD */
  nano: number;
  /** prompt bound + output cap (what a tokens-per-minute limit counts at admission); 0 for units */
  tokens: number;
  /** token-priced only: the prompt part of `nano`, and the customer price of one output token (nano, fractional) */
  promptNano: number;
  outputNanoPerToken: number;
  outputCap: number;
  /** token-priced only: the customer price of one prompt token at the dearest input-side class (nano, fractional); absent = 0 */
  inputNanoPerToken?: number;
  /** token-priced only: what the hold's two roundings (to nano, after the margin) may add beyond its parts; absent = 0 */
  roundingNano?: number;
  /** token-priced only: the prompt tokens the hold covers (its bound, or the context window it holds); absent = 0 */
  promptTokens?: number;
}

/** Tokens assumed per image, audio or file part of a prompt. */
export const MEDIA_PART_TOKENS = 8192;

// a part's type (common, messages, Responses), Gemini's inline and file data, Bedrock Converse's
// image / document / video blocks ({"image":{"format":…,"source":…}})
const MEDIA_MARKERS =
  /"type"\s*:\s*"(?:image_url|image|input_image|input_audio|audio|file|input_file|document)"|"(?:inline_data|inlineData|file_data|fileData)"\s*:|"(?:image|document|video)"\s*:\s*\{/g;

/** An upper bound of the prompt's tokens from the body as sent (string or raw bytes). */
export function promptBound(body: string | Buffer): number {
  const { bytes, media } = promptParts(body);
  return bytes + media * MEDIA_PART_TOKENS;
}

/** The body's bytes and how many media parts it names (each counted MEDIA_PART_TOKENS by promptBound). */
export function promptParts(body: string | Buffer): { bytes: number; media: number } {
  const bytes = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  // only bodies that mention a media part are scanned for how many
  if (!MEDIA_WORDS.test(asciiView(body))) return { bytes, media: 0 };
  const s = typeof body === 'string' ? body : body.toString('utf8');
  return { bytes, media: s.match(MEDIA_MARKERS)?.length ?? 0 };
}

const MEDIA_WORDS = /image|audio|file|inline|document|video/;

/**
 * A body's bytes as a one-byte string, for finding ASCII words in it: each byte one
 * character, so an ASCII word matches exactly where its bytes stand (a UTF-8 sequence's bytes
 * are never ASCII). One regex over it finds any of several words faster than a
 * `Buffer.includes` per word (measured on Node 20: 0.13 against 0.98 µs for six words in a
 * 180-byte chat body, 45 against 120 µs in 100 kB). A call scans its body up to three times
 * (media, references, images): a large body is decoded once and the view kept with it.
 */
export function asciiView(body: string | Buffer): string {
  if (typeof body === 'string') return body;
  if (body.length < LARGE_BODY) return body.toString('latin1');
  let view = views.get(body);
  if (view === undefined) views.set(body, (view = body.toString('latin1')));
  return view;
}

const LARGE_BODY = 64 * 1024;
const views = new WeakMap<Buffer, string>();

const positiveInt = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 1 ? Math.floor(v) : undefined);

/**
 * The output cap a body asks for, if it names one: the largest any of its cap fields names.
 * A provider honours one field (Together, DeepSeek, Mistral take only max_tokens; OpenAI
 * max_completion_tokens before it) and the proxy forwards the body as it came, so a body
 * naming two is held for the larger: the one the provider reads is never more.
 */
export function requestedOutputCap(body: Record<string, unknown> | undefined): number | undefined {
  if (!body) return undefined;
  const gen = body.generationConfig && typeof body.generationConfig === 'object' ? (body.generationConfig as Record<string, unknown>) : undefined;
  // Bedrock Converse: inferenceConfig.maxTokens
  const inference = body.inferenceConfig && typeof body.inferenceConfig === 'object' ? (body.inferenceConfig as Record<string, unknown>) : undefined;
  let cap: number | undefined;
  for (const v of [body.max_completion_tokens, body.max_tokens, body.max_output_tokens, gen?.maxOutputTokens, inference?.maxTokens]) {
    const n = positiveInt(v);
    if (n !== undefined && (cap === undefined || n > cap)) cap = n;
  }
  return cap;
}

/** How many answers the body asks for (OpenAI's `n`, Gemini's candidateCount). */
function choices(body: Record<string, unknown> | undefined): number {
  const gen = body?.generationConfig && typeof body.generationConfig === 'object' ? (body.generationConfig as Record<string, unknown>) : undefined;
  return Math.min(positiveInt(body?.n) ?? positiveInt(gen?.candidateCount) ?? 1, 128);
}

/**
 * The hold of a token-priced call to `model` at `provider`, from the body as sent
 * (`wire`: its bytes or string) and its parsed form. An unknown model is priced at the
 * provider's dearest row, as its settlement will be. `generates` false: an answer without
 * generated tokens (embeddings), held for its prompt only. `promptTokens`: a prompt bound
 * worked out by the caller (the gateway counts images by their pixels: image-tokens.ts),
 * in place of `promptBound(wire)`. `forwarded`: the body goes upstream as the caller sent it
 * (the proxy): its output cap is held as asked unless the provider enforces its models'
 * limits (catalog `outputCapEnforced`).
 */
export function quoteTokens(
  config: ResolvedConfig,
  provider: ResolvedProvider,
  model: string | null,
  wire: string | Buffer | undefined,
  body: Record<string, unknown> | undefined,
  generates = true,
  promptTokens?: number,
  forwarded = false,
): Quote {
  const row: ModelInfo | undefined = priceRow(config, provider.def.id, model) ?? dearestRow(config, provider.def.id);
  const known = priceRow(config, provider.def.id, model) !== undefined;
  // `forwarded`: the body goes upstream as sent (the proxy). A provider that does not enforce
  // its models' output limits writes what it is asked, up to the context window: the cap is
  // bounded by that window, and without one the window is held (gateway routes clamp the
  // body's cap and name one: their cap is at most the model's limit)
  const unclamped = forwarded && provider.def.outputCapEnforced !== true && row !== undefined;
  const limit = unclamped ? Math.max(row.maxOutputTokens, row.contextTokens) : known ? row!.maxOutputTokens : DEFAULT_MAX_OUTPUT_TOKENS;
  // the output cap is what the caller asked for, at most the model's own limit (CONTRACT
  // "Holds", third round); what was asked of an unknown model is bounded by more than any
  // model writes, so a max_tokens of 1e15 is a hold no wallet covers, never a number the
  // store cannot hold
  const requested = bounded(requestedOutputCap(body));
  const asked = (known || unclamped) && requested !== undefined ? Math.min(requested, limit) : requested;
  const outputCap = generates ? (asked ?? limit) * choices(body) : 0;
  const prompt = promptTokens ?? (wire === undefined ? 0 : promptBound(wire));
  if (!row) return { nano: 0, tokens: prompt + outputCap, promptNano: 0, outputNanoPerToken: 0, outputCap };
  // context held at the provider, or content it fetches or expands (a file by reference, a
  // video by URI, server tools' results): the body does not size the prompt, the model's
  // context window bounds it, at the model's dearest level
  const atWindow = holdsContext(body) || expandsAtProvider(body, wire);
  const held = atWindow ? Math.max(prompt, known ? row.contextTokens : Math.max(row.contextTokens, DEFAULT_CONTEXT_TOKENS)) : prompt;
  let inputPico = 0;
  let outputPico = 0;
  for (const l of row.levels) {
    if (!atWindow && l.above !== 0 && !(held > l.above)) continue; // a tier the prompt cannot reach
    inputPico = Math.max(inputPico, l.dearestInputPico);
    outputPico = Math.max(outputPico, l.pico.output);
  }
  const promptNano = Math.round(picoToNano(held * inputPico) * provider.margin);
  const outputNanoPerToken = (outputPico / 1000) * provider.margin;
  return {
    // the charge's own arithmetic at the bound: summed in pico-USD, rounded to nano-USD once,
    // × margin rounded once (pricing.ts tokenCost), so no charge within the bound exceeds it
    nano: Math.round(picoToNano(held * inputPico + outputCap * outputPico) * provider.margin),
    tokens: prompt + outputCap,
    promptNano,
    outputNanoPerToken,
    outputCap,
    inputNanoPerToken: (inputPico / 1000) * provider.margin,
    roundingNano: Math.ceil(provider.margin) + 1,
    promptTokens: held,
  };
}

const nonEmpty = (v: unknown): boolean => (typeof v === 'string' && v.length > 0) || (typeof v === 'object' && v !== null);

/**
 * True when the body names context the provider holds and the body does not carry: a
 * Responses API `previous_response_id`, `conversation` or stored prompt template (`prompt:
 * {id}`), a Gemini `cachedContent` (`cached_content`, as Google's JSON also takes it).
 */
export function holdsContext(body: Record<string, unknown> | undefined): boolean {
  if (body === undefined) return false;
  const template = body.prompt && typeof body.prompt === 'object' && nonEmpty((body.prompt as Record<string, unknown>).id);
  return nonEmpty(body.previous_response_id) || nonEmpty(body.conversation) || nonEmpty(body.cachedContent) || nonEmpty(body.cached_content) || !!template;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Tool types run by the caller (their results come back in a later request's body), not by the provider. */
const CLIENT_TOOL = /^(function|custom|computer_use_preview|local_shell|shell|apply_patch)$|^(bash|text_editor|computer|memory)_/;

/**
 * True when the provider adds prompt tokens the body does not carry: server tools whose
 * results come back as input (web search or fetch, file search, code execution, MCP, Gemini's
 * grounding and URL context), or a part it fetches or expands by reference (an OpenAI
 * `file_id` / `file_url`, an Anthropic `document` by URL or file, a Gemini `fileData` that is
 * not an image: video at 258 tokens a frame, audio, PDF), a Converse video or S3 document.
 */
export function expandsAtProvider(body: Obj | undefined, wire: string | Buffer | undefined): boolean {
  if (!body) return false;
  if (nonEmpty(body.web_search_options) || nonEmpty(body.search_parameters) || (Array.isArray(body.mcp_servers) && body.mcp_servers.length > 0)) return true;
  if (Array.isArray(body.tools)) {
    for (const t of body.tools) {
      if (!isObj(t)) continue;
      if (typeof t.type === 'string' ? !CLIENT_TOOL.test(t.type) : t.name === undefined && Object.keys(t).some((k) => k !== 'functionDeclarations' && k !== 'function_declarations')) return true;
    }
  }
  if (wire === undefined) return false;
  return REFERENCE_MARKERS.test(asciiView(wire)) && referencesContent(body, 0);
}

const REFERENCE_MARKERS = /file_id|file_url|fileData|file_data|document|container_upload|video/;

function referencesContent(v: unknown, depth: number): boolean {
  if (typeof v !== 'object' || v === null) return false;
  if (depth > 64) return true; // deeper than any chat body: not sized
  if (Array.isArray(v)) return v.some((x) => referencesContent(x, depth + 1));
  const o = v as Obj;
  if (typeof o.file_id === 'string' || typeof o.file_url === 'string' || o.type === 'container_upload') return true;
  const fd = isObj(o.fileData) ? o.fileData : isObj(o.file_data) ? o.file_data : undefined;
  if (fd) {
    const mime = fd.mimeType ?? fd.mime_type;
    if (typeof mime !== 'string' || !mime.startsWith('image/')) return true;
  }
  if (o.type === 'document' && isObj(o.source) && (o.source.type === 'url' || o.source.type === 'file')) return true;
  if (isObj(o.video) || (isObj(o.document) && isObj(o.document.source) && o.document.source.s3Location !== undefined)) return true;
  for (const k in o) if (referencesContent(o[k], depth + 1)) return true;
  return false;
}

/** More output tokens than any model writes in one answer. */
const OUTPUT_TOKENS_CEILING = 10_000_000;
const bounded = (n: number | undefined) => (n === undefined ? undefined : Math.min(n, OUTPUT_TOKENS_CEILING));

/**
 * What a token-priced answer that ends without its usage is booked for (a stream the client
 * left or the upstream dropped, a proxied OpenAI stream without include_usage): the prompt
 * at the hold's bound, never an estimate below what the provider may count (Responses input
 * arrays, tools, images, files), and, when the answer hides what it generates
 * (usage.ts hidesReasoning), the hold's output cap; else what was streamed (at most the hold).
 */
export function bookingEstimate(q: Quote, hidesReasoning: boolean): { promptEstimate: number; completionFloor: number } {
  return { promptEstimate: q.promptTokens ?? 0, completionFloor: hidesReasoning ? q.outputCap : 0 };
}

/** The hold of a unit-priced call: its charge, exactly. */
export function quoteUnits(provider: ResolvedProvider, charge: UnitCharge | undefined): Quote {
  return { nano: unitCost(provider, charge, null).customerNano, tokens: 0, promptNano: 0, outputNanoPerToken: 0, outputCap: 0 };
}

/** The dearest of several quotes (a smart-route call holds its dearest candidate). */
export function dearest(quotes: readonly Quote[]): Quote {
  return quotes.reduce((a, b) => (b.nano > a.nano ? b : a));
}

/**
 * Bytes a body grows by when the caller adds or widens its output cap (`"max_tokens":N,`):
 * the prompt bound counts them, so the number named must leave room for them.
 */
const CAP_FIELD_BYTES = 32;

/**
 * How many output tokens `available` nano-USD covers after the prompt, for a token-priced
 * quote: a call sent again with that max_tokens is admitted (its body, a few bytes longer,
 * is allowed for).
 */
export function maxAffordableTokens(q: Quote, available: number): number | undefined {
  if (q.outputNanoPerToken <= 0) return undefined;
  const prompt = q.promptNano + Math.ceil(CAP_FIELD_BYTES * (q.inputNanoPerToken ?? 0)) + (q.roundingNano ?? 0);
  return Math.max(0, Math.floor((available - prompt) / q.outputNanoPerToken));
}

/** USD for a message: whole cents when that is exact or the amount is ≥ $1, else 3 significant digits. */
export function usdText(nano: number): string {
  const usd = nanoToUsd(nano);
  const cents = Math.round(usd * 100) / 100;
  if (usd >= 1 || Math.abs(usd - cents) < 1e-9) return `$${cents.toFixed(2)}`;
  return `$${Number(usd.toPrecision(3))}`;
}
