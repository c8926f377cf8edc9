import { createRequire } from 'node:module';
import { runInThisContext } from 'node:vm';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';

/**
 * WAL checkpoints off the event loop. A checkpoint copies committed WAL pages into the
 * database file and fsyncs both files: 5-80 ms of blocking I/O on a busy disk, which
 * SQLite's automatic checkpoint (every 1000 WAL pages) runs inside whichever COMMIT
 * crosses the threshold. Here another thread with its own connection runs
 * `PRAGMA wal_checkpoint(PASSIVE)` every `intervalMs` (PASSIVE never blocks the writer),
 * so commits only append to the WAL. The writer keeps an automatic checkpoint at a
 * higher threshold as a safety net (the WAL restarts only after a checkpoint that caught
 * up with every frame, which sustained load can postpone), and gets the default back if
 * the checkpoint thread stops.
 *
 * The thread is a worker thread of its own (a second V8 isolate, about 10 MB), unless a
 * host thread was named with `checkpointOn`: `agw serve` runs the daemon in a worker and
 * lends its otherwise idle main thread (src/cli/serve-host.ts).
 */
export const SAFETY_NET_PAGES = 8192;
export const DEFAULT_AUTOCHECKPOINT = 1000;

/** What the checkpoint loop needs: the database file, the better-sqlite3 entry, the pace. */
export interface CheckpointLoopData {
  file: string;
  driver: string;
  intervalMs: number;
}

/**
 * The loop, as source: run in a worker (`eval`, no file to resolve under tsc's dist/ or
 * vitest's src/) or on a host thread. It talks over `port`: posts `ready`, then
 * `checkpoint` (or `busy`) after every run; on the message `stop` it closes its connection
 * and the port. A connection that cannot be opened throws (the worker's `error` event;
 * on a host thread, see `runCheckpointLoop`).
 */
const LOOP_SOURCE = `(function checkpointLoop(port, data, load) {
  const Database = load(data.driver);
  const db = new Database(data.file, { fileMustExist: true });
  const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  let timer = null;
  const tick = () => {
    let behind = false;
    try {
      const r = checkpoint.get();
      port.postMessage({ kind: 'checkpoint', log: r.log, checkpointed: r.checkpointed });
      behind = r.log - r.checkpointed > 256;
    } catch (e) {
      port.postMessage({ kind: 'busy', message: String(e && e.message) });
    }
    timer = setTimeout(tick, behind ? 5 : data.intervalMs);
  };
  port.on('message', (m) => {
    if (m !== 'stop') return;
    clearTimeout(timer);
    db.close();
    port.close();
  });
  port.postMessage({ kind: 'ready' });
  tick();
})`;

const WORKER_SOURCE = `(async () => {
  const { parentPort, workerData } = await import('node:worker_threads');
  const { createRequire } = await import('node:module');
  ${LOOP_SOURCE}(parentPort, workerData, (driver) => createRequire(driver)(driver));
})().catch((e) => { throw e; });`;

type Loop = (port: MessagePort, data: CheckpointLoopData, load: (driver: string) => unknown) => void;
let loop: Loop | undefined;

/**
 * Runs the checkpoint loop on the calling thread (a host thread, see `checkpointOn`),
 * talking over `port`. A connection that cannot be opened closes the port (the store's
 * side then falls back to SQLite's own checkpoints) instead of throwing on the host.
 */
export function runCheckpointLoop(port: MessagePort, data: CheckpointLoopData): void {
  loop ??= runInThisContext(LOOP_SOURCE, { filename: 'sqlite-checkpointer-loop.js' }) as Loop;
  try {
    loop(port, data, (driver) => createRequire(driver)(driver));
  } catch {
    port.close();
  }
}

/** Hands a loop to a host thread: it calls `runCheckpointLoop(port, data)` there. */
export type CheckpointHost = (data: CheckpointLoopData, port: MessagePort) => void;
let host: CheckpointHost | null = null;

/** From now on, checkpoints of every store opened in this thread run on `h` (null: own worker threads). */
export function checkpointOn(h: CheckpointHost | null): void {
  host = h;
}

export interface CheckpointerStats {
  state: 'off' | 'starting' | 'on' | 'failed';
  /** checkpoints the loop ran (including ones with nothing to do) */
  runs: number;
}

/** The store's end of a running loop: a worker of its own, or a port to the host thread. */
interface Channel {
  stop(): Promise<void>;
}

export class Checkpointer {
  readonly stats: CheckpointerStats = { state: 'off', runs: 0 };
  private channel: Channel | null = null;

  constructor(
    private readonly file: string,
    /** sets the writer's automatic checkpoint threshold (pages) */
    private readonly setAutocheckpoint: (pages: number) => void,
    private readonly intervalMs = 100,
  ) {}

  start(): void {
    if (this.stats.state !== 'off') return;
    this.stats.state = 'starting';
    const data: CheckpointLoopData = { file: this.file, driver: createRequire(import.meta.url).resolve('better-sqlite3'), intervalMs: this.intervalMs };
    const onMessage = (m: { kind: string }) => {
      if (m.kind === 'ready') {
        this.stats.state = 'on';
        this.setAutocheckpoint(SAFETY_NET_PAGES);
      } else if (m.kind === 'checkpoint') this.stats.runs++;
    };
    let channel: Channel;
    const down = () => {
      if (this.channel !== channel) return;
      this.channel = null;
      this.stats.state = 'failed';
      this.setAutocheckpoint(DEFAULT_AUTOCHECKPOINT);
    };
    if (host) {
      const { port1, port2 } = new MessageChannel();
      port1.unref();
      port1.on('message', onMessage);
      port1.on('close', down);
      const closed = new Promise<void>((r) => port1.once('close', () => r()));
      channel = {
        async stop() {
          port1.postMessage('stop');
          const timer = setTimeout(() => port1.close(), 2_000);
          await closed;
          clearTimeout(timer);
        },
      };
      this.channel = channel;
      host(data, port2);
      return;
    }
    const w = new Worker(WORKER_SOURCE, { eval: true, execArgv: [], workerData: data });
    w.unref();
    const exited = new Promise<void>((r) => w.once('exit', () => r()));
    channel = {
      async stop() {
        w.postMessage('stop');
        const timer = setTimeout(() => void w.terminate(), 2_000);
        await exited;
        clearTimeout(timer);
      },
    };
    this.channel = channel;
    w.on('message', onMessage);
    w.on('error', down);
    w.on('exit', down);
  }

  /** Stops the loop (its connection closes first); the writer gets the default threshold back. */
  async stop(): Promise<void> {
    const c = this.channel;
    if (!c) return;
    this.channel = null;
    this.stats.state = 'off';
    await c.stop();
    this.setAutocheckpoint(DEFAULT_AUTOCHECKPOINT);
  }
}
