import { parseDocument, visit } from 'yaml';
for (const n of process.argv.slice(2).map(Number)) {
  const src = `name: ${'['.repeat(n)}${']'.repeat(n)}\n`;
  const t0 = performance.now();
  let doc;
  try { doc = parseDocument(src, { version: '1.2', schema: 'core', merge: false, uniqueKeys: true, prettyErrors: false, logLevel: 'silent' }); console.log(n, 'parsed', doc.errors.length, (performance.now()-t0).toFixed(0)); } catch (e) { console.log(n, 'parse throws', e.message); continue; }
  try { visit(doc, { Node() {} }); console.log(n, 'visited'); } catch (e) { console.log(n, 'visit throws', e.message); }
  try { doc.toJS(); console.log(n, 'tojs'); } catch (e) { console.log(n, 'toJS throws', e.message); }
}
