/**
 * A ledger's gaps: stretches of chain it never judged (a restored backup found behind its
 * witness, witness.ts; a new ledger on a chain already holding payments to the payee), kept in
 * the ledger as marks. `recordLedgerRestore` finds a restore before anything reads the ledger;
 * the payment watcher (x402/native/unhonored.ts) honours and counts the gaps, and
 * `native-node ledger gap` records the operator's choice.
 */
import type { SettlementLedger } from './ledger.js';
import { LedgerWitness, readNewestWitness, statusRank, type WitnessRecord } from './witness.js';

/** Name of the ledger's gaps mark. */
export const GAPS_MARK = 'gaps';
/** The watcher's mark as stored. */
export interface Mark {
  /** Lowest height that may hold an awaited invoke (or the next to scan). */
  readonly height: number;
  /** Next height to scan (every lower block was judged); absent in marks of older versions. */
  readonly scanned?: number;
}

/** A stretch of chain the ledger never judged (see the watcher's module comment). */
export interface LedgerGap {
  /** First and last height of the stretch. */
  readonly from: number;
  readonly to: number;
  /** Invokes to a watched payee in it without a ledger record, and their total (base units); undefined while counted. */
  readonly invokes?: number;
  readonly amountBase?: string;
  /** When found (Unix ms) and why. */
  readonly foundAt: number;
  readonly cause: 'ledger_behind_chain' | 'new_ledger_on_old_chain' | 'ledger_restored';
  /** The operator's choice (`native-node ledger gap`): refunded at the next start, or forgotten. */
  readonly resolution?: 'refund' | 'forget';
  /** `ledger_restored`: the ledger's write count and its witness's, when found. */
  readonly ledgerSeq?: number;
  readonly witnessSeq?: number;
  /** `ledger_restored`: payments the restored ledger holds as claimed (the lost one may have served or refunded them). */
  readonly claimed?: readonly string[];
  /** Highest height counted so far (blocks of the stretch not in the chain yet are counted as they connect). */
  readonly countedTo?: number;
}

/** Name of the mark of the watcher's scan (see `Mark`). */
export const WATCHER_MARK = 'unhonored';

/**
 * Compares the ledger with its witness files (witness.ts) and, when the ledger is behind
 * them (restored from a backup, whatever else was restored or deleted), records the stretch it
 * may have forgotten as a gap (cause `ledger_restored`) before anything else runs; then attaches
 * the witness, so every later write is mirrored. A ledger of an older version (no write count)
 * starts its witness here. Returns the gap recorded, if any.
 */
export async function recordLedgerRestore(
  ledger: Pick<SettlementLedger, 'sellerId' | 'getMark' | 'putMark' | 'records' | 'get'> & { sequence?(): number | undefined; attachWitness?(w: LedgerWitness): Promise<void> },
  witnessPaths: readonly string[],
  now = Date.now(),
): Promise<{ witness: LedgerWitness; gap?: LedgerGap; seen?: WitnessRecord }> {
  const seen = await readNewestWitness(witnessPaths, ledger.sellerId);
  const witness = new LedgerWitness(witnessPaths, ledger.sellerId, seen?.tip ?? 0);
  // LevelDB: its write count against the witness's. PostgreSQL (shared, no count): the last record this node wrote.
  const seq = ledger.sequence?.() ?? 0;
  let behind = false;
  if (seen && ledger.sequence) behind = seq < seen.seq;
  else if (seen?.last) {
    const rec = await ledger.get(seen.last.id);
    behind = !rec || statusRank(rec.status) < statusRank(seen.last.status);
  }
  let gap: LedgerGap | undefined;
  if (seen && behind) {
    const mark = await ledger.getMark<Mark>(WATCHER_MARK);
    const gaps = (await ledger.getMark<LedgerGap[]>(GAPS_MARK)) ?? [];
    const from = Math.max(1, mark?.height ?? 1);
    const to = Math.max(1, seen.tip);
    // A fleet's nodes each find the same restore: one gap covering it is enough.
    const covered = gaps.some((g) => g.cause === 'ledger_restored' && g.resolution === undefined && g.from <= from && g.to >= to);
    if (!covered) {
      const claimed: string[] = [];
      for await (const rec of ledger.records()) if (rec.rail === 'native' && rec.status === 'claimed') claimed.push(rec.id);
      gap = { from, to, foundAt: now, cause: 'ledger_restored', ledgerSeq: seq, witnessSeq: seen.seq, claimed, countedTo: 0 };
      // Written before the witness is brought down to the ledger: a crash in between finds the restore again.
      await ledger.putMark(GAPS_MARK, [...gaps, gap]);
    }
  }
  if (ledger.attachWitness) await ledger.attachWitness(witness);
  return { witness, ...(gap ? { gap } : {}), ...(seen ? { seen } : {}) };
}
