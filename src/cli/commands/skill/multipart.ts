/** A multipart/form-data body built from memory, streamed in slices so a progress bar can follow it. */
import { randomBytes } from 'node:crypto';

export interface FilePart {
  path: string;
  content: Buffer;
}

const SLICE = 64 * 1024;

/** Quoted-string escaping for a Content-Disposition parameter (paths carry no CR/LF). */
const quote = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

export function buildMultipart(fields: Record<string, string | undefined>, files: readonly FilePart[]) {
  const boundary = `----agw${randomBytes(12).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name=${quote(name)}\r\n\r\n${value}\r\n`));
  }
  for (const f of files) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename=${quote(f.path)}\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      f.content,
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  const total = chunks.reduce((n, c) => n + c.length, 0);
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    total,
    /** The body as a stream; `onProgress(sent)` after each slice handed to the connection. */
    stream(onProgress: (sent: number) => void): ReadableStream<Uint8Array> {
      let i = 0;
      let offset = 0;
      let sent = 0;
      return new ReadableStream<Uint8Array>({
        pull(ctrl) {
          while (i < chunks.length && offset >= chunks[i].length) {
            i++;
            offset = 0;
          }
          if (i >= chunks.length) {
            ctrl.close();
            return;
          }
          const slice = chunks[i].subarray(offset, offset + SLICE);
          offset += slice.length;
          sent += slice.length;
          ctrl.enqueue(slice);
          onProgress(sent);
        },
      });
    },
  };
}
