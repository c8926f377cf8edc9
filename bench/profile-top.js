// Top frames of a V8 CPU profile (`node --cpu-prof`, e.g. from `bench/run.js --profile DIR`):
//   node bench/profile-top.js FILE.cpuprofile [N] [--measured]
// Prints self time by function and by file/package, so hot spots can be named with numbers.
// --measured: only the samples after the longest idle stretch (bench/call-phases.js --keep
// pauses between warm-up and the measured run: start-up and schema compilation left out).
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const measured = args.includes('--measured');
const [file, nArg] = args.filter((x) => x !== '--measured');
if (!file) {
  console.error('usage: node bench/profile-top.js FILE.cpuprofile [N]');
  process.exit(2);
}
const n = Number(nArg ?? 30);
const prof = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(prof.nodes.map((node) => [node.id, node]));
const self = new Map();
let from = 0;
if (measured) {
  for (let i = 0, run = 0, start = 0, best = 0; i < prof.samples.length; i++) {
    if (byId.get(prof.samples[i]).callFrame.functionName === '(idle)') {
      if (run === 0) start = i;
      run += prof.timeDeltas[i + 1] ?? 0;
      if (run > best) [best, from] = [run, start];
    } else run = 0;
  }
}
// samples[i] took timeDeltas[i + 1] microseconds (the delta before the next sample)
for (let i = from; i < prof.samples.length; i++) {
  const dt = prof.timeDeltas[i + 1] ?? 0;
  self.set(prof.samples[i], (self.get(prof.samples[i]) ?? 0) + dt);
}
const total = [...self.values()].reduce((a, b) => a + b, 0);

function where(cf) {
  const url = cf.url.replace(/^file:\/\//, '');
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + 13).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url || '(native)';
}

const fns = new Map();
const files = new Map();
for (const [id, us] of self) {
  const cf = byId.get(id).callFrame;
  const fn = `${cf.functionName || '(anonymous)'}  ${where(cf)}${cf.url ? `:${cf.lineNumber + 1}` : ''}`;
  fns.set(fn, (fns.get(fn) ?? 0) + us);
  files.set(where(cf), (files.get(where(cf)) ?? 0) + us);
}
const pct = (us) => `${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms`;
const top = (m, k) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k);
console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled`);
console.log('\nself time by function:');
for (const [name, us] of top(fns, n)) console.log(`${pct(us)}  ${name}`);
console.log('\nself time by file / package:');
for (const [name, us] of top(files, Math.ceil(n / 2))) console.log(`${pct(us)}  ${name}`);
