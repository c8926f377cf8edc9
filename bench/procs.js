// Child processes of the benchmark: the mock upstream, the bare forwarder, the agw
// daemon and the admin CLI. Every server child prints {"event":"listening","url"} first.
import { spawn, execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const AGW_BIN = join(ROOT, 'bin', 'agw.js');
const SERVERS = join(ROOT, 'bench', 'servers.js');

/** Spawns `node ...args` and resolves once it printed its listening line. */
export function spawnServer(args, { env, name, timeoutMs = 30_000, cwd = ROOT } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let ready = false;
    const exited = new Promise((r) => child.once('exit', (code, signal) => r(code ?? signal)));
    const timer = setTimeout(() => fail(new Error(`${name} did not start within ${timeoutMs} ms`)), timeoutMs);
    const fail = (e) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(e);
    };
    child.stdout.on('data', (d) => {
      if (ready) return;
      out += d;
      const m = /"url":"(http:\/\/[^"]+)"/.exec(out);
      if (!m) return;
      ready = true;
      clearTimeout(timer);
      resolve({
        name,
        url: m[1],
        pid: child.pid,
        stderr: () => err,
        async stop(signal = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
          const code = await exited;
          clearTimeout(t);
          return code;
        },
      });
    });
    // keep only the tail of stderr (the daemon logs there)
    child.stderr.on('data', (d) => (err = (err + d).slice(-8_000)));
    exited.then((code) => {
      if (!ready) fail(new Error(`${name} exited with ${code} before listening:\n${err.slice(-2000)}`));
    });
  });
}

export const startMockProcess = () => spawnServer([SERVERS, 'mock'], { name: 'mock upstream' });
export const startForwarderProcess = (upstream, { nodeFlags = [], env } = {}) => spawnServer([...nodeFlags, SERVERS, 'forwarder', upstream], { name: 'bare forwarder', env });
/** The accounting floor (servers.js startFloor), journaling to `journal`. */
export const startFloorProcess = (upstream, journal, { nodeFlags = [], env } = {}) => spawnServer([...nodeFlags, SERVERS, 'floor', upstream, journal], { name: 'accounting floor', env });
/** The accounting floor behind fastify (servers.js startFastifyFloor): what the framework adds. */
export const startFastifyFloorProcess = (upstream, journal) => spawnServer([SERVERS, 'floor-fastify', upstream, journal], { name: 'accounting floor behind fastify' });

/** The daemon's config: both chat providers point at the mock; logs only warnings. */
export function writeAgwConfig(dataDir, mockUrl) {
  const file = join(dataDir, 'agw.yaml');
  writeFileSync(
    file,
    [
      'logLevel: warn',
      'providers:',
      `  openai: { baseUrl: "${mockUrl}", apiKey: sk-bench-agw }`,
      `  anthropic: { baseUrl: "${mockUrl}", apiKey: sk-bench-agw }`,
      '',
    ].join('\n'),
  );
  return file;
}

/**
 * `agw serve` on a free port; `nodeFlags` e.g. ['--cpu-prof', '--cpu-prof-dir=DIR']; `env`: more
 * variables; `bin`: another build's bin/agw.js (bench/ab.js compares two).
 */
export function startDaemonProcess({ dataDir, configFile, nodeFlags = [], env = {}, bin = AGW_BIN, cwd }) {
  const args = [...nodeFlags, bin, 'serve', '--port', '0', '--host', '127.0.0.1', '--data', dataDir, '--config', configFile, '--json'];
  return spawnServer(args, { name: 'agw daemon', env: { AGW_DATA: undefined, AGW_CONFIG: undefined, ...env }, cwd });
}

/** Runs `agw admin …  --json` against the data dir and returns the parsed document. */
export function admin(dataDir, configFile, args) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [AGW_BIN, 'admin', ...args, '--data', dataDir, '--config', configFile, '--json'],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`agw admin ${args.join(' ')} failed: ${stderr || err.message}`));
        try {
          resolve(JSON.parse(stdout));
        } catch {
          reject(new Error(`agw admin ${args.join(' ')} printed no JSON: ${stdout}`));
        }
      },
    );
  });
}

/** Creates a user with a key, a large wallet and no quota caps (the last three in parallel). */
export async function seedUser(dataDir, configFile, { email, password, tier = 'pro', credit = 1_000_000 }) {
  const user = await admin(dataDir, configFile, ['user', 'create', '--email', email, '--tier', tier, '--password', password]);
  const [key] = await Promise.all([
    admin(dataDir, configFile, ['key', 'create', user.id, '--name', 'bench']),
    admin(dataDir, configFile, ['wallet', 'credit', user.id, String(credit), '--note', 'bench seed']),
    admin(dataDir, configFile, ['quota', 'set', user.id, 'ai_chat', '-1']),
  ]);
  return { id: user.id, email, password, key: key.key };
}

/**
 * Many users with a key each, a large wallet and no quota cap, made in this process
 * through the built store functions (quicker than four `agw admin` runs per user).
 */
export async function seedUsers(dataDir, configFile, { prefix, count, tier = 'pro', credit = 1_000_000 }) {
  const dist = (m) => import(new URL(`../dist/${m}`, import.meta.url).href);
  const [{ loadConfig }, { openAndMigrate }, users, keys, wallets, overrides] = await Promise.all([
    dist('shared/config/load.js'),
    dist('daemon/store/open.js'),
    dist('daemon/store/users.js'),
    dist('daemon/store/keys.js'),
    dist('daemon/money/wallets.js'),
    dist('daemon/store/quota-overrides.js'),
  ]);
  const config = loadConfig(configFile);
  const { db } = await openAndMigrate({ store: config.store, dataDir });
  try {
    const out = [];
    for (let i = 0; i < count; i++) {
      out.push(
        await db.tx(async (q) => {
          const u = await users.createUser(q, { email: `${prefix}-${i}@example.com`, tier });
          const k = await keys.createApiKey(q, u.id, 'bench');
          await wallets.credit(q, { userId: u.id, amount: credit * 1e9, type: 'credit', description: 'bench seed' });
          await overrides.setQuotaOverride(q, u.id, 'ai_chat', -1);
          return { id: u.id, key: k.key };
        }),
      );
    }
    return out;
  } finally {
    await db.close();
  }
}

/** Resident set size and its high-water mark of a process, in MB (Linux /proc). */
export function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
  } catch {
    return { rssMb: null, hwmMb: null };
  }
}

/** The machine's CPU time so far, in clock ticks: busy (all but idle and iowait) and total, over all cores. */
export function machineTicks() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((n, x) => n + x, 0);
  return { busy: total - f[3] - f[4], total };
}

/** CPU time (user + system) a process has used so far, in ms (Linux /proc, 10 ms ticks). */
export function cpuMsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return null;
  }
}
