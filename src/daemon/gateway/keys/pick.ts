import type { ProviderKey } from '../../../shared/config/provider-keys.js';
import { AgwError } from '../../../shared/errors.js';
import { cooldownMs, type KeyPolicy } from './policy.js';

/**
 * Which of a provider's keys takes a call (CONTRACT "Several keys per provider"): among the
 * keys that are neither cooling down nor at their rpm/tpm limit, the conversation's key
 * when it has one (stickiness), else by smooth weighted round-robin (nginx's: each key
 * gains its weight, the richest is picked and pays the total back, so 3:1 weights give
 * A A B A … exactly). When every key with room is cooling, the one whose cooldown ends
 * first is tried (the upstream decides); when no key has room, the call is refused with
 * 429 (KeysExhausted). Limits are token buckets per key, refilled continuously: rpm counts
 * a call when its key is picked, tpm the tokens of the answers served. Counted per daemon.
 */
export class KeysExhausted extends AgwError {
  constructor(
    readonly provider: string,
    readonly retryAfterMs: number,
  ) {
    const s = Math.max(1, Math.ceil(retryAfterMs / 1000));
    super('UPSTREAM_RATE_LIMITED', `every key of ${provider} is at its rate limit here: retry in ${s} s`, { provider, retryAfterMs }, { 'retry-after': String(s) });
  }
}

const limited = (k: ProviderKey) => k.rpm !== null || k.tpm !== null;

/** Refills a limited key's buckets for the time since the last refill. */
function refill(k: ProviderKey, now: number): void {
  const h = k.health;
  const dt = now - h.refilledAt;
  if (dt <= 0) return;
  if (h.refilledAt === 0) {
    h.rpmLeft = k.rpm ?? 0;
    h.tpmLeft = k.tpm ?? 0;
  } else {
    if (k.rpm !== null) h.rpmLeft = Math.min(k.rpm, h.rpmLeft + (dt * k.rpm) / 60_000);
    if (k.tpm !== null) h.tpmLeft = Math.min(k.tpm, h.tpmLeft + (dt * k.tpm) / 60_000);
  }
  h.refilledAt = now;
}

function hasRoom(k: ProviderKey): boolean {
  return (k.rpm === null || k.health.rpmLeft >= 1) && (k.tpm === null || k.health.tpmLeft > 0);
}

/** ms until a key at its limit has room again. */
function roomInMs(k: ProviderKey): number {
  const h = k.health;
  const rpm = k.rpm !== null && h.rpmLeft < 1 ? ((1 - h.rpmLeft) * 60_000) / k.rpm : 0;
  const tpm = k.tpm !== null && h.tpmLeft <= 0 ? ((1 - h.tpmLeft) * 60_000) / k.tpm : 0;
  return Math.max(rpm, tpm);
}

function roundRobin(ready: ProviderKey[]): ProviderKey {
  let total = 0;
  let best = ready[0];
  for (const k of ready) {
    k.health.current += k.weight;
    total += k.weight;
    if (k.health.current > best.health.current) best = k;
  }
  best.health.current -= total;
  return best;
}

/**
 * The key for a call's first try (`except` undefined: throws KeysExhausted when none has
 * room), or for its retry (`except` the key that failed: undefined when no other key is
 * ready; a retry never goes to a cooling key). A picked key with an rpm pays one request.
 */
export function pickKey(provider: string, keys: readonly ProviderKey[], now: number, prefer?: ProviderKey, except?: ProviderKey): ProviderKey | undefined {
  const ready: ProviderKey[] = [];
  let probe: ProviderKey | undefined;
  let soonest = Number.POSITIVE_INFINITY;
  for (const k of keys) {
    if (k === except) continue;
    if (limited(k)) refill(k, now);
    if (!hasRoom(k)) {
      soonest = Math.min(soonest, roomInMs(k));
      continue;
    }
    if (k.health.coolingUntil > now) {
      if (!probe || k.health.coolingUntil < probe.health.coolingUntil) probe = k;
      continue;
    }
    ready.push(k);
  }
  let chosen: ProviderKey | undefined;
  if (prefer && ready.includes(prefer)) chosen = prefer;
  else if (ready.length) chosen = roundRobin(ready);
  else if (except) return undefined;
  else if (probe) chosen = probe;
  else throw new KeysExhausted(provider, Number.isFinite(soonest) ? soonest : 60_000);
  if (chosen.rpm !== null) chosen.health.rpmLeft -= 1;
  return chosen;
}

/** A try with the key failed (429, 5xx, no connection): it cools down. */
export function keyFailed(p: KeyPolicy, k: ProviderKey, now: number, retryAfter: number | undefined): void {
  const h = k.health;
  h.failures++;
  h.streak++;
  h.coolingUntil = now + cooldownMs(p, h.streak, retryAfter);
}

/** A try with the key was answered: whatever cooldown it had is over. */
export function keySucceeded(k: ProviderKey): void {
  k.health.streak = 0;
  k.health.coolingUntil = 0;
}

/** The tokens of an answer served with the key, against its tpm. */
export function keyTokens(k: ProviderKey, tokens: number): void {
  if (k.tpm !== null) k.health.tpmLeft -= tokens;
}
