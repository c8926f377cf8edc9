import type { KeyT } from '../shared/schemas/keys.js';
import { usd, when } from './format.js';
import { bold, printKv, printTable } from './output.js';

/** Keys for people: one table row per key, or one key's fields (the secret first, once). */
const budget = (k: KeyT) => (k.limits.budget === null ? '' : `${usd(k.limits.budget)}/${k.limits.budgetPeriod}`);
const status = (k: KeyT) => (k.revoked ? 'revoked' : k.expiresAt && Date.parse(k.expiresAt) <= Date.now() ? 'expired' : 'active');

export function printKeys(items: readonly KeyT[]): void {
  printTable(
    ['ID', 'NAME', 'PREFIX', 'STATUS', 'BUDGET', 'SPENT', 'RPM', 'TPM', 'MODELS', 'EXPIRES', 'LAST USED'],
    items.map((k) => [
      k.id,
      k.name ?? '',
      k.prefix,
      status(k),
      budget(k),
      usd(k.spent),
      k.limits.rpm ?? '',
      k.limits.tpm ?? '',
      k.limits.models?.join(',') ?? '',
      when(k.expiresAt),
      when(k.lastUsedAt),
    ]),
  );
}

export function printKey(k: KeyT & { key?: string }): void {
  if (k.key) process.stdout.write(`${bold('key')}  ${k.key}\n(shown once: store it now)\n\n`);
  printKv([
    ['id', k.id],
    ['name', k.name ?? ''],
    ['prefix', k.prefix],
    ['status', status(k)],
    ['budget', budget(k) || 'none'],
    ['spent', `${usd(k.spent)}${k.limits.budget === null ? ' (all time)' : ` this ${k.limits.budgetPeriod === 'total' ? 'key' : k.limits.budgetPeriod}`}`],
    ['rpm', k.limits.rpm ?? 'no limit'],
    ['tpm', k.limits.tpm ?? 'no limit'],
    ['models', k.limits.models?.join(', ') ?? 'any'],
    ['expires', when(k.expiresAt) || 'never'],
    ['last used', when(k.lastUsedAt) || 'never'],
    ['made with', k.parentKeyId ?? ''],
  ]);
}
