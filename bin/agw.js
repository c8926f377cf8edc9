#!/usr/bin/env node
// The one executable. `--version` answers without loading anything else.
import { existsSync, readFileSync } from 'node:fs';

const args = process.argv.slice(2);
// `agw … --json | head` closing the pipe early is not an error.
process.stdout.on('error', (e) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});
const version = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
const entry = new URL('../dist/cli/index.js', import.meta.url);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  process.stdout.write(`${version}\n`);
} else if (!existsSync(entry)) {
  process.stderr.write('agw: not built yet (dist/ is missing): run `npm install` or `npm run build` in the agw checkout\n');
  process.exitCode = 1;
} else if (args[0] === 'serve') {
  // the daemon runs in a worker thread of this process, whose heap can be sized (dist/cli/serve-host.js)
  const { hostServe } = await import(new URL('../dist/cli/serve-host.js', import.meta.url).href);
  hostServe(args, version);
} else {
  const { main } = await import(entry.href);
  process.exitCode = await main(args, version);
}
