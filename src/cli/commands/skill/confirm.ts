/**
 * Money never moves without a question: before a paid install the CLI shows the price and
 * the wallet (GET /api/wallet) and asks on a terminal; `--yes` answers for scripts; without
 * a terminal and without `--yes` it stops with exit 2 before anything is charged. The scan's
 * findings on a version are asked about the same way, first.
 */
import { createInterface } from 'node:readline/promises';
import type { Finding } from '../../../shared/scan/index.js';
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
  await ask(`Pay ${price} and install? [y/N] `, io, () => new CliError('cancelled; nothing was charged', undefined, 'CANCELLED'));
}

/** Resolves on y/yes; anything else, end of input (Ctrl-D) or Ctrl-C throws `cancelled()`. */
async function ask(question: string, io: ConfirmIo, cancelled: () => CliError): Promise<void> {
  const rl = createInterface({ input: io.input, output: io.output, terminal: true });
  // end of input (Ctrl-D) or Ctrl-C closes the interface: that is a no
  const closed = new Promise<never>((_, reject) => rl.once('close', () => reject(cancelled())));
  closed.catch(() => undefined);
  try {
    const answer = (await Promise.race([rl.question(question), closed])).trim().toLowerCase();
    if (answer !== 'y' && answer !== 'yes') throw cancelled();
  } finally {
    rl.close();
  }
}

/** `FILE[:LINE]: severity RULE: message`, as agw skill scan prints a finding. */
export const findingLine = (f: Finding) => `${f.path}${f.line !== null ? `:${f.line}` : ''}: ${f.severity} ${f.rule}: ${f.message}`;

/**
 * A version with scan findings is installed only when the user says so: the findings are
 * shown and asked about on a terminal; `--yes` accepts them (they are still printed, on
 * stderr); without a terminal and without `--yes` it stops with exit 2 before anything is
 * charged or written, as for a paid install.
 */
export async function confirmFindings(s: { slug: string; version: string }, findings: readonly Finding[], yes: boolean | undefined, io: ConfirmIo = { input: process.stdin, output: process.stderr }): Promise<void> {
  if (findings.length === 0) return;
  const n = findings.length;
  const what = `${s.slug} ${s.version}: the marketplace's scan reported ${n} finding${n === 1 ? '' : 's'}`;
  const list = findings.map((f) => `  ${findingLine(f)}\n`).join('');
  if (yes) {
    io.output.write(`${what} (accepted with --yes):\n${list}`);
    return;
  }
  if (!io.input.isTTY || !io.output.isTTY) {
    throw new CliError(
      `${what} and there is no terminal to ask on; nothing was installed or charged:\n${list.trimEnd()}`,
      'read them (agw skill scan on a copy, or the skill\'s page), then run it again with --yes to install anyway',
      'CONFIRMATION_REQUIRED',
      2,
    );
  }
  io.output.write(`${what}:\n${list}`);
  await ask('Install it anyway? [y/N] ', io, () => new CliError('cancelled; nothing was installed or charged', undefined, 'CANCELLED'));
}
