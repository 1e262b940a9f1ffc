/**
 * The ledger's witness: a small file outside the ledger that mirrors how far the ledger got, so a
 * ledger older than what the node did is found at start, whatever was restored or deleted.
 *
 * Every write to the ledger (a claim, a result, a refund, a watcher's mark) advances the ledger's
 * sequence number in the same database write; before that write returns — so before a result or
 * a refund leaves the node — the sequence number and the chain's tip at that moment are written
 * to every witness file (one file write covers all the ledger writes made meanwhile). At start:
 *
 *   ledger seq ≥ witness seq  → the ledger is the newest record (a crash between the two writes
 *                                leaves the ledger ahead, never behind)
 *   ledger seq < witness seq  → the ledger was restored (or replaced): it may have forgotten
 *                                payments served or refunded up to the witness's tip height
 *
 * A PostgreSQL ledger, shared by a fleet, has no write count of its own: each node's witness names
 * the last record it wrote and the status it left it in (`last`), and a ledger that no longer
 * holds that record, or holds it in an earlier status, was restored (`witnessLedgerWrites`).
 *
 * A LevelDB ledger has two witness files: `<data-dir>/ledger-witness.json`, which survives
 * restoring the ledger alone and deleting the chain, and one outside the data directory, which a
 * restore of the whole directory (a snapshot, a volume) does not bring back:
 * `$XDG_STATE_HOME/native-node/ledger-witness/<seller id>.json` (`~/.local/state/…` without
 * XDG_STATE_HOME), or the file `--ledger-witness` names. The newest of the files wins. The
 * default one is used only where it can be written (else the node says so and keeps the first).
 * A ledger that kept an outside witness and finds it missing (the data directory moved or
 * restored onto another machine, or the state directory wiped) cannot be proven current:
 * restore.ts treats it as restored, up to an end it cannot know (see `LedgerGap.before`).
 * A PostgreSQL ledger keeps `<data-dir>/ledger-witness.json` and the `--ledger-witness` file.
 */
import { constants } from 'node:fs';
import { access, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { NodeError } from '../../consensus/errors.js';
import type { PaymentRecord, PaymentStatus, SettlementLedger } from './ledger.js';

/** What a witness file holds. */
export interface WitnessRecord {
  /** The ledger this file witnesses (its seller id). */
  readonly sellerId: string;
  /** The ledger's sequence number after its last write. */
  readonly seq: number;
  /** The chain's tip height when that write was made: every payment the ledger decided was mined at or below it. */
  readonly tip: number;
  /** Unix ms of the write. */
  readonly at: number;
  /** PostgreSQL ledgers: the last record this node wrote and the status it left it in. */
  readonly last?: { readonly id: string; readonly status: PaymentStatus };
  /**
   * A fleet's PostgreSQL ledger: this node's last heartbeat, as the database stamped it (`seen_at`,
   * Unix ms). A database whose row for the node is older lost it: restored from a backup, even when
   * the node wrote no payment since (x402/ledger/restore.ts).
   */
  readonly fleetSeenAt?: number;
}

/** How far along its life a status is: a restored ledger holds a record in a lower rank than its witness saw. */
export function statusRank(s: PaymentStatus): number {
  return s === 'claimed' ? 0 : s === 'refund_pending' || s === 'settle_pending' ? 1 : 2;
}

/** Codes of the witness's own failures. */
export const WitnessErrorCode = {
  /** A witness file cannot be written: the ledger write is not confirmed to its caller. */
  UNWRITABLE: 'ledger_witness_unwritable',
  /** A witness file exists but cannot be read as one. */
  CORRUPT: 'ledger_witness_corrupt',
} as const;

/** The file name of the default witness, in the data directory. */
export const WITNESS_FILE = 'ledger-witness.json';

/** Where a ledger's witness files are: the one in its data directory, and the one outside it (`--ledger-witness`; undefined: the default). */
export interface WitnessPlaces {
  readonly inside: string;
  readonly outside?: string;
}

/** The default outside witness of the ledger `sellerId`: under the user's state directory (XDG). */
export function defaultOutsideWitness(sellerId: string, env: Record<string, string | undefined> = process.env): string {
  const state = env.XDG_STATE_HOME?.startsWith('/') ? env.XDG_STATE_HOME : join(homedir(), '.local', 'state');
  return join(state, 'native-node', 'ledger-witness', `${sellerId}.json`);
}

/** The witness files of a ledger (see module comment), and what is known of the outside one. */
export interface WitnessFiles {
  readonly paths: readonly string[];
  /** LevelDB: the outside witness in use, and whether it is missing (no file of this ledger there). */
  readonly outside?: { readonly path: string; readonly missing: boolean };
  /** The default outside witness, not usable here (its folder cannot be made or written). */
  readonly unusable?: { readonly path: string; readonly why: string };
}

/** Resolves `places` for `ledger` (a plain list is taken as it is). */
export async function witnessFilesOf(ledger: { readonly sellerId: string; sequence?(): number | undefined }, places: readonly string[] | WitnessPlaces): Promise<WitnessFiles> {
  if (Array.isArray(places)) return { paths: places };
  const { inside, outside } = places as WitnessPlaces;
  // PostgreSQL (no write count: `sequence`): the data directory's file and the one named, no default.
  if (typeof ledger.sequence !== 'function') return { paths: outside ? [inside, outside] : [inside] };
  const path = outside ?? defaultOutsideWitness(ledger.sellerId);
  if (outside === undefined) {
    try {
      await mkdir(dirname(path), { recursive: true });
      await access(dirname(path), constants.W_OK);
    } catch (e) {
      return { paths: [inside], unusable: { path, why: (e as Error).message } };
    }
  }
  return { paths: [inside, path], outside: { path, missing: (await readNewestWitness([path], ledger.sellerId)) === undefined } };
}

/** Reads one witness file: undefined when there is none. */
export async function readWitness(path: string): Promise<WitnessRecord | undefined> {
  let raw: string;
  try {
    raw = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    const w = JSON.parse(raw) as WitnessRecord;
    if (typeof w.sellerId !== 'string' || !Number.isSafeInteger(w.seq) || !Number.isSafeInteger(w.tip)) throw new Error('missing fields');
    return w;
  } catch (e) {
    throw new NodeError(WitnessErrorCode.CORRUPT, `the ledger witness ${path} is not readable (${(e as Error).message}); move it away to start without it`);
  }
}

/** The newest witness of `sellerId` among `paths` (files of another ledger are ignored). */
export async function readNewestWitness(paths: readonly string[], sellerId: string): Promise<WitnessRecord | undefined> {
  let best: WitnessRecord | undefined;
  for (const p of paths) {
    const w = await readWitness(p);
    if (w && w.sellerId === sellerId && (!best || w.seq > best.seq)) best = w;
  }
  return best;
}

/** The witness files of one ledger, written together (see module comment). */
export class LedgerWitness {
  private written = -1;
  private wanted = 0;
  private last: WitnessRecord['last'];
  private writing: Promise<void> | undefined;
  /** Whether the files' folders were made (once: the first write). */
  private dirsMade = false;
  private fleetSeenAt: number | undefined;
  /** The chain's tip height (set once the chain is open; 0 before). */
  tip: () => number = () => 0;

  constructor(
    readonly paths: readonly string[],
    private readonly sellerId: string,
    /**
     * The tip the files said before (never written lower: a chain being downloaded again starts
     * at 0, and what the ledger decided up to the old tip must still be covered by a next restore).
     */
    private tipFloor = 0,
  ) {}

  /** Resolves once every file says at least `seq` (one file write covers every seq asked for meanwhile). */
  async advance(seq: number, last?: WitnessRecord['last']): Promise<void> {
    if (seq > this.wanted) this.wanted = seq;
    if (last) this.last = last;
    while (this.written < seq) {
      this.writing ??= this.flush().finally(() => (this.writing = undefined));
      await this.writing;
    }
  }

  /** This node's heartbeat was written (`WitnessRecord.fleetSeenAt`): the files say so from their next write on, which this one makes. */
  async fleetSeen(at: number): Promise<void> {
    this.fleetSeenAt = at;
    this.writing ??= this.flush().finally(() => (this.writing = undefined));
    await this.writing;
  }

  private async flush(): Promise<void> {
    const seq = this.wanted;
    this.tipFloor = Math.max(this.tipFloor, this.tip());
    const body = JSON.stringify({ sellerId: this.sellerId, seq, tip: this.tipFloor, at: Date.now(), ...(this.last ? { last: this.last } : {}), ...(this.fleetSeenAt ? { fleetSeenAt: this.fleetSeenAt } : {}) } satisfies WitnessRecord);
    try {
      if (!this.dirsMade) {
        await Promise.all(this.paths.map((p) => mkdir(dirname(p), { recursive: true })));
        this.dirsMade = true;
      }
      await Promise.all(
        this.paths.map(async (p) => {
          const tmp = `${p}.tmp`;
          await writeFile(tmp, body);
          await rename(tmp, p);
        }),
      );
    } catch (e) {
      throw new NodeError(WitnessErrorCode.UNWRITABLE, `cannot write the ledger witness (${(e as Error).message})`);
    }
    this.written = seq;
  }
}

/** The ledger methods that write a payment record (each returns the record as written, or a claim result). */
const RECORD_WRITES = new Set(['claim', 'claimRefusal', 'settle', 'refundPending', 'fail', 'settlePending', 'reconcileProgress', 'settleReconciled', 'expireUnsettled', 'refunded']);

/**
 * A PostgreSQL ledger whose writes this node makes are mirrored to `witness` before they return:
 * a record write names the record and its status (`last`); a mark write (the payment watcher
 * judging a block) moves only the witness's tip, so a restore is found to cover every height this
 * node's watcher judged. Every other member is the ledger's own.
 */
export function witnessLedgerWrites<L extends SettlementLedger>(ledger: L, witness: LedgerWitness, startSeq = 0): L {
  let seq = startSeq;
  return new Proxy(ledger, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      const own = (value as (...a: unknown[]) => Promise<unknown>).bind(target);
      if (prop === 'putMark')
        return async (...args: unknown[]) => {
          const out = await own(...args);
          await witness.advance(++seq);
          return out;
        };
      if (typeof prop !== 'string' || !RECORD_WRITES.has(prop)) return own;
      return async (...args: unknown[]) => {
        const out = (await own(...args)) as PaymentRecord | { claimed: boolean; record: PaymentRecord };
        const rec = 'record' in out ? (out.claimed ? out.record : undefined) : out;
        if (rec) await witness.advance(++seq, { id: rec.id, status: rec.status });
        return out;
      };
    },
  });
}
