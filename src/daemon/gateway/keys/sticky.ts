import { createHash } from 'node:crypto';
import type { ProviderKey } from '../../../shared/config/provider-keys.js';
import type { ResolvedProvider } from '../../../shared/config/resolve.js';

/**
 * Prompt-cache stickiness (CONTRACT "Calls stay where their prompt cache is"): the calls of
 * one conversation go to the provider, model and key that served its last call while
 * that key is healthy, so the provider's prompt cache (which is per account, hence per
 * key) stays warm. A conversation is the account plus, in this order: the body's
 * `prompt_cache_key`, its `user` (or the messages format's `metadata.user_id`), else the
 * leading messages: the system prompt and the turns up to the first user turn (their
 * first 8 KiB: a prompt cache is a prefix, so conversations sharing that much share a
 * cache too). Remembered per daemon, least recently used forgotten first, for `ttlMs`
 * after the last call (about a prompt cache's life).
 */
export interface Pin {
  provider: string;
  model: string | null;
  key: string;
  at: number;
}

const LEAD_BYTES = 8192;

const digest = (s: string) => createHash('sha256').update(s).digest('base64url').slice(0, 22);

function leading(body: Record<string, unknown>): string | undefined {
  const turns = Array.isArray(body.messages) ? body.messages : Array.isArray(body.contents) ? body.contents : undefined;
  if (!turns) return undefined;
  const first = turns.findIndex((t) => (t as { role?: unknown })?.role === 'user');
  const lead = [body.system ?? body.systemInstruction ?? body.instructions ?? null, turns.slice(0, first < 0 ? 1 : first + 1)];
  return JSON.stringify(lead).slice(0, LEAD_BYTES);
}

/** The conversation a call belongs to, or undefined when its body says nothing to tell. */
export function conversationOf(account: string, body: Record<string, unknown> | undefined): string | undefined {
  if (!body) return undefined;
  const pck = body.prompt_cache_key;
  if (typeof pck === 'string' && pck) return `${account}:p:${digest(pck)}`;
  const meta = body.metadata as { user_id?: unknown } | undefined;
  const user = typeof body.user === 'string' && body.user ? body.user : typeof meta?.user_id === 'string' && meta.user_id ? meta.user_id : undefined;
  if (user) return `${account}:u:${digest(user)}`;
  const lead = leading(body);
  return lead ? `${account}:m:${digest(lead)}` : undefined;
}

export class StickyRoutes {
  private readonly pins = new Map<string, Pin>();

  constructor(
    private readonly ttlMs: number,
    private readonly max: number,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  get size(): number {
    return this.pins.size;
  }

  /** The conversation's pin, if it is still fresh (then it counts as used now). */
  get(conversation: string, now: number): Pin | undefined {
    const pin = this.pins.get(conversation);
    if (!pin) return undefined;
    this.pins.delete(conversation);
    if (now - pin.at > this.ttlMs) return undefined;
    pin.at = now;
    this.pins.set(conversation, pin);
    return pin;
  }

  /** The conversation was served by this provider, model and key. */
  remember(conversation: string, provider: string, model: string | null, key: string, now: number): void {
    this.pins.delete(conversation);
    this.pins.set(conversation, { provider, model, key, at: now });
    while (this.pins.size > this.max) this.pins.delete(this.pins.keys().next().value as string);
  }
}

/** The pinned key of `provider`, when the pin is for it and the key is not cooling down. */
export function pinnedKey(pin: Pin | undefined, provider: ResolvedProvider, now: number): ProviderKey | undefined {
  if (!pin || pin.provider !== provider.def.id) return undefined;
  const key = provider.keys.find((k) => k.name === pin.key);
  return key && key.health.coolingUntil <= now ? key : undefined;
}
