import { it } from 'vitest';
import { parseFrontMatter, validateBundle } from '../../src/shared/bundle/index.js';
const steps = process.env.STEPS!.split(',');
it('deep', () => {
  for (const s of steps) {
    const [which, ns] = s.split(':'); const n = Number(ns);
    const t0 = performance.now();
    if (which === 'yaml') {
      const r = parseFrontMatter(`---\nname: ${'['.repeat(n)}${']'.repeat(n)}\n---\n`); console.log('RESULT', s, r.problems.map(p => p.message.slice(0, 80)));
    } else {
      const deep = `{"name":"t","description":"d","parameters":{"type":"object","properties":{"a":${'{"items":'.repeat(n)}{}${'}'.repeat(n)}}}}`;
      const v = validateBundle([{ path: 'tools/t.json', size: deep.length, kind: 'file', content: Buffer.from(deep) }]); console.log('RESULT', s, v.problems.map(p => p.rule + ' ' + p.message.slice(0, 80)));
    }
    console.log('RESULT ms', performance.now() - t0);
  }
});
