import { parentPort } from 'node:worker_threads';
import { scanFile } from '../../../shared/scan/index.js';

/**
 * The scan pool's worker thread (scan-pool.ts): scans one file per message, `{path, data}`,
 * and answers `{findings}` (or `{error}`), so the rules' regular expressions never run on the
 * daemon's event loop. `{ready: true}` first, once loaded (a file's time limit starts then).
 */
parentPort!.on('message', (m: { path: string; data: Uint8Array }) => {
  try {
    parentPort!.postMessage({ findings: scanFile(m.path, m.data) });
  } catch (err) {
    parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) });
  }
});
parentPort!.postMessage({ ready: true });
