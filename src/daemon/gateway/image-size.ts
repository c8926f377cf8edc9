/**
 * The pixel size of an image from its first bytes (PNG, JPEG, GIF, WebP), read from base64
 * without decoding the whole image: the header is decoded, and for JPEG as much more as the
 * walk to its frame header needs. Undefined for anything else.
 */
export interface Dims {
  w: number;
  h: number;
}

function decode(b64: string, bytes: number): Buffer {
  const chars = Math.min(b64.length, Math.ceil(bytes / 3) * 4);
  return Buffer.from(b64.slice(0, chars - (chars % 4)), 'base64');
}

const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

/** Segments walked at most before a JPEG's frame header (a real file has a few dozen). */
const MAX_JPEG_SEGMENTS = 4096;

function jpeg(b64: string, head: Buffer): Dims | undefined {
  let buf = head;
  let i = 2;
  for (let steps = 0; steps < MAX_JPEG_SEGMENTS; steps++) {
    if (i + 9 > buf.length) {
      // read more; a decode that yields nothing new means the whole image is read (base64 with
      // padding or characters Buffer skips decodes to less than 3/4 of its length)
      const more = decode(b64, Math.max(i + 4096, buf.length * 4));
      if (more.length <= buf.length) return undefined;
      buf = more;
      continue;
    }
    if (buf[i] !== 0xff) return undefined;
    const marker = buf[i + 1];
    if (marker === 0xff) {
      i++; // fill byte
      continue;
    }
    if (SOF.has(marker)) return { h: buf.readUInt16BE(i + 5), w: buf.readUInt16BE(i + 7) };
    if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      i += 2;
      continue;
    }
    i += 2 + buf.readUInt16BE(i + 2);
  }
  return undefined;
}

function webp(b: Buffer): Dims | undefined {
  const chunk = b.toString('latin1', 12, 16);
  if (chunk === 'VP8 ' && b.length >= 30) return { w: b.readUInt16LE(26) & 0x3fff, h: b.readUInt16LE(28) & 0x3fff };
  if (chunk === 'VP8L' && b.length >= 25) {
    const bits = b.readUInt32LE(21);
    return { w: (bits & 0x3fff) + 1, h: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X' && b.length >= 30) return { w: b.readUIntLE(24, 3) + 1, h: b.readUIntLE(27, 3) + 1 };
  return undefined;
}

/** The size of a base64-encoded image, or undefined when its format or header is not recognised. */
export function imageSize(b64: string): Dims | undefined {
  const b = decode(b64, 64);
  if (b.length < 24) return undefined;
  if (b.readUInt32BE(0) === 0x89504e47 && b.toString('latin1', 12, 16) === 'IHDR') return { w: b.readUInt32BE(16), h: b.readUInt32BE(20) };
  if (b.toString('latin1', 0, 4) === 'GIF8') return { w: b.readUInt16LE(6), h: b.readUInt16LE(8) };
  if (b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return webp(b);
  if (b[0] === 0xff && b[1] === 0xd8) return jpeg(b64, decode(b64, 4096));
  return undefined;
}
