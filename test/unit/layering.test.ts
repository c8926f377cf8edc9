import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';

/**
 * The house as drawn (src/README.md): every module sits in one layer and imports only from
 * its own layer or the ones below it. Type-only imports count too: a type cycle through
 * context is still a cycle a reader has to untangle.
 *
 *   cli → serve → app → routes → features → auth → context → store → shared
 */
const LAYERS: { name: string; paths: string[] }[] = [
  { name: 'cli', paths: ['src/cli/'] },
  { name: 'serve', paths: ['src/daemon/serve.ts', 'src/daemon/demo/'] },
  {
    name: 'app',
    paths: ['src/daemon/app.ts', 'src/daemon/fast-lane/', 'src/daemon/errors.ts', 'src/daemon/route-conventions.ts', 'src/daemon/finite-numbers.ts', 'src/daemon/schema-compilers.ts', 'src/daemon/logger.ts', 'src/daemon/paths.ts'],
  },
  { name: 'routes', paths: ['src/daemon/routes/'] },
  {
    name: 'features',
    paths: ['src/daemon/gateway/', 'src/daemon/keys/', 'src/daemon/marketplace/', 'src/daemon/money/', 'src/daemon/oauth/', 'src/daemon/requests/', 'src/daemon/telemetry/', 'src/daemon/web/'],
  },
  { name: 'auth', paths: ['src/daemon/auth/'] },
  { name: 'context', paths: ['src/daemon/context/'] },
  { name: 'store', paths: ['src/daemon/store/'] },
  { name: 'shared', paths: ['src/shared/'] },
];

/**
 * Imports that go up a layer on purpose, each with its reason. Adding a row is a design
 * decision: say why here, or move the code instead.
 */
const ALLOWED: { from: string; to: string; why: string }[] = [
  {
    from: 'src/daemon/store/sqlite.ts',
    to: 'src/daemon/money/sqlite/',
    why: "the SQLite store opens its daemon's booking ledger and journal: they share the store's one writer (group commit)",
  },
  {
    from: 'src/daemon/store/migrations/postgres/',
    to: 'src/daemon/money/postgres/',
    why: 'PostgreSQL migrations install the money engine\'s SQL functions and types, whose text lives beside the code that calls them',
  },
  {
    from: 'src/daemon/web/',
    to: 'src/daemon/errors.ts',
    why: "pages answer errors through the app's one error renderer (HTML or the Error body)",
  },
];

const ROOT = resolve(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [p] : [];
  });
}

const layerOf = (file: string) => LAYERS.findIndex((l) => l.paths.some((p) => file === p || (p.endsWith('/') && file.startsWith(p))));

/** Every relative import of a file (static, re-export, type-only, dynamic), as repo paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const specs = [
    ...text.matchAll(/^\s*(?:import|export)\s[^'";]*?from\s*['"](\.[^'"]+)['"]/gm),
    ...text.matchAll(/^\s*import\s*['"](\.[^'"]+)['"]/gm),
    ...text.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]);
  return specs.map((s) => relative(ROOT, resolve(dirname(join(ROOT, file)), s)).replace(/\.js$/, '.ts'));
}

const allowed = (from: string, to: string) => ALLOWED.some((a) => from.startsWith(a.from) && to.startsWith(a.to));

describe('the layering of src/', () => {
  const files = sourceFiles(join(ROOT, 'src')).map((f) => relative(ROOT, f));

  test('every source file sits in exactly one layer', () => {
    expect(files.filter((f) => layerOf(f) < 0)).toEqual([]);
  });

  test('no import reaches a higher layer (except the few listed, each with its reason)', () => {
    const broken: string[] = [];
    for (const f of files) {
      for (const t of importsOf(f)) {
        const tsx = t.replace(/\.ts$/, '.tsx');
        const target = files.includes(t) ? t : files.includes(tsx) ? tsx : t;
        const [a, b] = [layerOf(f), layerOf(target)];
        if (b >= 0 && b < a && !allowed(f, target)) broken.push(`${f} (${LAYERS[a].name}) imports ${target} (${LAYERS[b].name})`);
      }
    }
    expect(broken).toEqual([]);
  });

  test('shared/ is used by the CLI and the daemon alike, so it imports neither', () => {
    const leaks = files.filter((f) => f.startsWith('src/shared/')).flatMap((f) => importsOf(f).filter((t) => !t.startsWith('src/shared/')).map((t) => `${f} -> ${t}`));
    expect(leaks).toEqual([]);
  });

  test('the check itself sees a break: a store module importing a route would be reported', () => {
    expect(layerOf('src/daemon/store/users.ts')).toBeGreaterThan(layerOf('src/daemon/routes/keys.ts'));
    expect(allowed('src/daemon/store/users.ts', 'src/daemon/routes/keys.ts')).toBe(false);
  });
});

/**
 * Every folder under src/ opens with a README.md: what lives there (each of its files by
 * name), its layer (a line `Layer: **name** …`, as LAYERS above places its files) and where
 * the neighbouring concerns are. src/README.md draws the whole house. A file added, renamed
 * or removed without its README fails here.
 */
describe('the READMEs of src/', () => {
  const dirs = (function walk(dir: string): string[] {
    return [dir, ...readdirSync(join(ROOT, dir)).filter((n) => statSync(join(ROOT, dir, n)).isDirectory()).flatMap((n) => walk(`${dir}/${n}`))];
  })('src');
  const filesIn = (dir: string) => readdirSync(join(ROOT, dir)).filter((n) => /\.tsx?$/.test(n) && statSync(join(ROOT, dir, n)).isFile());
  const readme = (dir: string) => readFileSync(join(ROOT, dir, 'README.md'), 'utf8');
  /** `name.ts` written on its own (not `money/name.ts`, which names another folder's file) */
  const bareNames = (text: string) => [...text.matchAll(/(?<![\w./*-])([\w-]+(?:\.[\w-]+)*\.tsx?)(?![\w.-])/g)].map((m) => m[1]);

  test('every folder has a README.md: 5 to 30 lines, src/README.md (the map) up to 60', () => {
    const missing = dirs.filter((d) => !existsSync(join(ROOT, d, 'README.md')));
    expect(missing).toEqual([]);
    const sized = dirs.map((d) => ({ d, lines: readme(d).trimEnd().split('\n').length })).filter(({ d, lines }) => lines < 5 || lines > (d === 'src' ? 60 : 30));
    expect(sized).toEqual([]);
  });

  test("each README names every .ts/.tsx file of its folder, and no file the folder does not hold", () => {
    const drift: string[] = [];
    for (const d of dirs) {
      const files = filesIn(d);
      const named = new Set(bareNames(readme(d)));
      for (const f of files) if (!named.has(f)) drift.push(`${d}/README.md does not name ${f}`);
      for (const n of named) if (!files.includes(n)) drift.push(`${d}/README.md names ${n}, which is not in ${d}/ (name a file of another folder with its folder: <folder>/${n})`);
    }
    expect(drift).toEqual([]);
  });

  test("each README's Layer line names the layer of every file in its folder", () => {
    const wrong: string[] = [];
    for (const d of dirs) {
      const layers = new Set(filesIn(d).filter((f) => !/\.test\.tsx?$/.test(f)).map((f) => LAYERS[layerOf(`${d}/${f}`)]?.name));
      if (layers.size === 0) continue;
      const line = readme(d).split('\n').find((l) => l.startsWith('Layer:'));
      for (const l of layers) if (!line?.includes(`**${l}**`)) wrong.push(`${d}/README.md: no "Layer: **${l}**"`);
    }
    expect(wrong).toEqual([]);
  });

  test('the check itself sees drift: a bare name counts, one behind a folder does not', () => {
    expect(bareNames('- `engine.ts`: the interface; `sqlite/ledger.ts` and money/calls.ts elsewhere; vNN-*.ts')).toEqual(['engine.ts']);
  });
});
