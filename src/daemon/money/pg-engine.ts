import type { AppContext } from '../context.js';
import type { MoneyEngine } from './engine.js';

/** The lease engine of several daemons on PostgreSQL: lands in the next commits (issue #16). */
export class PgMoney {
  static async start(_ctx: AppContext): Promise<MoneyEngine> {
    throw new Error('the PostgreSQL money engine is not built yet');
  }
}
