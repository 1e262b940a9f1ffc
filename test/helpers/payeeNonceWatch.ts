/**
 * What was signed at each nonce of a payee key, gathered from outside the nodes: the signed bytes
 * of the ledger's nonce slots (`payee_txs`), the payee's transactions in the nodes' mempools (read
 * over HTTP), and those mined. Each is reduced to its payload — the transaction's type and fields
 * as `GET /api/v1/tx/:id` shows them, without the envelope (fee, size, whether the key travels) —
 * so a bump (the same payload at a higher fee) counts once and a nonce signed for two different
 * things (two refunds, a refund and a payout, one payout twice at two nonces is not this: see the
 * callers' own checks) shows as two payloads at one nonce.
 */
import { decodeTx } from '../../consensus/tx.js';
import type { ChainParams } from '../../consensus/params.js';
import { txToJson } from '../../node/api/http.js';

/** Fields of a transaction's JSON that are the envelope or where it was seen, not what it does. */
const ENVELOPE = new Set(['txId', 'typeId', 'version', 'chainId', 'from', 'nonce', 'fee', 'feeBase', 'size', 'publicKeyIncluded', 'status', 'height', 'blockHash', 'index', 'confirmations', 'addedAt']);

/** The payload of a transaction's JSON view: its type and fields, in key order. */
export function payloadOfJson(json: Record<string, unknown>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(json).filter(([k]) => !ENVELOPE.has(k)).sort(([a], [b]) => (a < b ? -1 : 1))));
}

/** A nonce signed with two different payloads: the payloads and where each was seen. */
export interface NonceSignedTwice {
  readonly nonce: string;
  readonly payloads: { readonly payload: string; readonly seen: string[] }[];
}

/** Payloads seen per nonce of one payee (see module comment). */
export class PayeeNonceWatch {
  /** nonce → payload → where it was seen (source and tx id), first sightings only. */
  private readonly byNonce = new Map<bigint, Map<string, Set<string>>>();
  /** Transaction ids already reduced (a transaction is read once). */
  private readonly known = new Set<string>();

  constructor(
    /** The payee's address as the nodes print it (bech32m). */
    readonly payee: string,
    private readonly params: ChainParams,
  ) {}

  /** Whether the transaction `txId` was reduced already. */
  has(txId: string): boolean {
    return this.known.has(txId);
  }

  /** A payee transaction from its signed bytes (a nonce slot's, a block's). */
  async addBytes(txId: string, bytes: Uint8Array, where: string): Promise<void> {
    if (this.known.has(txId)) return;
    const tx = decodeTx(bytes);
    this.add(tx.nonce, payloadOfJson(await txToJson(tx, bytes, this.params, {})), `${where}:${txId.slice(0, 12)}`);
    this.known.add(txId);
  }

  /** A payee transaction from its `GET /api/v1/tx/:id` JSON (a mempool's). */
  addJson(json: Record<string, unknown>, where: string): void {
    const txId = String(json.txId);
    if (this.known.has(txId) || json.from !== this.payee) return;
    this.add(BigInt(Number(json.nonce)), payloadOfJson(json), `${where}:${txId.slice(0, 12)}`);
    this.known.add(txId);
  }

  private add(nonce: bigint, payload: string, seen: string): void {
    const payloads = this.byNonce.get(nonce) ?? new Map<string, Set<string>>();
    this.byNonce.set(nonce, payloads);
    payloads.set(payload, (payloads.get(payload) ?? new Set()).add(seen));
  }

  /** Nonces signed with two different payloads. */
  twice(): NonceSignedTwice[] {
    return [...this.byNonce]
      .filter(([, p]) => p.size > 1)
      .map(([n, p]) => ({ nonce: n.toString(), payloads: [...p].map(([payload, seen]) => ({ payload, seen: [...seen] })) }));
  }

  /** Every nonce seen signed, low to high. */
  nonces(): bigint[] {
    return [...this.byNonce.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** How many distinct transactions were read. */
  get size(): number {
    return this.known.size;
  }
}
