import { describe, expect, it } from 'vitest';
import { imageSize } from '../../src/daemon/gateway/image-size.js';
import { imageTokens, promptBoundWithImages, countImages } from '../../src/daemon/gateway/image-tokens.js';
import { MEDIA_PART_TOKENS } from '../../src/daemon/money/hold.js';

/** Image headers as each format's specification lays them out (PNG IHDR, GIF logical screen, WebP VP8/VP8L/VP8X, JPEG SOF). */
const b64 = (b: Buffer) => b.toString('base64');

function png(w: number, h: number): Buffer {
  const b = Buffer.alloc(64);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(w, 16);
  b.writeUInt32BE(h, 20);
  return b;
}

function gif(w: number, h: number): Buffer {
  const b = Buffer.alloc(32);
  b.write('GIF89a', 0, 'latin1');
  b.writeUInt16LE(w, 6);
  b.writeUInt16LE(h, 8);
  return b;
}

function webp(kind: 'VP8 ' | 'VP8L' | 'VP8X', w: number, h: number): Buffer {
  const b = Buffer.alloc(40);
  b.write('RIFF', 0, 'latin1');
  b.write('WEBP', 8, 'latin1');
  b.write(kind, 12, 'latin1');
  if (kind === 'VP8 ') {
    b.set([0x9d, 0x01, 0x2a], 23);
    b.writeUInt16LE(w, 26);
    b.writeUInt16LE(h, 28);
  } else if (kind === 'VP8L') {
    b[20] = 0x2f;
    b.writeUInt32LE(((w - 1) & 0x3fff) | (((h - 1) & 0x3fff) << 14), 21);
  } else {
    b.writeUIntLE(w - 1, 24, 3);
    b.writeUIntLE(h - 1, 27, 3);
  }
  return b;
}

/** A JPEG whose frame header comes after an `exif`-byte APP1 segment (what a camera writes first). */
function jpeg(w: number, h: number, exif = 0): Buffer {
  const parts = [Buffer.from([0xff, 0xd8])];
  if (exif) {
    const app1 = Buffer.alloc(4 + exif);
    app1.set([0xff, 0xe1]);
    app1.writeUInt16BE(exif + 2, 2);
    parts.push(app1);
  }
  const sof = Buffer.from([0xff, 0xc2, 0x00, 0x11, 0x08, 0, 0, 0, 0, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  sof.writeUInt16BE(h, 5);
  sof.writeUInt16BE(w, 7);
  parts.push(sof, Buffer.alloc(100));
  return Buffer.concat(parts);
}

describe('image sizes from the header bytes', () => {
  it('reads PNG, GIF, the three WebP kinds and JPEG (frame header after a 60 kB EXIF segment)', () => {
    expect(imageSize(b64(png(2880, 1800)))).toEqual({ w: 2880, h: 1800 });
    expect(imageSize(b64(gif(320, 200)))).toEqual({ w: 320, h: 200 });
    expect(imageSize(b64(webp('VP8 ', 640, 480)))).toEqual({ w: 640, h: 480 });
    expect(imageSize(b64(webp('VP8L', 1000, 700)))).toEqual({ w: 1000, h: 700 });
    expect(imageSize(b64(webp('VP8X', 4000, 3000)))).toEqual({ w: 4000, h: 3000 });
    expect(imageSize(b64(jpeg(1920, 1080)))).toEqual({ w: 1920, h: 1080 });
    expect(imageSize(b64(jpeg(4032, 3024, 60_000)))).toEqual({ w: 4032, h: 3024 });
  });

  it('a truncated JPEG whose segment points past its end answers at once (it froze the daemon: from a review)', () => {
    // base64 ending in == decodes to less than 3/4 of its length: the walk must not wait for bytes that never come
    for (const tail of [40, 41, 42, 4096, 10_000]) {
      const b = Buffer.concat([Buffer.from('ffd8ffe07fff', 'hex'), Buffer.alloc(tail, 0x41)]);
      expect(imageSize(b.toString('base64'))).toBeUndefined();
      expect(imageSize(`${b.toString('base64')}!!!`)).toBeUndefined(); // characters Buffer skips
    }
    // a JPEG of nothing but fill bytes and restart markers: bounded, no frame header found
    expect(imageSize(Buffer.concat([Buffer.from('ffd8', 'hex'), Buffer.alloc(100_000, 0xff)]).toString('base64'))).toBeUndefined();
  });

  it('says nothing of what it does not know', () => {
    expect(imageSize(b64(Buffer.from('not an image at all, just some text here')))).toBeUndefined();
    expect(imageSize(b64(jpeg(10, 10).subarray(0, 3)))).toBeUndefined();
    expect(imageSize('')).toBeUndefined();
  });
});

describe('image tokens as each provider counts them', () => {
  const img = (w: number, h: number, detail?: string) => ({ data: b64(png(w, h)), detail });

  it('Anthropic: width × height / 750 after the 1,568 px long-edge limit, at most ~1,600', () => {
    expect(imageTokens(img(1000, 1000), 'anthropic', 'claude-sonnet-4-5')).toBe(1334);
    expect(imageTokens(img(200, 200), 'anthropic', 'claude-sonnet-4-5')).toBe(54);
    expect(imageTokens(img(2880, 1800), 'anthropic', 'claude-sonnet-4-5')).toBe(1600);
    expect(imageTokens({}, 'anthropic', 'claude-sonnet-4-5')).toBe(1600); // an https: image: the most one counts
  });

  it('OpenAI: 85 + 170 per 512 px tile after its resizing (the guide’s own examples), base only for detail low', () => {
    expect(imageTokens(img(1024, 1024), 'openai', 'gpt-4o')).toBe(765);
    expect(imageTokens(img(2048, 4096), 'openai', 'gpt-4o')).toBe(1105);
    expect(imageTokens(img(4096, 8192, 'low'), 'openai', 'gpt-4.1')).toBe(85);
    expect(imageTokens(img(1024, 1024), 'openai', 'gpt-4o-mini')).toBe(2833 + 4 * 5667);
    expect(imageTokens({}, 'openai', 'gpt-4o')).toBe(85 + 8 * 170);
    expect(imageTokens(img(1024, 1024), 'openai', 'gpt-4.1-mini')).toBe(Math.ceil(1024 * 1.62));
  });

  it('Gemini: 258 for a small image, 258 per 768 px tile for a larger one', () => {
    expect(imageTokens(img(384, 300), 'google', 'gemini-2.5-flash')).toBe(258);
    expect(imageTokens(img(1024, 1024), 'google', 'gemini-2.5-flash')).toBe(4 * 258);
    expect(imageTokens({}, 'google', 'gemini-2.5-flash')).toBe(16 * 258);
  });

  it('a provider without a documented rule counts the flat media allowance', () => {
    expect(imageTokens(img(100, 100), 'mistral', 'mistral-large-latest')).toBe(MEDIA_PART_TOKENS);
  });

  it('the prompt bound counts an image’s tokens in place of its base64 bytes', () => {
    const data = b64(Buffer.concat([png(1000, 1000), Buffer.alloc(750_000)]));
    const body = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${data}` } }] }] };
    const text = JSON.stringify(body);
    const images = countImages('common', body, text, 'anthropic', 'claude-sonnet-4-5')!;
    expect(images).toEqual({ tokens: 1334, payloadBytes: data.length, count: 1 });
    expect(promptBoundWithImages(text, images)).toBe(text.length - data.length + 1334);
    expect(countImages('common', { messages: [{ role: 'user', content: 'no image' }] }, '{"no":"image"}', 'openai', 'gpt-4o')).toBeUndefined();
  });
});
