import { parentPort, workerData } from 'node:worker_threads';
import { checkpointOn } from '../daemon/store/sqlite-checkpointer.js';
import { main } from './index.js';

/**
 * The worker side of `agw serve` (see serve-host.ts): the ordinary CLI, whose `serve`
 * handles SIGINT/SIGTERM with `process.on`, which in a worker only hears what the main
 * thread forwards here. WAL checkpoints run on the main thread.
 */
const port = parentPort!;
const { args, version } = workerData as { args: string[]; version: string };

checkpointOn((data, p) => port.postMessage({ kind: 'checkpointer', data, port: p }, [p]));
port.on('message', (m: { kind: string; signal: NodeJS.Signals }) => {
  if (m.kind !== 'signal') return;
  if (process.listenerCount(m.signal) > 0) process.emit(m.signal, m.signal);
  else port.postMessage({ kind: 'default-signal', signal: m.signal });
});
port.unref(); // the daemon's server keeps the thread alive, not the port (`serve --help`, a bad config: exit)

process.exitCode = await main(args, version);
