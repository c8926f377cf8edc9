// Bookkeeping check: after the daemon was killed (SIGKILL, no graceful flush) and started
// again (which applies the bookings its journal held), the store must hold one finalized
// usage record, one wallet debit and one quota unit per successful call, and the money
// must add up. Read straight from agw.db, read-only.
import Database from 'better-sqlite3';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Bookings in the daemon's journal (agw.db-bookings): calls settled, applied or not yet. */
export function journalLines(dataDir) {
  const file = join(dataDir, 'agw.db-bookings');
  if (!existsSync(file)) return 0;
  // a killed daemon's mapped journal ends in the room it had reserved (NULs)
  return readFileSync(file, 'utf8').replace(/\0+$/, '').split('\n').filter(Boolean).length;
}

/**
 * `observed` = 2xx answers the benchmark saw from agw; `cutOff` = requests autocannon
 * abandoned in flight when a timed run ended (the daemon may have finished them);
 * `upstream` = chat calls the mock answered for agw (its own count, by agw's key).
 */
export function checkBookkeeping(dataDir, userId, { observed, cutOff, upstream, initialCreditNano }) {
  const db = new Database(join(dataDir, 'agw.db'), { readonly: true, fileMustExist: true });
  try {
    const one = (sql, ...p) => db.prepare(sql).get(...p);
    const usage = one(
      `SELECT SUM(status = 'finalized') AS finalized, SUM(status = 'reserved') AS reserved, SUM(status = 'failed') AS failed,
              COALESCE(SUM(CASE WHEN status = 'finalized' THEN customer_cost_nusd END), 0) AS cost
         FROM usage_records WHERE user_id = ?`,
      userId,
    );
    const debits = one(
      `SELECT COUNT(*) AS n, COUNT(DISTINCT usage_id) AS distinctUsage, COALESCE(-SUM(amount_nusd), 0) AS total,
              COALESCE(SUM(allowance_nusd), 0) AS fromAllowance
         FROM wallet_transactions WHERE user_id = ? AND amount_nusd <= 0 AND usage_id IS NOT NULL`,
      userId,
    );
    const quota = one(`SELECT COALESCE(SUM(used), 0) AS used FROM quota_counters WHERE user_id = ? AND usage_type = 'ai_chat'`, userId);
    const wallet = one('SELECT balance_nusd FROM wallets WHERE user_id = ?', userId);
    const finalized = Number(usage.finalized ?? 0);
    const failed = Number(usage.failed ?? 0);
    const spentFromBalance = initialCreditNano - Number(wallet.balance_nusd);
    const checks = {
      // a call whose client went away mid-flight may be released ('failed') instead
      'one usage record per upstream call': finalized + failed === upstream,
      'every 2xx seen has its record': finalized >= observed && finalized <= observed + cutOff,
      'one wallet debit per record': Number(debits.n) === finalized && Number(debits.distinctUsage) === finalized,
      'quota units used = records': Number(quota.used) === finalized,
      'no reservation left open': Number(usage.reserved ?? 0) === 0,
      'debits sum = usage cost': Number(debits.total) === Number(usage.cost),
      'wallet balance = credit - debits': spentFromBalance === Number(debits.total) - Number(debits.fromAllowance),
    };
    return {
      pass: Object.values(checks).every(Boolean),
      checks,
      observed,
      cutOff,
      upstream,
      usageFinalized: finalized,
      usageFailed: failed,
      usageReserved: Number(usage.reserved ?? 0),
      walletDebits: Number(debits.n),
      quotaUsed: Number(quota.used),
      debitedNano: Number(debits.total),
      costNano: Number(usage.cost),
    };
  } finally {
    db.close();
  }
}
