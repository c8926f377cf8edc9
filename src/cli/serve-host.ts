import { setFlagsFromString } from 'node:v8';
import { SHARE_ENV, Worker, type MessagePort } from 'node:worker_threads';
import { runCheckpointLoop, type CheckpointLoopData } from '../daemon/store/sqlite-checkpointer.js';
import { limitMallocArenas } from './malloc-arenas.js';

/**
 * `agw serve` runs the daemon in a worker thread of this same process (same pid, same
 * stdout/stderr, same exit codes) for one reason: a worker's heap can be sized when it
 * is created, the main thread's only by node flags on the command line. The daemon's
 * young generation (V8's default: two 16 MB semi-spaces, always fully grown under load)
 * is held to `YOUNG_GENERATION_MB`, which takes the daemon's resident memory under load
 * down by about 24 MB for a few percent more CPU per call. Flags still win: run node with
 * `--max-semi-space-size=N` to choose another size.
 *
 * The main thread stays nearly idle: it forwards SIGINT/SIGTERM to the daemon (which
 * shuts down exactly as it would on the main thread), exits with the worker's exit code,
 * and lends itself to the store's WAL checkpoints (sqlite-checkpointer.ts), which would
 * otherwise take a worker thread (a V8 isolate) of their own.
 */
export const YOUNG_GENERATION_MB = 12; // V8 11: 2 semi-spaces + new large-object space = 3 x 4 MB

/**
 * How far the old generation may grow past what the last full GC left alive before the
 * next one starts: V8's own factor (up to 4x on a heap this small) let ~25 MB of promoted
 * garbage sit in the daemon's heap after a burst of calls, so its resident memory after
 * load swung between 139 and 169 MB from one run to the next, depending on when the last
 * full GC had happened. 1.5x keeps it at 141-144 MB (measured, three rounds of load each,
 * requests/s unchanged within noise); 1.3x saved 2 MB more for visibly fewer requests/s.
 */
export const HEAP_GROWING_PERCENT = 50;

export function hostServe(args: string[], version: string): void {
  // WebAssembly (undici's HTTP response parser) stays on V8's baseline compiler: tiering it
  // up took ~35 MB of optimizing-compiler memory on background threads, much of which the
  // C allocator then keeps (measured: ~10 MB more resident after load), to speed up a
  // parser that is not where the CPU goes (CPU per call unchanged within noise). V8 reads
  // the flag when a module is compiled, so it has to be set before undici compiles its.
  setFlagsFromString('--liftoff-only');
  if (!process.execArgv.some((a) => a.startsWith('--heap-growing-percent'))) {
    setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  }
  // before the daemon's thread starts: it shares an arena of the C allocator instead of growing its own
  limitMallocArenas();
  const worker = new Worker(new URL('./serve-thread.js', import.meta.url), {
    workerData: { args, version },
    env: SHARE_ENV,
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
  });
  const forward = (signal: NodeJS.Signals) => worker.postMessage({ kind: 'signal', signal });
  // In place before the worker starts: a signal during start-up is answered by the worker
  // (which applies the default action, see serve-thread.ts, until `serve` handles it).
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  worker.on('message', (m: { kind: string; signal?: NodeJS.Signals; port?: MessagePort; data?: CheckpointLoopData }) => {
    if (m.kind === 'checkpointer' && m.port && m.data) runCheckpointLoop(m.port, m.data);
    else if (m.kind === 'default-signal' && m.signal) {
      // nothing in the daemon handles it yet: die of it, as a process without a handler does
      process.removeListener(m.signal, forward);
      process.kill(process.pid, m.signal);
    }
  });
  worker.on('error', (e: unknown) => {
    // an uncaught exception in the daemon: what node prints for one on the main thread
    process.stderr.write(`${(e as Error)?.stack ?? String(e)}\n`);
  });
  worker.on('exit', (code) => process.exit(code));
}
