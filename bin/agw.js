#!/usr/bin/env node
// The one executable. `--version` answers without loading anything else.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const version = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  process.stdout.write(`${version}\n`);
} else {
  const { main } = await import('../dist/cli/index.js');
  const code = await main(args, version);
  if (code !== 0 || args[0] !== 'serve') process.exitCode = code;
}
