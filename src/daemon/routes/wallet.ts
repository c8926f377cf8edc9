import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../shared/schemas/common.js';
import { TopupBody, TransactionsQuery, Wallet, WalletTransactions } from '../../shared/schemas/wallet.js';
import { nanoToUsd, usdToNano } from '../../shared/money.js';
import { ACCOUNT_CREDENTIALS, requireAuth, userOf } from '../auth/principal.js';
import { credit, listTransactions } from '../store/wallets.js';
import { loadWalletState, transactionView, walletView } from '../services/wallet.js';
import type { RouteOptions } from './index.js';

/** USD of a debit paid from the monthly allowance rather than the balance (0 for credits). */
const fromAllowance = (t: object): number => nanoToUsd(Number((t as { allowance_nusd?: number | null }).allowance_nusd ?? 0));

/** The contract's wallet endpoints: balance, transactions, top-up. */
const wallet: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const auth = requireAuth(ctx, ACCOUNT_CREDENTIALS);
  const security: Record<string, string[]>[] = [{ bearer: [] }, { session: [] }];

  app.get(
    '/wallet',
    { preHandler: auth, schema: { tags: ['wallet'], summary: 'The caller’s wallet', security, response: { 200: Wallet, ...errorResponses(401) } } },
    async (req) => {
      const u = userOf(req);
      return walletView(await loadWalletState(ctx, ctx.db, u.userId, u.tier));
    },
  );

  app.get(
    '/wallet/transactions',
    {
      preHandler: auth,
      schema: {
        tags: ['wallet'],
        summary: 'Wallet transactions, newest first (cursor pagination)',
        security,
        querystring: TransactionsQuery,
        response: { 200: WalletTransactions, ...errorResponses(400, 401) },
      },
    },
    async (req) => {
      const u = userOf(req);
      const limit = req.query.limit ?? 50;
      const rows = await listTransactions(ctx.db, u.userId, limit + 1, req.query.cursor ? Number(req.query.cursor) : undefined);
      const page = rows.slice(0, limit);
      return {
        items: page.map((t) => ({ ...transactionView(t), fromAllowance: fromAllowance(t) })),
        nextCursor: rows.length > limit ? String(page[page.length - 1].id) : null,
      };
    },
  );

  app.post(
    '/wallet/topup',
    {
      preHandler: auth,
      schema: {
        tags: ['wallet'],
        summary: 'Top up the wallet (local service: credits directly)',
        security,
        body: TopupBody,
        response: { 200: Wallet, ...errorResponses(400, 401) },
      },
    },
    async (req) => {
      const u = userOf(req);
      const amount = usdToNano(req.body.amount);
      return ctx.db.tx(async (q) => {
        await credit(q, { userId: u.userId, amount, type: 'topup', description: 'wallet top-up' });
        return walletView(await loadWalletState(ctx, q, u.userId, u.tier));
      });
    },
  );
};

export default wallet;
