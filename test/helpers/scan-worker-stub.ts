import { parentPort } from 'node:worker_threads';
import { scanFile } from '../../src/shared/scan/index.js';

/**
 * A scan pool worker for tests (test/unit/scan-pool.test.ts): scans like
 * src/daemon/marketplace/trust/scan-worker.ts, but never answers for a path starting with
 * "hang" (a scan that does not finish, whatever the machine's speed).
 */
parentPort!.on('message', (m: { path: string; data: Uint8Array }) => {
  if (m.path.startsWith('hang')) return;
  parentPort!.postMessage({ findings: scanFile(m.path, m.data) });
});
parentPort!.postMessage({ ready: true });
