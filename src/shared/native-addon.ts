import { createRequire } from 'node:module';

/**
 * A module of native/ (`npm install` builds them with node-gyp on Linux with a C compiler),
 * or null where it is not built, cannot load, or lacks a function of `fns` (a build older
 * than this code, not rebuilt after an update): the caller then does without it.
 */
export function nativeAddon<T>(name: string, fns: readonly (keyof T & string)[]): T | null {
  try {
    // from dist/shared/ and from src/shared/ (tests) alike
    const m = createRequire(import.meta.url)(`../../native/build/Release/${name}.node`) as Partial<T>;
    return fns.every((f) => typeof m[f] === 'function') ? (m as T) : null;
  } catch {
    return null;
  }
}
