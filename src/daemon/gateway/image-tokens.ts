import { getProvider } from '../../shared/providers/index.js';
import { MEDIA_PART_TOKENS, promptParts } from '../money/hold.js';
import { imageSize, type Dims } from './image-size.js';
import type { WireFormat } from './translate/neutral.js';

/**
 * What an image in a prompt counts, as the provider counts it: by its pixels (read from a
 * data: URL's header bytes), or, when its size is unknown (an https: URL, an unknown
 * format), the most the provider counts for one image. A provider without a documented
 * rule counts MEDIA_PART_TOKENS, as any media part does (money/hold.ts).
 */
export interface ImageRef {
  /** base64 payload (a data: URL's, an inline image's) */
  data?: string;
  detail?: string;
}

type Rule = (d: Dims | undefined, model: string, detail?: string) => number;

/** Scales (w, h) down to fit `max` on the long side (never up). */
const fit = (d: Dims, max: number): Dims => {
  const s = Math.min(1, max / Math.max(d.w, d.h));
  return { w: Math.max(1, Math.round(d.w * s)), h: Math.max(1, Math.round(d.h * s)) };
};

/**
 * Anthropic (https://docs.claude.com/en/docs/build-with-claude/vision#evaluate-image-size):
 * tokens ≈ width × height / 750, after a long edge over 1,568 px is scaled down; an image
 * over ~1,600 tokens is scaled down to that.
 */
const ANTHROPIC_MAX = 1600;
const anthropic: Rule = (d) => {
  if (!d) return ANTHROPIC_MAX;
  const s = fit(d, 1568);
  return Math.min(ANTHROPIC_MAX, Math.ceil((s.w * s.h) / 750));
};

/**
 * OpenAI (https://platform.openai.com/docs/guides/images-vision#calculating-costs): `detail:
 * low` is the base count; otherwise the image is fitted within 2048 × 2048, then scaled so
 * its shortest side is 768 px, and counted as base + per-tile × 512 px tiles (85 + 170 on
 * GPT-4o and 4.1, 2,833 + 5,667 on gpt-4o-mini, 75 + 150 on o1 and o3). The patch-counted
 * models (32 px patches, at most 1,536, × a multiplier) are counted that way.
 */
const TILES: [RegExp, number, number][] = [
  [/^gpt-4o-mini/, 2833, 5667],
  [/^(o1|o3)(?!-mini)/, 75, 150],
];
const PATCHES: [RegExp, number][] = [
  [/^gpt-4\.1-mini|^gpt-5-mini/, 1.62],
  [/^gpt-4\.1-nano|^gpt-5-nano/, 2.46],
  [/^o4-mini/, 1.72],
];
const openai: Rule = (d, model, detail) => {
  const patch = PATCHES.find(([re]) => re.test(model));
  if (patch) {
    if (!d) return Math.ceil(1536 * patch[1]);
    const s = fit(d, 2048);
    return Math.ceil(Math.min(1536, Math.ceil(s.w / 32) * Math.ceil(s.h / 32)) * patch[1]);
  }
  const [, base, tile] = TILES.find(([re]) => re.test(model)) ?? [null, 85, 170];
  if (detail === 'low') return base;
  if (!d) return base + tile * 8; // 2048 × 768: 4 × 2 tiles, the most an image gets
  let s = fit(d, 2048);
  const short = Math.min(s.w, s.h);
  if (short > 768) s = { w: Math.ceil((s.w * 768) / short), h: Math.ceil((s.h * 768) / short) };
  return base + tile * Math.ceil(s.w / 512) * Math.ceil(s.h / 512);
};

/**
 * Gemini (https://ai.google.dev/gemini-api/docs/image-understanding#technical-details-image):
 * 258 tokens when both sides are ≤ 384 px, else 258 per 768 × 768 tile; counted here on
 * the image fitted within 3,072 px, whole tiles (at most 16, 4,128 tokens).
 */
const gemini: Rule = (d) => {
  if (!d) return 258 * 16;
  if (d.w <= 384 && d.h <= 384) return 258;
  const s = fit(d, 3072);
  return 258 * Math.ceil(s.w / 768) * Math.ceil(s.h / 768);
};

const RULES: Record<string, Rule> = { anthropic, openai, google: gemini };

/** The tokens one image counts at `provider` for `model` (a cloud by its model's maker's rule). */
export function imageTokens(img: ImageRef, provider: string, model: string): number {
  const rule = RULES[getProvider(provider)?.imageTokensAs?.(model) ?? provider];
  if (!rule) return MEDIA_PART_TOKENS;
  return rule(img.data ? imageSize(img.data) : undefined, model, img.detail);
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

function payloadOfUrl(url: unknown): string | undefined {
  if (typeof url !== 'string' || !url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  return comma < 0 ? undefined : url.slice(comma + 1);
}

/** A body's format for its images: a chat format, or Bedrock's Converse (`{"image":{"source":{"bytes"}}}`). */
export type ImageFormat = WireFormat | 'converse';

/** The images of a body as sent, in any chat format (the common format's `messages` or a Responses `input`). */
export function imagesOf(format: ImageFormat, body: Obj): ImageRef[] {
  const out: ImageRef[] = [];
  // inToolResult: a tool_result's own blocks (never another tool_result: no recursion past one level)
  const visitBlocks = (blocks: unknown, inToolResult = false) => {
    if (!Array.isArray(blocks)) return;
    for (const b of blocks as unknown[]) {
      if (!isObj(b)) continue;
      if (format === 'common' && b.type === 'image_url' && isObj(b.image_url)) out.push({ data: payloadOfUrl(b.image_url.url), detail: typeof b.image_url.detail === 'string' ? b.image_url.detail : undefined });
      else if (format === 'messages' && b.type === 'image' && isObj(b.source)) out.push({ data: b.source.type === 'base64' ? String(b.source.data) : undefined });
      else if (format === 'messages' && b.type === 'tool_result' && !inToolResult) visitBlocks(b.content, true);
      else if (format === 'gemini' && isObj(b.inlineData) && String(b.inlineData.mimeType).startsWith('image/')) out.push({ data: String(b.inlineData.data) });
      else if (format === 'gemini' && isObj(b.fileData) && String(b.fileData.mimeType).startsWith('image/')) out.push({});
      else if (format === 'common' && b.type === 'input_image') out.push({ data: payloadOfUrl(b.image_url), detail: typeof b.detail === 'string' ? b.detail : undefined });
      else if (format === 'converse' && isObj(b.image)) out.push({ data: isObj(b.image.source) && typeof b.image.source.bytes === 'string' ? b.image.source.bytes : undefined });
    }
  };
  const list = format === 'gemini' ? body.contents : (body.messages ?? body.input);
  for (const m of Array.isArray(list) ? (list as unknown[]) : []) if (isObj(m)) visitBlocks(format === 'gemini' ? m.parts : m.content);
  return out;
}

const MARKERS = /image|inlineData|fileData/;

/** The images of a body as sent, counted: their tokens at `provider`, and the base64 bytes they take in the body. */
export interface ImageCount {
  tokens: number;
  payloadBytes: number;
  count: number;
}

/** Undefined when the body holds no image (looked for only when its text mentions one). */
export function countImages(format: ImageFormat, body: Obj, text: string, provider: string, model: string): ImageCount | undefined {
  if (!MARKERS.test(text)) return undefined;
  const images = imagesOf(format, body);
  if (!images.length) return undefined;
  const c: ImageCount = { tokens: 0, payloadBytes: 0, count: images.length };
  for (const img of images) {
    c.tokens += imageTokens(img, provider, model);
    c.payloadBytes += img.data?.length ?? 0;
  }
  return c;
}

/**
 * The prompt bound of a chat body as sent (money/hold.ts `promptBound`) with its images
 * counted by their pixels instead of by their base64 bytes and the flat media allowance:
 * only what the bound counted for them is taken off (the images may have been counted in
 * the caller's format while another format's text goes upstream: Converse for Nova).
 */
export function promptBoundWithImages(text: string, images: ImageCount): number {
  const { bytes, media } = promptParts(text);
  const inText = text.length >= images.payloadBytes ? images.payloadBytes : 0;
  return Math.max(0, bytes - inText) + Math.max(0, media - images.count) * MEDIA_PART_TOKENS + images.tokens;
}
