/**
 * Many senders and many signed transactions, fast enough for a flood test: thousands of
 * keys and tens of thousands of signatures, where @noble would take minutes (ML-DSA-87 keygen
 * ~12 ms, signing ~6 ms, on this machine's cores).
 *
 * Keys: a hybrid key is an ML-DSA-87 half and an Ed25519 half, and the account id hashes both. A
 * few ML-DSA halves (derived once by @noble from seeds) are shared round-robin, and each key gets
 * its own Ed25519 half from its seed: every key is a valid, distinct account, derived
 * deterministically, at ~0.5 ms a key. (An attacker saving keygen would do the same.)
 *
 * Signatures: bench/paid.ts's `fastSigner` (liboqs ML-DSA-87 + node:crypto Ed25519), which the
 * node verifies like any other; `startFloodSigners` runs it on worker threads
 * (test/helpers/floodSignWorker.ts), so signing overlaps the node's start and the sending.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { fastSigner } from '../../bench/paidKit.js';
import { sha256, toHex } from '../../consensus/hash.js';
import { addressOfPublicKey, createKeyPairFromSeed, type HybridKeyPair } from '../../consensus/keys.js';
import { encodeTx, txId, txSighash, TxType, TX_VERSION } from '../../consensus/tx.js';
import { feeForRate, type BuiltTx, type TransferTxOptions } from '../../consensus/txBuilder.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import { createTsWorker } from '../../chain/tsWorker.js';

/** ML-DSA-87 halves a label's keys share, round-robin. */
const HALVES = 4;

const seedOf = (label: string) => sha256(new TextEncoder().encode(`flood-key:${label}`));
const halvesByLabel = new Map<string, HybridKeyPair[]>();

/** The flood key `${label}-${index}` (deterministic; see the module comment). */
export function floodKey(label: string, index: number): HybridKeyPair {
  let ml = halvesByLabel.get(label);
  if (!ml) halvesByLabel.set(label, (ml = Array.from({ length: HALVES }, (_, i) => createKeyPairFromSeed(seedOf(`${label}-mldsa-${i}`)))));
  const m = ml[index % HALVES];
  const edSecret = seedOf(`${label}-${index}`);
  const publicKey = { mldsa: m.publicKey.mldsa, ed25519: ed25519.getPublicKey(edSecret) };
  return { seed: edSecret, publicKey, mldsaSecret: m.mldsaSecret, ed25519Secret: edSecret, address: addressOfPublicKey(publicKey) };
}

/** The flood keys `${label}-0 … ${label}-${count - 1}`. */
export function createFloodKeys(label: string, count: number): HybridKeyPair[] {
  return Array.from({ length: count }, (_, i) => floodKey(label, i));
}

/** Builds and signs a transfer as `createTransferTx` does, with the fast signer. */
export type FastTransferBuilder = (o: TransferTxOptions) => BuiltTx;

/** The fast transfer builder of this thread (loads liboqs once). */
export async function createFastTransferBuilder(): Promise<FastTransferBuilder> {
  const sign = await fastSigner();
  return (o) => {
    const base = {
      version: TX_VERSION,
      chainId: o.chainId,
      type: TxType.transfer,
      from: o.key.address,
      nonce: o.nonce,
      payload: transfer.encodePayload({ to: o.to, amount: o.amount }),
      ...(o.includeKey ? { publicKey: o.key.publicKey } : {}),
    };
    const unsigned = { ...base, fee: o.fee ?? feeForRate(base, o.feeRate ?? 1n) };
    const tx = { ...unsigned, signature: sign(txSighash(unsigned), o.key) };
    const bytes = encodeTx(tx);
    return { tx, bytes, id: toHex(txId(bytes)) };
  };
}

/** One transfer for a signer thread: from the flood key `${label}-${index}` (the other fields as `TransferTxOptions`). */
export interface FloodTransferSpec {
  readonly label: string;
  readonly index: number;
  readonly nonce: bigint;
  readonly includeKey: boolean;
  readonly amount: bigint;
  readonly fee?: bigint;
  readonly feeRate?: bigint;
}

/** A signed transfer as a signer thread returns it. */
export interface FloodSignedTx {
  /** Hex tx id. */
  readonly id: string;
  /** The signed bytes (a view into its batch's buffer). */
  readonly bytes: Uint8Array;
}

/** A signer thread's answer: the batch's transactions back to back in one transferred buffer. */
export interface FloodSignAnswer {
  readonly id: number;
  readonly ids?: readonly string[];
  /** End offset of each transaction in `buffer`. */
  readonly ends?: readonly number[];
  readonly buffer?: ArrayBuffer;
  readonly error?: string;
}

/** What a signer thread is asked: transfers to `to` (hex account id) on chain `chainId`. */
export interface FloodSignRequest {
  readonly id: number;
  readonly chainId: number;
  readonly to: string;
  readonly specs: readonly FloodTransferSpec[];
}

/** Signer threads: `sign` hands a batch to the least busy one. */
export interface FloodSigners {
  sign(chainId: number, to: Uint8Array, specs: readonly FloodTransferSpec[]): Promise<FloodSignedTx[]>;
  close(): Promise<void>;
}

/** Starts `threads` signer threads (default: one per core). */
export function startFloodSigners(threads = availableParallelism()): FloodSigners {
  const url = new URL(`./floodSignWorker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
  const pending = new Map<number, { resolve: (txs: FloodSignedTx[]) => void; reject: (e: Error) => void }>();
  const workers = Array.from({ length: threads }, () => {
    const w: Worker = createTsWorker(url);
    const slot = { w, busy: 0 };
    w.on('message', (m: FloodSignAnswer) => {
      slot.busy--;
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (!m.buffer || !m.ids || !m.ends) return p?.reject(new Error(`flood signer: ${m.error}`));
      const all = new Uint8Array(m.buffer);
      p?.resolve(m.ids.map((id, i) => ({ id, bytes: all.subarray(i ? m.ends![i - 1] : 0, m.ends![i]) })));
    });
    w.on('error', (e) => {
      for (const p of pending.values()) p.reject(e);
      pending.clear();
    });
    return slot;
  });
  let nextId = 0;
  return {
    sign(chainId, to, specs) {
      const slot = workers.reduce((a, b) => (b.busy < a.busy ? b : a));
      const id = nextId++;
      slot.busy++;
      const req: FloodSignRequest = { id, chainId, to: toHex(to), specs };
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        slot.w.postMessage(req);
      });
    },
    async close() {
      await Promise.all(workers.map((s) => s.w.terminate()));
    },
  };
}
