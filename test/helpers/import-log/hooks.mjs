// Module resolution hooks (see register.mjs): record the resolved URLs that match.
import { appendFileSync } from 'node:fs';

let file;
let match = '';

export function initialize(data) {
  file = data?.file;
  match = data?.match ?? '';
}

export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (file && r.url.includes(match)) appendFileSync(file, `${r.url}\n`);
  return r;
}
