/**
 * A ledger's gaps: stretches of chain it never judged (a restored backup found behind its
 * witness, witness.ts; a new ledger on a chain already holding payments to the payee), kept in
 * the ledger as marks. `recordLedgerRestore` finds a restore before anything reads the ledger;
 * the payment watcher (x402/native/unhonored.ts) honours and counts the gaps, and
 * `native-node ledger gap` records the operator's choice.
 */
import type { SettlementLedger } from './ledger.js';
import { LedgerWitness, readNewestWitness, statusRank, witnessFilesOf, type WitnessFiles, type WitnessPlaces, type WitnessRecord } from './witness.js';

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
  /**
   * The outside witness was missing (this path) while the ledger had kept one: how far the lost
   * ledger got is unknown, so the stretch also holds every block timed before `before` (Unix ms:
   * the start that found it), at any height from `from` (`to` follows them as they connect).
   * A fleet's shared ledger gets `before` too: the other nodes judged blocks this one may not have had.
   */
  readonly witnessMissing?: string;
  readonly before?: number;
}

/** Name of the mark saying the ledger has kept a witness outside its data directory (written once). */
export const OUTSIDE_WITNESS_MARK = 'outsideWitness';

/**
 * Name of the mark holding the operator's decisions on gaps (`native-node ledger gap --refund |
 * --forget`), by `gapKey`. Only the command writes it: a node writing its own copy of the gaps
 * (a count, a new gap) may carry a copy read before a decision, but never undoes the decision,
 * which every node reads from here (`readGaps`), a fleet's running nodes included.
 */
export const GAP_DECISIONS_MARK = 'gapDecisions';

/** The operator's decisions, by `gapKey`. */
export type GapDecisions = Readonly<Record<string, NonNullable<LedgerGap['resolution']>>>;

/** What names a gap for good: its cause, first height and the time it was found (counts change, and `to` follows the blocks of a gap with `before`). */
export function gapKey(g: Pick<LedgerGap, 'cause' | 'from' | 'foundAt'>): string {
  return `${g.cause}:${g.from}:${g.foundAt}`;
}

/** The ledger's gaps with the operator's decisions (`GAP_DECISIONS_MARK`) applied to those whose stored copy lacks one. */
export async function readGaps(ledger: Pick<SettlementLedger, 'getMark'>): Promise<LedgerGap[]> {
  const gaps = (await ledger.getMark<LedgerGap[]>(GAPS_MARK)) ?? [];
  const decisions = (await ledger.getMark<GapDecisions>(GAP_DECISIONS_MARK)) ?? {};
  return gaps.map((g) => {
    const decided = decisions[gapKey(g)];
    return g.resolution === undefined && decided ? { ...g, resolution: decided } : g;
  });
}

/** Name of the mark of the watcher's scan (see `Mark`). */
export const WATCHER_MARK = 'unhonored';

/**
 * Compares the ledger with its witness files (witness.ts) and, when the ledger is behind
 * them (restored from a backup, whatever else was restored or deleted), records the stretch it
 * may have forgotten as a gap (cause `ledger_restored`) before anything else runs; then attaches
 * the witness, so every later write is mirrored. A ledger of an older version (no write count)
 * starts its witness here. A ledger whose outside witness is missing though it kept one
 * (`OUTSIDE_WITNESS_MARK`) is taken for a restored one too, from its mark to the chain's tip
 * (`tip`) and every block timed before now (`LedgerGap.witnessMissing`). Returns the gap
 * recorded, if any, and the witness files.
 */
export async function recordLedgerRestore(
  ledger: Pick<SettlementLedger, 'sellerId' | 'getMark' | 'putMark' | 'records' | 'get'> & { sequence?(): number | undefined; attachWitness?(w: LedgerWitness, floor?: number): Promise<void>; fleetSeenAt?(): Promise<number | undefined> },
  places: readonly string[] | WitnessPlaces,
  now = Date.now(),
  opts: { readonly tip?: number } = {},
): Promise<{ witness: LedgerWitness; gap?: LedgerGap; seen?: WitnessRecord; files: WitnessFiles }> {
  const files = await witnessFilesOf(ledger, places);
  const witnessPaths = files.paths;
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
  // A fleet node's heartbeat the database lost (its row older than the witness says): restored, even when this node
  // wrote no payment since the backup — else, started first, it would judge what the others served meanwhile.
  if (!behind && !ledger.sequence && seen?.fleetSeenAt !== undefined && ledger.fleetSeenAt) {
    const at = await ledger.fleetSeenAt();
    behind = at !== undefined && at < seen.fleetSeenAt;
  }
  const unproven = files.outside?.missing === true && (await ledger.getMark(OUTSIDE_WITNESS_MARK)) !== undefined;
  let gap: LedgerGap | undefined;
  if ((seen && behind) || unproven) {
    const mark = await ledger.getMark<Mark>(WATCHER_MARK);
    const gaps = await readGaps(ledger);
    const from = Math.max(1, mark?.height ?? 1);
    // A fleet's shared ledger (no write count) was judged by every node of the fleet, some with chains ahead of this
    // one's at their last write: its stretch holds every block timed before this start too, as for a missing witness.
    const shared = !ledger.sequence;
    const to = Math.max(1, seen?.tip ?? 0, unproven || shared ? (opts.tip ?? 0) : 0);
    // A fleet's nodes each find the same restore: one gap covering it is enough (one that follows the blocks covers what comes).
    const covered = gaps.some((g) => g.cause === 'ledger_restored' && g.resolution === undefined && g.from <= from && (g.to >= to || (shared && g.before !== undefined)));
    if (!covered) {
      const claimed: string[] = [];
      for await (const rec of ledger.records()) if (rec.rail === 'native' && rec.status === 'claimed') claimed.push(rec.id);
      gap = { from, to, foundAt: now, cause: 'ledger_restored', ledgerSeq: seq, witnessSeq: seen?.seq, claimed, countedTo: 0, ...(unproven ? { witnessMissing: files.outside!.path } : {}), ...(unproven || shared ? { before: now } : {}) };
      // Written before the witness is brought down to the ledger: a crash in between finds the restore again.
      await ledger.putMark(GAPS_MARK, [...gaps, gap]);
    }
  }
  // A restored LevelDB ledger continues its count from the witness's (its gap recorded above): the witness never goes back.
  if (ledger.attachWitness) await ledger.attachWitness(witness, seen?.seq);
  if (files.outside && !(await ledger.getMark(OUTSIDE_WITNESS_MARK))) await ledger.putMark(OUTSIDE_WITNESS_MARK, { since: now });
  return { witness, files, ...(gap ? { gap } : {}), ...(seen ? { seen } : {}) };
}
