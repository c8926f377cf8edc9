import { forUpdate, type Param, type Queryable } from '../store/db.js';

/**
 * Wallet arithmetic. Spending order: this calendar month's allowance (from the tier)
 * first, then the balance. All amounts are nano-USD. `debit` and `credit` must run
 * inside a transaction (`db.tx`) together with whatever they pay for.
 */
export interface WalletRow {
  user_id: string;
  balance_nusd: number;
  currency: string;
  unlimited: number;
  allowance_month: string | null;
  allowance_used_nusd: number;
  last_allowance_at: number | null;
  updated_at: number;
  /** what daemons have leased from it (PostgreSQL; 0 on SQLite): spoken for, not spendable by anyone else */
  leased_nusd: number;
}

export interface WalletState {
  balance: number;
  currency: string;
  unlimited: boolean;
  allowance: number;
  allowanceUsed: number;
  allowanceRemaining: number;
  resetsAt: number;
  lastAllowanceAt: number | null;
}

/**
 * The UTC month of `now` (its start, the next month's start, YYYY-MM), kept from the last
 * call: every admission and debit asks, and it changes once a month (two Date objects per
 * call otherwise, on the gateway's path).
 */
let lastMonth = { start: 0, end: 0, key: '' };
function monthOf(now: number): typeof lastMonth {
  if (now >= lastMonth.start && now < lastMonth.end) return lastMonth;
  const d = new Date(now);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  return (lastMonth = { start, end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1), key: new Date(start).toISOString().slice(0, 7) });
}

export function monthKey(now: number): string {
  return monthOf(now).key;
}
export function monthStart(now: number): number {
  return monthOf(now).start;
}
export function nextMonthStart(now: number): number {
  return monthOf(now).end;
}

/**
 * `forUpdate` locks the row until the transaction ends (PostgreSQL; SQLite's transaction
 * already excludes other writers): use it when the transaction writes back values
 * computed from what it read.
 */
export function getWalletRow(q: Queryable, userId: string, opts: { forUpdate?: boolean } = {}): Promise<WalletRow | undefined> {
  return q.get<WalletRow>(`SELECT * FROM wallets WHERE user_id = ?${opts.forUpdate ? forUpdate(q) : ''}`, [userId]);
}

/** The wallet as of `now`, with the allowance rolled over to the current month. */
export function walletState(row: WalletRow, monthlyAllowance: number, now = Date.now()): WalletState {
  const sameMonth = row.allowance_month === monthKey(now);
  const used = sameMonth ? Number(row.allowance_used_nusd) : 0;
  // A tier with an allowance grants it at the start of every calendar month; a wallet
  // whose tier has none shows the last month it had one (null if never).
  const lastAllowanceAt =
    monthlyAllowance > 0 ? monthStart(now) : row.last_allowance_at !== null ? Number(row.last_allowance_at) : null;
  return {
    balance: Number(row.balance_nusd),
    currency: row.currency,
    unlimited: row.unlimited === 1 || (row.unlimited as unknown) === true,
    allowance: monthlyAllowance,
    allowanceUsed: used,
    allowanceRemaining: Math.max(0, monthlyAllowance - used),
    resetsAt: nextMonthStart(now),
    lastAllowanceAt,
  };
}

/** True when the wallet may start a new metered call (allowance left plus balance above zero). */
export function canSpend(s: WalletState): boolean {
  return s.unlimited || s.allowanceRemaining + s.balance > 0;
}

export interface DebitInput {
  userId: string;
  amount: number;
  monthlyAllowance: number;
  type: string;
  description?: string | null;
  providerId?: string | null;
  model?: string | null;
  projectId?: string | null;
  skillId?: number | null;
  usageId?: string | null;
  /** Refuse (return null) unless allowance + balance − what daemons leased cover the whole amount. */
  requireCover?: boolean;
  now?: number;
}

export interface DebitResult {
  transactionId: number;
  fromAllowance: number;
  fromBalance: number;
  balanceAfter: number;
}

/** Books one debit as one wallet transaction. Returns null when `requireCover` and funds are short. */
export async function debit(q: Queryable, d: DebitInput): Promise<DebitResult | null> {
  // Locked: the allowance is written back as an absolute value computed from this read.
  const row = await getWalletRow(q, d.userId, { forUpdate: true });
  if (!row) throw new Error(`wallet of ${d.userId} missing`);
  const step = debitStep(row, d);
  if (!step) return null;
  await writeWallet(q, d.userId, step.fromBalance, step.row);
  const transactionId = await insertDebit(q, d, step);
  return { transactionId, fromAllowance: step.fromAllowance, fromBalance: step.fromBalance, balanceAfter: step.balanceAfter };
}

/**
 * Several debits of one wallet, in order, as `debit` books them one after the other: one
 * wallet transaction each, the wallet read once and written once (the booking batches).
 * A settled call was admitted against its hold, so it is covered; should the wallet not
 * cover it after all (its tier's allowance cut while the call ran), it is charged what is
 * left and the rest is returned as `short`: a wallet never goes below zero.
 */
export async function debitMany(q: Queryable, userId: string, ds: readonly DebitInput[]): Promise<{ usageId: string; short: number }[]> {
  const found = await getWalletRow(q, userId, { forUpdate: true });
  if (!found) throw new Error(`wallet of ${userId} missing`);
  let row: WalletRow = found;
  let fromBalance = 0;
  const capped: { usageId: string; short: number }[] = [];
  for (const d of ds) {
    const step: DebitStep = debitStep(row, d, 'cap')!;
    if (step.short) capped.push({ usageId: d.usageId ?? '', short: step.short });
    // the batch needs no transaction id: no RETURNING (and no copy of the input per debit)
    const description = step.short ? `${d.description ?? ''} (${step.short} nano-USD not covered: written off)` : d.description;
    await q.run(DEBIT_SQL, debitRow(d, step, d.amount - step.short, description));
    fromBalance += step.fromBalance;
    row = step.row;
  }
  await writeWallet(q, userId, fromBalance, row);
  return capped;
}

type DebitStep = Omit<DebitResult, 'transactionId'> & { row: WalletRow; now: number; short: number };

/**
 * One debit against a wallet row: where the amount comes from, and the row as it leaves
 * it. `require`: null unless allowance + balance cover it; `cap`: take what they cover
 * and say what is `short`.
 */
function debitStep(row: WalletRow, d: DebitInput, cover: 'require' | 'cap' | undefined = d.requireCover ? 'require' : undefined): DebitStep | null {
  const now = d.now ?? Date.now();
  const s = walletState(row, d.monthlyAllowance, now);
  const spendable = Math.max(0, s.allowanceRemaining + s.balance);
  if (cover === 'require' && !s.unlimited && spendable - Number(row.leased_nusd ?? 0) < d.amount) return null;
  const short = cover === 'cap' && !s.unlimited ? Math.max(0, d.amount - spendable) : 0;
  const amount = d.amount - short;
  const fromAllowance = s.unlimited ? 0 : Math.min(s.allowanceRemaining, amount);
  const fromBalance = s.unlimited ? 0 : amount - fromAllowance;
  const balanceAfter = s.balance - fromBalance;
  const next: WalletRow = {
    ...row,
    balance_nusd: balanceAfter,
    allowance_month: monthKey(now),
    allowance_used_nusd: s.allowanceUsed + fromAllowance,
    last_allowance_at: s.lastAllowanceAt,
    updated_at: now,
  };
  return { fromAllowance, fromBalance, balanceAfter, row: next, now, short };
}

/** The balance taken down by `fromBalance`; the allowance fields as the last step left them. */
async function writeWallet(q: Queryable, userId: string, fromBalance: number, row: WalletRow): Promise<void> {
  await q.run(
    `UPDATE wallets SET balance_nusd = balance_nusd - ?, allowance_month = ?, allowance_used_nusd = ?,
            last_allowance_at = ?, updated_at = ? WHERE user_id = ?`,
    [fromBalance, row.allowance_month, row.allowance_used_nusd, row.last_allowance_at, row.updated_at, userId],
  );
}

const DEBIT_SQL = `INSERT INTO wallet_transactions (user_id, type, amount_nusd, allowance_nusd, balance_after_nusd, description,
       provider_id, model, project_id, skill_id, usage_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** A debit's wallet transaction row, for DEBIT_SQL: `amount` taken (the row says it as negative). */
function debitRow(d: DebitInput, step: DebitStep, amount: number, description: string | null | undefined): Param[] {
  return [
    d.userId,
    d.type,
    -amount,
    step.fromAllowance,
    step.balanceAfter,
    description ?? null,
    d.providerId ?? null,
    d.model ?? null,
    d.projectId ?? null,
    d.skillId ?? null,
    d.usageId ?? null,
    step.now,
  ];
}

async function insertDebit(q: Queryable, d: DebitInput, step: DebitStep): Promise<number> {
  const tx = await q.get<{ id: number }>(`${DEBIT_SQL} RETURNING id`, debitRow(d, step, d.amount, d.description));
  return Number(tx!.id);
}

export async function credit(
  q: Queryable,
  c: { userId: string; amount: number; type: string; description?: string | null; skillId?: number | null },
): Promise<{ balanceAfter: number; transactionId: number }> {
  const now = Date.now();
  const row = await q.get<{ balance_nusd: number }>(
    'UPDATE wallets SET balance_nusd = balance_nusd + ?, updated_at = ? WHERE user_id = ? RETURNING balance_nusd',
    [c.amount, now, c.userId],
  );
  if (!row) throw new Error(`wallet of ${c.userId} missing`);
  const balanceAfter = Number(row.balance_nusd);
  const tx = await q.get<{ id: number }>(
    `INSERT INTO wallet_transactions (user_id, type, amount_nusd, balance_after_nusd, description, skill_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    [c.userId, c.type, c.amount, balanceAfter, c.description ?? null, c.skillId ?? null, now],
  );
  return { balanceAfter, transactionId: Number(tx!.id) };
}

export async function setUnlimited(q: Queryable, userId: string, unlimited: boolean): Promise<void> {
  await q.run('UPDATE wallets SET unlimited = ?, updated_at = ? WHERE user_id = ?', [
    unlimited ? 1 : 0,
    Date.now(),
    userId,
  ]);
}

export interface WalletTxRow {
  id: number;
  type: string;
  amount_nusd: number;
  balance_after_nusd: number;
  description: string | null;
  provider_id: string | null;
  model: string | null;
  project_id: string | null;
  skill_id: number | null;
  created_at: number;
}

/** Newest first; `cursor` is the id of the last item of the previous page. */
export function listTransactions(
  q: Queryable,
  userId: string,
  limit: number,
  cursor?: number,
): Promise<WalletTxRow[]> {
  return cursor
    ? q.all<WalletTxRow>(
        'SELECT * FROM wallet_transactions WHERE user_id = ? AND id < ? ORDER BY id DESC LIMIT ?',
        [userId, cursor, limit],
      )
    : q.all<WalletTxRow>('SELECT * FROM wallet_transactions WHERE user_id = ? ORDER BY id DESC LIMIT ?', [
        userId,
        limit,
      ]);
}
