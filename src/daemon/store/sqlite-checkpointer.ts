import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * WAL checkpoints off the event loop. A checkpoint copies committed WAL pages into the
 * database file and fsyncs both files: 5-80 ms of blocking I/O on a busy disk, which
 * SQLite's automatic checkpoint (every 1000 WAL pages) runs inside whichever COMMIT
 * crosses the threshold. Here a worker thread with its own connection runs
 * `PRAGMA wal_checkpoint(PASSIVE)` every `intervalMs` (PASSIVE never blocks the writer),
 * so commits only append to the WAL. The writer keeps an automatic checkpoint at a
 * higher threshold as a safety net (the WAL restarts only after a checkpoint that caught
 * up with every frame, which sustained load can postpone), and gets the default back if
 * the worker stops.
 */
export const SAFETY_NET_PAGES = 8192;
export const DEFAULT_AUTOCHECKPOINT = 1000;

/** The worker's code, run with `eval` (no file to resolve under tsc's dist/ or vitest's src/). */
const WORKER_SOURCE = `(async () => {
  const { parentPort, workerData } = await import('node:worker_threads');
  const { createRequire } = await import('node:module');
  const Database = createRequire(workerData.driver)(workerData.driver);
  const db = new Database(workerData.file, { fileMustExist: true });
  const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  let timer = null;
  const tick = () => {
    let behind = false;
    try {
      const r = checkpoint.get();
      parentPort.postMessage({ kind: 'checkpoint', log: r.log, checkpointed: r.checkpointed });
      behind = r.log - r.checkpointed > 256;
    } catch (e) {
      parentPort.postMessage({ kind: 'busy', message: String(e && e.message) });
    }
    timer = setTimeout(tick, behind ? 5 : workerData.intervalMs);
  };
  parentPort.on('message', (m) => {
    if (m !== 'stop') return;
    clearTimeout(timer);
    db.close();
    parentPort.close();
  });
  parentPort.postMessage({ kind: 'ready' });
  tick();
})().catch((e) => { throw e; });`;

export interface CheckpointerStats {
  state: 'off' | 'starting' | 'on' | 'failed';
  /** checkpoints the worker ran (including ones with nothing to do) */
  runs: number;
}

export class Checkpointer {
  readonly stats: CheckpointerStats = { state: 'off', runs: 0 };
  private worker: Worker | null = null;

  constructor(
    private readonly file: string,
    /** sets the writer's automatic checkpoint threshold (pages) */
    private readonly setAutocheckpoint: (pages: number) => void,
    private readonly intervalMs = 100,
  ) {}

  start(): void {
    if (this.stats.state !== 'off') return;
    this.stats.state = 'starting';
    const w = new Worker(WORKER_SOURCE, {
      eval: true,
      execArgv: [],
      workerData: { file: this.file, driver: createRequire(import.meta.url).resolve('better-sqlite3'), intervalMs: this.intervalMs },
    });
    w.unref();
    this.worker = w;
    w.on('message', (m: { kind: string }) => {
      if (m.kind === 'ready') {
        this.stats.state = 'on';
        this.setAutocheckpoint(SAFETY_NET_PAGES);
      } else if (m.kind === 'checkpoint') this.stats.runs++;
    });
    const down = () => {
      if (this.worker !== w) return;
      this.worker = null;
      this.stats.state = 'failed';
      this.setAutocheckpoint(DEFAULT_AUTOCHECKPOINT);
    };
    w.on('error', down);
    w.on('exit', down);
  }

  /** Stops the worker (its connection closes first); the writer gets the default threshold back. */
  async stop(): Promise<void> {
    const w = this.worker;
    if (!w) return;
    this.worker = null;
    this.stats.state = 'off';
    const exited = new Promise<void>((r) => w.once('exit', () => r()));
    w.postMessage('stop');
    const timer = setTimeout(() => void w.terminate(), 2_000);
    await exited;
    clearTimeout(timer);
    this.setAutocheckpoint(DEFAULT_AUTOCHECKPOINT);
  }
}
