/** `agw entitlements`, `aliases`, `providers`, `wallet [transactions|topup]`: the API's JSON with --json, tables otherwise. */
import { Api } from '../api.js';
import type { GlobalOpts } from '../auth.js';
import { CliError, UsageError } from '../errors.js';
import { usd, when } from '../format.js';
import { bold, dim, printJson, printKv, printTable } from '../output.js';
import type { Aliases, Entitlements, ProviderCatalog, Transactions, Wallet } from './account-types.js';

const section = (title: string) => process.stdout.write(`\n${bold(title)}\n`);

export async function entitlements(opts: GlobalOpts): Promise<void> {
  const e = await (await Api.open(opts)).get<Entitlements>('/gateway/entitlements', { auth: 'bearer' });
  if (opts.json) return printJson(e);
  printKv([
    ['user', e.userId],
    ['tier', `${e.tierDisplayName} (${e.tier})`],
    ['model bands', e.modelBands.join(', ')],
    ['capabilities', e.capabilities.join(', ')],
    ['balance', e.wallet.unlimited ? 'unlimited' : usd(e.wallet.balance)],
    ['allowance left', `${usd(e.wallet.monthlyAllowanceRemaining)} of ${usd(e.wallet.monthlyAllowance)}`],
    ['quotas reset', when(e.period.resetsAt)],
  ]);
  section('Quotas');
  printTable(
    ['USAGE TYPE', 'USED', 'LIMIT', 'REMAINING'],
    Object.entries(e.quotas).map(([k, q]) => [k, q.used, q.unlimited ? 'unlimited' : q.limit, q.unlimited ? '-' : q.remaining]),
  );
  section('Models');
  printTable(['ALIAS', 'PROVIDER', 'MODEL'], e.models.map((m) => [m.alias, m.provider, m.modelId]));
}

export async function aliases(opts: GlobalOpts): Promise<void> {
  const a = await (await Api.open(opts)).get<Aliases>('/gateway/aliases', { auth: 'optional' });
  if (opts.json) return printJson(a);
  process.stdout.write(`tier ${a.tier}, bands ${a.modelBands.join(', ')}\n`);
  section('Aliases');
  printTable(
    ['ALIAS', 'ALLOWED', 'TARGETS (in order; * = not on your tier)'],
    a.aliases.map((x) => [x.alias, x.allowed ? 'yes' : 'no', x.targets.map((t) => `${t.provider}/${t.model}${t.allowed ? '' : '*'}`).join(', ')]),
  );
  const providers = a.unifiedChatProviders ?? ['openai', 'anthropic'];
  const served = providers.length > 1 ? `${providers.slice(0, -1).join(', ')} and ${providers.at(-1)}` : providers.join('');
  section(`Models for unified chat (agw chat, POST /api/gateway/chat: ${served} models)`);
  printTable(['PROVIDER', 'MODEL', 'BAND'], a.allowedModels.map((m) => [m.provider, m.model, m.band]));
  if (a.proxyModels?.length) {
    section('Other models of your tier, not served by unified chat: through the proxy');
    printTable(
      ['PROVIDER', 'MODEL', 'BAND', 'PROXY PATH'],
      a.proxyModels.map((m) => [m.provider, m.model, m.band, m.providerHasKey ? `${m.proxy}…` : `${m.proxy}… (no key on this service)`]),
    );
  }
  process.stdout.write(`\nsmart-route provider order: ${a.smartRouteProviderOrder.join(' > ')}\n`);
}

export async function providers(id: string | undefined, opts: GlobalOpts): Promise<void> {
  const c = await (await Api.open(opts)).get<ProviderCatalog>('/portal/providers/public', { auth: 'none' });
  if (!id) {
    if (opts.json) return printJson(c);
    printTable(
      ['PROVIDER', 'CATEGORY', 'KEY', 'MARGIN', 'PRICED', 'DESCRIPTION'],
      c.providers.map((p) => [
        p.id, p.category, p.hasKey ? 'yes' : 'no', `${p.effectiveMargin}x`,
        p.pricing.kind === 'llm' ? `${p.pricing.models.length} models` : `${p.pricing.units.length} units`, p.description,
      ]),
    );
    return;
  }
  const p = c.providers.find((x) => x.id === id);
  if (!p) throw new CliError(`no provider ${id}`, `providers: ${c.providers.map((x) => x.id).join(', ')}`, 'PROVIDER_NOT_FOUND');
  if (opts.json) return printJson(p);
  process.stdout.write(`${bold(p.id)} ${dim(`${p.category}, ${p.effectiveMargin}x margin, prices in ${p.pricing.currency} (updated ${p.pricing.lastUpdated})`)}\n`);
  if (p.pricing.kind === 'llm') {
    printTable(
      ['MODEL', 'IN /1M', 'OUT /1M', 'RAW IN', 'RAW OUT', 'RAW CACHED IN'],
      p.pricing.models.map((m) => [m.model, usd(m.inputPer1MRetail), usd(m.outputPer1MRetail), usd(m.inputPer1M), usd(m.outputPer1M), usd(m.cachedInputPer1M)]),
    );
  } else {
    printTable(['UNIT', 'PRICE', 'RAW', 'DESCRIPTION'], p.pricing.units.map((u) => [u.unit, usd(u.priceRetail), usd(u.price), u.description]));
  }
}

/** "$4.20 ($0.35 held by 3 calls in flight)": what a new call can be admitted against (the row is named "available"). */
function availableText(w: Wallet & { held?: number; heldCalls?: number }): string {
  const held = w.held ?? 0;
  const available = Math.max(0, Math.round((w.balance + w.monthlyAllowanceRemaining - held) * 1e9) / 1e9);
  const calls = w.heldCalls ?? 0;
  return held > 0 || calls > 0 ? `${usd(available)} (${usd(held)} held by ${calls} call${calls === 1 ? '' : 's'} in flight)` : usd(available);
}

function printWallet(w: Wallet & { held?: number; heldCalls?: number }): void {
  printKv([
    ['balance', w.unlimited ? `unlimited (${usd(w.balance)})` : usd(w.balance)],
    ...(w.unlimited ? [] : [['available', availableText(w)] as [string, string]]),
    ['currency', w.currency],
    ['monthly allowance', usd(w.monthlyAllowance)],
    ['allowance used', usd(w.monthlyAllowanceUsed)],
    ['allowance left', `${usd(w.monthlyAllowanceRemaining)} this month`],
    ['allowance resets', when(w.monthlyAllowanceResetsAt)],
  ]);
}

export async function wallet(opts: GlobalOpts): Promise<void> {
  const w = await (await Api.open(opts)).get<Wallet>('/wallet');
  if (opts.json) return printJson(w);
  printWallet(w);
}

/** Where a debit was paid from: this month's allowance, the balance, or both ('' for credits). */
function paidFrom(x: { amount: number; fromAllowance?: number }): string {
  if (x.amount >= 0) return '';
  const a = x.fromAllowance ?? 0;
  if (a <= 0) return 'balance';
  return a + x.amount >= -1e-9 ? 'allowance' : `allowance ${usd(a)} + balance`;
}

export async function transactions(opts: GlobalOpts & { limit?: string; cursor?: string }): Promise<void> {
  const limit = Number(opts.limit ?? 20);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new UsageError('--limit must be an integer from 1 to 200');
  const t = await (await Api.open(opts)).get<Transactions>('/wallet/transactions', { query: { limit, cursor: opts.cursor } });
  if (opts.json) return printJson(t);
  printTable(
    ['DATE', 'TYPE', 'AMOUNT', 'PAID FROM', 'BALANCE', 'DESCRIPTION'],
    t.items.map((x) => [when(x.createdAt), x.type, usd(x.amount), paidFrom(x), usd(x.balanceAfter), x.description ?? [x.providerId, x.model].filter(Boolean).join('/')]),
  );
  if (t.nextCursor) process.stderr.write(dim(`more: agw wallet transactions --cursor ${t.nextCursor}\n`));
}

export async function topup(amountArg: string, opts: GlobalOpts): Promise<void> {
  const amount = Number(amountArg);
  if (!Number.isFinite(amount) || amount <= 0 || amount > 10_000) throw new UsageError(`amount must be a number of USD above 0 and at most 10000, got ${amountArg}`);
  const w = await (await Api.open(opts)).json<Wallet>('POST', '/wallet/topup', { json: { amount } });
  if (opts.json) return printJson(w);
  process.stdout.write(`added ${usd(amount)}\n`);
  printWallet(w);
}
