// CLI wall times: `agw --version` and `agw skill validate` on a 200-file bundle, each the
// median of several runs of a fresh `node bin/agw.js` process (what a user waits for).
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AGW_BIN, ROOT } from './procs.js';
import { median, msSince } from './stats.js';

/** A valid bundle of exactly `files` files: SKILL.md, tool manifests, scripts, assets. */
export function writeBundle(dir, files = 200) {
  const tools = Math.floor((files - 1) / 2);
  const scripts = Math.floor((files - 1 - tools) / 2);
  const assets = files - 1 - tools - scripts;
  for (const sub of ['tools', 'scripts', 'assets']) mkdirSync(join(dir, sub), { recursive: true });
  writeFileSync(
    join(dir, 'SKILL.md'),
    '---\nname: bench-skill\ndescription: A generated bundle for the agw benchmark (validate wall time).\n---\n\n# bench-skill\n\nUse the tools under tools/.\n',
  );
  const pad = (i) => String(i).padStart(3, '0');
  for (let i = 0; i < tools; i++) {
    const manifest = {
      name: `bench_tool_${pad(i)}`,
      description: `Generated tool ${i}: looks something up for the benchmark.`,
      parameters: {
        type: 'object',
        // distinct schemas, as real tools have: nothing can be cached across manifests
        properties: {
          [`query_${i}`]: { type: 'string', description: 'What to look up.', maxLength: 100 + i },
          limit: { type: 'integer', minimum: 1, maximum: 50 + i },
          mode: { enum: ['fast', 'full', `m${i}`] },
        },
        required: [`query_${i}`],
        additionalProperties: false,
      },
    };
    writeFileSync(join(dir, 'tools', `tool-${pad(i)}.json`), JSON.stringify(manifest, null, 2));
  }
  for (let i = 0; i < scripts; i++) writeFileSync(join(dir, 'scripts', `script-${pad(i)}.js`), `export const n = ${i};\n`);
  for (let i = 0; i < assets; i++) writeFileSync(join(dir, 'assets', `asset-${pad(i)}.txt`), `asset ${i}\n`.repeat(20));
  return { dir, files };
}

/** Median wall time (ms) of `runs` runs of `node [bin/agw.js] ...args`, and the last result. */
function timeCli(args, runs, bin = [AGW_BIN]) {
  const times = [];
  let last;
  const warm = runs > 2 ? 1 : 0; // the first run warms the file cache
  for (let i = 0; i < runs + warm; i++) {
    const t0 = process.hrtime.bigint();
    last = spawnSync(process.execPath, [...bin, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    const ms = msSince(t0);
    if (i >= warm) times.push(ms);
  }
  return { ms: median(times), min: Math.min(...times), runs, status: last.status, stdout: last.stdout, stderr: last.stderr };
}

export function cliTimes(tmpDir, { runs = 7 } = {}) {
  // the floor: starting node itself on this machine, now
  const node = timeCli(['-e', '0'], runs, []);
  const version = timeCli(['--version'], runs);
  const out = {
    nodeStartup: { ms: node.ms, min: node.min, runs },
    version: { ms: version.ms, min: version.min, runs, ok: version.status === 0 && /^\d+\.\d+\.\d+/.test(version.stdout) },
  };
  const bundle = writeBundle(join(tmpDir, 'bench-skill'));
  const v = timeCli(['skill', 'validate', bundle.dir, '--json'], runs);
  let doc = null;
  try {
    doc = JSON.parse(v.stdout);
  } catch {
    /* not available or not JSON */
  }
  out.validate = doc
    ? { available: true, ms: v.ms, min: v.min, runs, files: doc.files, ok: doc.ok === true, problems: doc.problems?.length ?? 0 }
    : { available: false, reason: (v.stderr || v.stdout).trim().split('\n')[0] || `exit ${v.status}` };
  return out;
}
