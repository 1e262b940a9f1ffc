/**
 * `native-node ledger gap [--refund | --forget]`: the stretches of chain the node's payment ledger
 * never judged (x402/native/unhonored.ts: a ledger restored from a backup — found behind its witness
 * files, x402/ledger/witness.ts, here too, before the node's next start — or a new ledger on a chain
 * that already holds payments to the payee). Without a flag it lists them: heights, payments
 * without a ledger record and their total. `--refund` has the node refund those payments at its
 * next start (each once: consensus accepts one refund per payment); `--forget` leaves them as
 * they are — neither served nor refunded, a settle of one answers `payment_in_ledger_gap` — for
 * an operator who knows the lost ledger served them. A LevelDB ledger is held locked by the
 * running node: run it with the node stopped (while it runs, `/api/v1/status` `payments.ledgerGaps`
 * shows the same list). A fleet's PostgreSQL ledger (`--ledger postgres://…`) may be decided while
 * the nodes run: the decision is its own mark (`GAP_DECISIONS_MARK`, which no node writes), read
 * by every node within seconds, and the signer lease's holder refunds at once.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { formatAmount } from '../consensus/amount.js';
import { NodeError } from '../consensus/errors.js';
import { isPostgresLocation, LevelLedger, openLedger } from '../x402/ledger/open.js';
import { GAP_DECISIONS_MARK, gapKey, GAPS_MARK, readGaps, recordLedgerRestore, type LedgerGap } from '../x402/native/unhonored.js';
import { LEDGER_DIR, witnessPathsOf } from '../node/payments.js';
import type { NodeConfig } from '../node/config.js';

/** Error codes of the command. */
export const LedgerGapErrorCode = {
  LEDGER_LOCKED: 'ledger_locked',
  NO_GAP: 'no_ledger_gap',
  USAGE: 'usage',
} as const;

/**
 * The data directory of a stopped node, for the commands that open its ledger (`ledger gap`,
 * `usdc-payments`): as configured; but when nothing chose it (no --data-dir, --network or --dev,
 * config file or environment, no --ledger) and the default one holds no ledger while exactly one
 * other `data/<network>` in `cwd` does, that one, said on stderr. So the hint a node prints,
 * `npx native-node ledger gap --refund`, runs as printed in the node's folder on a devnet too.
 */
export function stoppedNodeDataDir(config: Pick<NodeConfig, 'dataDir' | 'sources' | 'ledger'>, cwd: string): string {
  const chosen = config.sources.dataDir !== 'default' || config.sources.network !== 'default' || config.ledger !== undefined;
  if (chosen || existsSync(join(config.dataDir, LEDGER_DIR))) return config.dataDir;
  const others = ['native-mainnet', 'native-devnet'].map((n) => resolve(cwd, 'data', n)).filter((d) => d !== config.dataDir && existsSync(join(d, LEDGER_DIR)));
  if (others.length !== 1) return config.dataDir;
  process.stderr.write(`${config.dataDir} has no ledger; using ${others[0]}, the only data directory here with one (--data-dir or --dev chooses)\n`);
  return others[0];
}

/** Lists the gaps, or records the operator's choice for every gap without one; returns the gaps after. */
export async function ledgerGap(dataDir: string, choice?: 'refund' | 'forget', location = join(dataDir, LEDGER_DIR), ledgerWitness?: string): Promise<LedgerGap[]> {
  let ledger;
  try {
    ledger = await openLedger(location);
  } catch (e) {
    throw new NodeError(LedgerGapErrorCode.LEDGER_LOCKED, `cannot open the ledger in ${dataDir} (${(e as Error).message}); stop the node first, or read /api/v1/status payments.ledgerGaps`);
  }
  try {
    // A ledger restored since the node last ran is found here too (its payments are counted at the node's next start).
    if (ledger instanceof LevelLedger) await recordLedgerRestore(ledger, witnessPathsOf({ dataDir, ledgerWitness }));
    const gaps = await readGaps(ledger);
    if (!choice) return gaps;
    const open = gaps.filter((g) => g.resolution === undefined);
    if (open.length === 0) throw new NodeError(LedgerGapErrorCode.NO_GAP, 'the ledger has no gap waiting for a decision');
    // The decision first, in the mark no node writes: a node writing its copy of the gaps meanwhile cannot undo it.
    const decisions = (await ledger.getMark<Record<string, string>>(GAP_DECISIONS_MARK)) ?? {};
    await ledger.putMark(GAP_DECISIONS_MARK, { ...decisions, ...Object.fromEntries(open.map((g) => [gapKey(g), choice])) });
    const next = gaps.map((g) => (g.resolution === undefined ? { ...g, resolution: choice } : g));
    await ledger.putMark(GAPS_MARK, next);
    return next;
  } finally {
    await ledger.close();
  }
}

/** Runs the command; returns the exit code. */
export async function ledgerGapCommand(config: Pick<NodeConfig, 'dataDir'> & { readonly ledger?: string; readonly ledgerWitness?: string }, out: { print(human: string, data: unknown): void }, flags: { refund?: boolean; forget?: boolean }): Promise<number> {
  if (flags.refund && flags.forget) throw new NodeError(LedgerGapErrorCode.USAGE, 'choose one: --refund or --forget');
  const choice = flags.refund ? 'refund' : flags.forget ? 'forget' : undefined;
  const gaps = await ledgerGap(config.dataDir, choice, config.ledger, config.ledgerWitness);
  const fleet = config.ledger !== undefined && isPostgresLocation(config.ledger);
  const line = (g: LedgerGap) =>
    `heights ${g.from}-${g.to}: ${g.invokes ?? '?'} payment(s)${g.invokes === undefined ? ' (counted at the next start)' : ''}, ${formatAmount(BigInt(g.amountBase ?? '0'))} NATIVE (${g.cause}${g.claimed?.length ? `, ${g.claimed.length} held claim(s)` : ''}) — ${
      g.resolution === 'refund' ? (fleet ? 'refunded by the signer lease holder (within seconds while a node runs, else at the next start)' : 'refunded at the next start') : g.resolution === 'forget' ? 'forgotten: never served nor refunded' : 'waiting: run with --refund or --forget'
    }`;
  out.print(gaps.length ? gaps.map(line).join('\n') : 'no gap: the ledger has judged every block of the chain', { gaps });
  return 0;
}
