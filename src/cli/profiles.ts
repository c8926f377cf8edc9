/**
 * Non-secret CLI settings: named profiles (base URL) and the default profile, in
 * `config.json` under the config directory (`AGW_CONFIG_DIR`, else
 * `${XDG_CONFIG_HOME:-~/.config}/agw`). Secrets live in `credentials.ts`.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from './errors.js';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8787';
export const DEFAULT_PROFILE = 'default';
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface CliConfig {
  defaultProfile?: string;
  profiles: Record<string, { baseUrl?: string }>;
}

export function configDir(): string {
  if (process.env.AGW_CONFIG_DIR) return process.env.AGW_CONFIG_DIR;
  return join(process.env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'agw');
}

/** Create the config directory owner-only (0700). */
export function ensureConfigDir(): string {
  const dir = configDir();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** Read a JSON file; undefined when missing, a UsageError naming the file when corrupt. */
export function readJsonFile<T>(file: string): T | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new UsageError(`${file} is not valid JSON`, 'fix or delete the file');
  }
}

/** Write atomically (temp file + rename) with the given mode. */
export function writeJsonFile(file: string, value: unknown, mode: number): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(value, null, 2) + '\n', { mode });
  renameSync(tmp, file);
}

const configFile = () => join(configDir(), 'config.json');

export function loadCliConfig(): CliConfig {
  const c = readJsonFile<Partial<CliConfig>>(configFile());
  return { defaultProfile: c?.defaultProfile, profiles: c?.profiles && typeof c.profiles === 'object' ? c.profiles : {} };
}

export function saveCliConfig(c: CliConfig): void {
  ensureConfigDir();
  writeJsonFile(configFile(), c, 0o600);
}

export function checkProfileName(name: string): string {
  if (!PROFILE_NAME.test(name)) {
    throw new UsageError(`invalid profile name "${name}"`, 'use letters, digits, ".", "_" or "-" (at most 64)');
  }
  return name;
}

/** `http://host:port` from what a user typed: trailing slashes and a trailing `/api` removed. */
export function normalizeBaseUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UsageError(`invalid base URL "${raw}"`, 'example: --base-url http://127.0.0.1:8787');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UsageError(`base URL must be http(s), got ${u.protocol}`);
  const path = u.pathname.replace(/\/+$/, '').replace(/\/api$/, '');
  return `${u.origin}${path}`;
}

export interface Target {
  profile: string;
  baseUrl: string;
  /** Where the base URL came from (flag, env, profile or default). */
  baseUrlFrom: 'flag' | 'env' | 'profile' | 'default';
}

/** Profile and base URL: `--base-url` > `AGW_BASE_URL` > profile > the local default. */
export function resolveTarget(opts: { profile?: string; baseUrl?: string }): Target {
  const config = loadCliConfig();
  const profile = checkProfileName(opts.profile ?? process.env.AGW_PROFILE ?? config.defaultProfile ?? DEFAULT_PROFILE);
  if (opts.baseUrl) return { profile, baseUrl: normalizeBaseUrl(opts.baseUrl), baseUrlFrom: 'flag' };
  if (process.env.AGW_BASE_URL) return { profile, baseUrl: normalizeBaseUrl(process.env.AGW_BASE_URL), baseUrlFrom: 'env' };
  const stored = config.profiles[profile]?.baseUrl;
  if (stored) return { profile, baseUrl: normalizeBaseUrl(stored), baseUrlFrom: 'profile' };
  return { profile, baseUrl: DEFAULT_BASE_URL, baseUrlFrom: 'default' };
}

/** Remember a profile's base URL; the first profile saved becomes the default. */
export function rememberProfile(profile: string, baseUrl: string): void {
  const c = loadCliConfig();
  c.profiles[profile] = { ...c.profiles[profile], baseUrl };
  c.defaultProfile ??= profile;
  saveCliConfig(c);
}
