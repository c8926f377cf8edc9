import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AgwError } from '../../shared/errors.js';
import { errorResponses } from '../../shared/schemas/common.js';
import { TopupBody, TransactionsQuery, WalletTransactions, WalletWithHolds } from '../../shared/schemas/wallet.js';
import { nanoToUsd, usdToNano } from '../../shared/money.js';
import { moneyOf } from '../money/index.js';
import { ACCOUNT_CREDENTIALS, isLimitedKey, requireAuth, userOf } from '../auth/principal.js';
import { credit, listTransactions } from '../money/wallets.js';
import { loadWalletState, transactionView, walletView } from '../money/wallet-view.js';
import type { RouteOptions } from './index.js';

/** How to get credit when self top-up is off (the error message, the OpenAPI text, the portal). */
export const TOPUP_DISABLED_HINT = 'an operator adds credit with `agw admin wallet credit USER AMOUNT`';

/** USD of a debit paid from the monthly allowance rather than the balance (0 for credits). */
const fromAllowance = (t: object): number => nanoToUsd(Number((t as { allowance_nusd?: number | null }).allowance_nusd ?? 0));

/** The contract's wallet endpoints: balance, transactions, top-up. */
const wallet: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const auth = requireAuth(ctx, ACCOUNT_CREDENTIALS);
  const security: Record<string, string[]>[] = [{ bearer: [] }, { session: [] }];

  app.get(
    '/wallet',
    {
      preHandler: auth,
      schema: { tags: ['wallet'], summary: 'The caller’s wallet, and what calls in flight hold', security, response: { 200: WalletWithHolds, ...errorResponses(401) } },
    },
    async (req) => {
      const u = userOf(req);
      const held = await (await moneyOf(ctx)).heldBy(u.userId);
      return { ...walletView(await loadWalletState(ctx, ctx.db, u.userId, u.tier)), held: nanoToUsd(held.nano), heldCalls: held.calls };
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
        response: { 200: WalletTransactions, ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      const u = userOf(req);
      // the account's money, like its spend (/api/spend): not a limited key's to read
      if (isLimitedKey(req.principal)) {
        throw new AgwError('FORBIDDEN', 'a key with limits or an expiry cannot read the account’s wallet transactions: its own spend is its `spent` (agw keys list), its calls are in /api/requests');
      }
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
        summary: 'Top up the wallet: credits directly when the config allows self top-up',
        description: `Only with config \`wallet: { selfTopup: true }\` (\`agw serve --demo\` turns it on); otherwise 403 TOPUP_DISABLED: ${TOPUP_DISABLED_HINT}.`,
        security,
        body: TopupBody,
        response: { 200: WalletWithHolds, ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      const u = userOf(req);
      if (!ctx.config.wallet.selfTopup) throw new AgwError('TOPUP_DISABLED', `self top-up is off on this service: ${TOPUP_DISABLED_HINT}`);
      const amount = usdToNano(req.body.amount);
      const wallet = await ctx.db.tx(async (q) => {
        await credit(q, { userId: u.userId, amount, type: 'topup', description: 'wallet top-up' });
        return walletView(await loadWalletState(ctx, q, u.userId, u.tier));
      });
      const held = await (await moneyOf(ctx)).heldBy(u.userId);
      return { ...wallet, held: nanoToUsd(held.nano), heldCalls: held.calls };
    },
  );
};

export default wallet;
