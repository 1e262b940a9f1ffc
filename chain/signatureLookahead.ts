/**
 * Signature checks ahead of the chain: the transactions of blocks that will connect next (queued
 * in the chain, downloaded by the sync) go to the verification pool as background work while
 * the chain is busy with the block before them. The pool remembers the ids that verified, so the
 * chain's own check of each transaction, which still runs for every block, is answered from its
 * cache (or joins the check in progress) instead of starting then. Nothing here decides
 * validity: a check ahead that fails or is never made leaves the chain's check to find out.
 *
 * A sender's key comes from its transaction, from an earlier transaction of these blocks that
 * published it, or from the account state at the tip. A published key is noted only when it is
 * its sender's (the address is the key's hash, and consensus binds an account to the first key
 * it publishes), so one tx id always means one check: a key that is not its sender's would make
 * the check ahead of an honest transaction fail. Blocks must be given in chain order, each after
 * the ones before it, since a sender's first transaction may sit in any earlier block.
 */
import { addressOfPublicKey, type HybridPublicKey, type HybridSignature } from '../consensus/keys.js';
import { accountKey, decodeAccount, type StateView } from '../consensus/state.js';
import { txSighash, type Tx } from '../consensus/tx.js';
import { bytesEqual, toHex } from '../consensus/hash.js';
import type { SignatureVerifier } from './types.js';

/** One check ahead (the pool's job shape). */
export interface LookaheadJob {
  readonly id: string;
  readonly pub: HybridPublicKey;
  readonly msg: Uint8Array;
  readonly sig: HybridSignature;
}

/** Published keys remembered at most; past this the map starts over (state answers for connected blocks). */
const MAX_PUBLISHED = 100_000;

/** See module comment. */
export class SignatureLookahead {
  /** Keys published by blocks given here, by sender (hex). */
  private readonly published = new Map<string, HybridPublicKey>();

  constructor(
    private readonly verifier: SignatureVerifier,
    /** State at the tip: the keys of senders that published theirs in a connected block. */
    private readonly readState: (keys: readonly string[]) => Promise<StateView>,
  ) {}

  /** Notes the keys a block's transactions publish (each only if it is its sender's). */
  noteKeys(txs: readonly Tx[]): void {
    if (this.published.size > MAX_PUBLISHED) this.published.clear();
    for (const tx of txs) {
      if (tx.publicKey && bytesEqual(addressOfPublicKey(tx.publicKey), tx.from)) this.published.set(toHex(tx.from), tx.publicKey);
    }
  }

  /** Notes the block's keys and builds the checks of its transactions whose key is known (others are left to the chain); `sighashes` when computed already. */
  async jobs(txs: readonly Tx[], txIds: readonly Uint8Array[], sighashes?: readonly Uint8Array[]): Promise<LookaheadJob[]> {
    this.noteKeys(txs);
    const missing: string[] = [];
    for (const tx of txs) if (!tx.publicKey && !this.published.has(toHex(tx.from))) missing.push(accountKey(tx.from));
    const view = missing.length ? await this.readState(missing) : undefined;
    const jobs: LookaheadJob[] = [];
    txs.forEach((tx, i) => {
      let pub = tx.publicKey ?? this.published.get(toHex(tx.from));
      if (!pub && view) {
        const raw = view.get(accountKey(tx.from));
        pub = raw ? decodeAccount(raw).publicKey : undefined;
      }
      if (pub) jobs.push({ id: toHex(txIds[i]), pub, msg: sighashes?.[i] ?? txSighash(tx), sig: tx.signature });
    });
    return jobs;
  }

  /** Runs the checks as background work; resolves when the pool is done with them (never rejects). */
  async submit(jobs: readonly LookaheadJob[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.verifier.verifyBatch(jobs, { background: true }).catch(() => undefined);
  }
}
