import type { AppContext } from '../context/index.js';
import { SqliteDb } from '../store/sqlite.js';
import type { MoneyEngine } from './engine.js';
import { SqliteMoney } from './sqlite/engine.js';

const engines = new WeakMap<AppContext, Promise<MoneyEngine>>();

/**
 * The daemon's money engine (engine.ts), made on first use: the SQLite store's ledger,
 * or the lease engine on PostgreSQL. Closed with the daemon (ctx.onClose).
 */
export function moneyOf(ctx: AppContext): Promise<MoneyEngine> {
  let e = engines.get(ctx);
  if (!e) {
    e = open(ctx).then((m) => {
      opened.set(ctx, m);
      return m;
    });
    engines.set(ctx, e);
  }
  return e;
}

const opened = new WeakMap<AppContext, MoneyEngine>();

/**
 * The engine once it is open (undefined before): a call's path takes it without awaiting
 * `moneyOf`'s promise, one microtask less at admission and at settlement.
 */
export function moneyNow(ctx: AppContext): MoneyEngine | undefined {
  return opened.get(ctx);
}

async function open(ctx: AppContext): Promise<MoneyEngine> {
  const db = ctx.db;
  if (db instanceof SqliteDb) {
    if (!db.ledger) await db.openLedger(ctx.log);
    return new SqliteMoney(db.ledger!);
  }
  const { PgMoney } = await import('./postgres/engine.js');
  const engine = await PgMoney.start(ctx);
  ctx.onClose.push(() => engine.close());
  return engine;
}
