/**
 * Money never moves without a question: before a paid install the CLI shows the price and
 * the wallet (GET /api/wallet) and asks on a terminal; `--yes` answers for scripts; without
 * a terminal and without `--yes` it stops with exit 2 before anything is charged.
 */
import { createInterface } from 'node:readline/promises';
import type { WalletT } from '../../../shared/schemas/wallet.js';
import { CliError } from '../../errors.js';
import { usd } from '../../format.js';

export interface Purchase {
  slug: string;
  version: string;
  price: number;
}

export interface ConfirmIo {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream & { isTTY?: boolean };
}

/** What the wallet can pay, in one line. */
function walletLine(w: WalletT): string {
  if (w.unlimited) return 'your wallet: unlimited';
  const allowance = w.monthlyAllowanceRemaining > 0 ? ` + ${usd(w.monthlyAllowanceRemaining)} monthly allowance left` : '';
  return `your wallet: ${usd(w.balance)} balance${allowance}`;
}

/**
 * Resolves when the purchase may go ahead; throws CONFIRMATION_REQUIRED (exit 2) without a
 * terminal and CANCELLED (exit 1) when the answer is not yes.
 */
export async function confirmPurchase(p: Purchase, wallet: () => Promise<WalletT>, yes: boolean | undefined, io: ConfirmIo = { input: process.stdin, output: process.stderr }): Promise<void> {
  if (yes) return;
  const price = usd(p.price);
  if (!io.input.isTTY || !io.output.isTTY) {
    throw new CliError(
      `${p.slug} costs ${price} per install and there is no terminal to confirm the purchase on; nothing was charged`,
      `run it again with --yes to pay ${price}`,
      'CONFIRMATION_REQUIRED',
      2,
    );
  }
  const w = await wallet();
  const short = !w.unlimited && w.balance + w.monthlyAllowanceRemaining < p.price ? ' (not enough to pay it)' : '';
  io.output.write(`${p.slug} ${p.version} costs ${price}, charged once to your wallet.\n${walletLine(w)}${short}\n`);
  const cancelled = () => new CliError('cancelled; nothing was charged', undefined, 'CANCELLED');
  const rl = createInterface({ input: io.input, output: io.output, terminal: true });
  // end of input (Ctrl-D) or Ctrl-C closes the interface: that is a no
  const closed = new Promise<never>((_, reject) => rl.once('close', () => reject(cancelled())));
  closed.catch(() => undefined);
  try {
    const answer = (await Promise.race([rl.question(`Pay ${price} and install? [y/N] `), closed])).trim().toLowerCase();
    if (answer !== 'y' && answer !== 'yes') throw cancelled();
  } finally {
    rl.close();
  }
}
