import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { moduleWorker } from '../../../shared/module-worker.js';
import type { Finding } from '../../../shared/scan/index.js';

/**
 * Skill scans off the event loop: a small pool of worker threads (scan-worker.ts), one file
 * at a time each, the rest queued in order. A publish (and the first read of a version
 * published before migration 17) awaits its files' findings while the daemon keeps
 * answering. Bounded: `size` threads (one on a 2-core machine), a file that takes longer
 * than `timeoutMs` ends its thread and gets an error finding SCAN_INCOMPLETE (so a publish
 * is refused rather than let through unscanned), and threads idle for `idleMs` end.
 * One pool per process, shared by its daemons.
 */
export const SCAN_INCOMPLETE = 'SCAN_INCOMPLETE';

export interface ScanPoolOptions {
  size?: number;
  timeoutMs?: number;
  idleMs?: number;
  /** starts a worker (default: scan-worker.ts; a test gives one that never answers) */
  spawn?: () => Worker;
}

interface Task {
  path: string;
  data: Uint8Array;
  done: (findings: Finding[]) => void;
}

interface Slot {
  worker: Worker;
  /** loaded: a file's time limit runs from then (loading is not scanning) */
  ready: boolean;
  task: Task | null;
  timer: NodeJS.Timeout | null;
}

/** How long a new thread may take to load, at least. */
const LOAD_MS = 30_000;

const incomplete = (path: string, why: string): Finding[] => [
  { rule: SCAN_INCOMPLETE, severity: 'error', path, line: null, message: `the scan of this file did not finish: ${why}` },
];

export class ScanPool {
  private readonly size: number;
  private readonly timeoutMs: number;
  private readonly idleMs: number;
  private readonly start: () => Worker;
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private idleTimer: NodeJS.Timeout | null = null;
  /** threads started so far (a measure for tests: a stuck one is replaced) */
  started = 0;

  constructor(o: ScanPoolOptions = {}) {
    this.size = o.size ?? Math.max(1, Math.min(2, availableParallelism() - 1));
    this.timeoutMs = o.timeoutMs ?? 60_000;
    this.idleMs = o.idleMs ?? 30_000;
    this.start = o.spawn ?? (() => moduleWorker(import.meta.url, 'scan-worker'));
  }

  /** The findings of one file (the bytes are copied to the worker). */
  scan(path: string, data: Uint8Array): Promise<Finding[]> {
    return new Promise((done) => {
      this.queue.push({ path, data, done });
      this.pump();
    });
  }

  /** Ends every thread; queued and running scans finish as SCAN_INCOMPLETE. */
  async close(): Promise<void> {
    for (const t of this.queue.splice(0)) t.done(incomplete(t.path, 'the daemon is stopping'));
    await Promise.all(this.slots.splice(0).map((s) => this.end(s, 'the daemon is stopping')));
  }

  private pump(): void {
    if (this.idleTimer) {
      clearTimeout(this.idleTimer);
      this.idleTimer = null;
    }
    while (this.queue.length) {
      let slot = this.slots.find((s) => !s.task);
      if (!slot && this.slots.length < this.size) slot = this.spawn();
      if (!slot) return;
      this.run(slot, this.queue.shift()!);
    }
    if (this.slots.length && this.slots.every((s) => !s.task)) {
      this.idleTimer = setTimeout(() => void this.close(), this.idleMs);
      this.idleTimer.unref();
    }
  }

  private spawn(): Slot {
    const worker = this.start();
    this.started++;
    worker.unref();
    const slot: Slot = { worker, ready: false, task: null, timer: null };
    worker.on('message', (m: { ready?: boolean; findings?: Finding[]; error?: string }) => {
      if (m.ready) {
        slot.ready = true;
        if (slot.task) this.startClock(slot);
        return;
      }
      this.finish(slot, m.findings ?? incomplete(slot.task?.path ?? '', m.error ?? 'no answer'));
    });
    worker.on('error', (err) => void this.end(slot, `the scanner failed (${err.message})`));
    worker.on('exit', () => void this.end(slot, 'the scanner stopped'));
    this.slots.push(slot);
    return slot;
  }

  private run(slot: Slot, task: Task): void {
    slot.task = task;
    this.startClock(slot); // before it is ready: loading and scanning in one (longer) limit, restarted when it is
    slot.worker.postMessage({ path: task.path, data: task.data });
  }

  private startClock(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    const ms = slot.ready ? this.timeoutMs : Math.max(this.timeoutMs, LOAD_MS);
    slot.timer = setTimeout(() => void this.end(slot, `it took longer than ${ms / 1000} s`), ms);
    slot.timer.unref();
  }

  private finish(slot: Slot, findings: Finding[]): void {
    const task = slot.task;
    if (slot.timer) clearTimeout(slot.timer);
    slot.task = null;
    slot.timer = null;
    task?.done(findings);
    this.pump();
  }

  /** Drops a slot (its task, if any, finishes as SCAN_INCOMPLETE) and ends its thread. */
  private async end(slot: Slot, why: string): Promise<void> {
    const at = this.slots.indexOf(slot);
    if (at >= 0) this.slots.splice(at, 1);
    const task = slot.task;
    if (slot.timer) clearTimeout(slot.timer);
    slot.task = null;
    slot.timer = null;
    task?.done(incomplete(task.path, why));
    await slot.worker.terminate();
    if (at >= 0) this.pump();
  }
}

/** The process's pool. */
export const scanPool = new ScanPool();
