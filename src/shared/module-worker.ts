import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * A worker thread running one module of this source tree, named relative to the caller: the
 * compiled `NAME.js` beside it in dist/ (how agw runs), or, when the caller itself runs from
 * its TypeScript source (the test suite runs src/ through vitest, which does not reach into
 * worker threads), `NAME.ts` through a module loader that strips its types with the
 * `typescript` package (a dev dependency: present wherever src/ runs). The module's own
 * imports resolve the same way (`./x.js` to `./x.ts`).
 */
const LOADER = `
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
let tsPath;
let ts;
export function initialize(data) { tsPath = data.typescript; }
export async function resolve(specifier, context, next) {
  if (context.parentURL?.endsWith('.ts') && /^\\.\\.?\\//.test(specifier) && specifier.endsWith('.js')) {
    const url = new URL(specifier.slice(0, -3) + '.ts', context.parentURL);
    if (existsSync(url)) return { url: url.href, shortCircuit: true };
  }
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (!url.endsWith('.ts')) return next(url, context);
  ts ??= createRequire(tsPath)('typescript');
  const source = await readFile(new URL(url), 'utf8');
  const out = ts.transpileModule(source, { fileName: url, compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  return { format: 'module', source: out.outputText, shortCircuit: true };
}`;

const BOOT = `(async () => {
  const { workerData } = await import('node:worker_threads');
  const { register } = await import('node:module');
  register('data:text/javascript,' + encodeURIComponent(workerData.boot.loader), { data: { typescript: workerData.boot.typescript } });
  await import(workerData.boot.entry);
})().catch((e) => { throw e; });`;

/** Starts `name` (without extension) from the folder of `callerUrl` (the caller's import.meta.url). */
export function moduleWorker(callerUrl: string, name: string): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, callerUrl), { execArgv: [] });
  const typescript = createRequire(callerUrl).resolve('typescript');
  const boot = { loader: LOADER, typescript, entry: new URL(`./${name}.ts`, callerUrl).href };
  return new Worker(BOOT, { eval: true, execArgv: [], workerData: { boot } });
}
