/**
 * A small SSE reader for tests: connects with fetch, collects `event`/`data`/`id` blocks
 * as they arrive, and lets a test wait for a number of events.
 */
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

export interface SseClient {
  status: number;
  headers: Headers;
  events: SseEvent[];
  /** comment lines seen (`: keep-alive`) */
  comments: string[];
  /** resolves once `n` events of type `event` arrived (rejects after timeoutMs) */
  waitFor(n: number, event?: string, timeoutMs?: number): Promise<SseEvent[]>;
  /** true once the server ended the stream */
  ended(): boolean;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string>): Promise<SseClient> {
  const ac = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: ac.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let done = false;
  const waiters: (() => void)[] = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  if (res.ok && res.body) {
    void (async () => {
      const dec = new TextDecoder();
      let buf = '';
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buf += dec.decode(chunk, { stream: true });
          let i: number;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const ev: SseEvent = { event: 'message', data: '' };
            let isEvent = false;
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) comments.push(line.slice(1).trim());
              else if (line.startsWith('event: ')) (ev.event = line.slice(7)), (isEvent = true);
              else if (line.startsWith('data: ')) (ev.data += line.slice(6)), (isEvent = true);
              else if (line.startsWith('id: ')) ev.id = line.slice(4);
            }
            if (isEvent) events.push(ev);
          }
          wake();
        }
      } catch {
        /* aborted */
      }
      done = true;
      wake();
    })();
  }
  return {
    status: res.status,
    headers: res.headers,
    events,
    comments,
    ended: () => done,
    close: () => ac.abort(),
    waitFor(n, event = 'request', timeoutMs = 10_000) {
      const got = () => events.filter((e) => e.event === event);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`waited ${timeoutMs} ms for ${n} ${event} events, got ${got().length}`)), timeoutMs);
        const check = () => {
          if (got().length >= n) {
            clearTimeout(t);
            resolve(got());
          } else if (done) {
            clearTimeout(t);
            reject(new Error(`the stream ended after ${got().length} ${event} events`));
          } else waiters.push(check);
        };
        check();
      });
    },
  };
}
