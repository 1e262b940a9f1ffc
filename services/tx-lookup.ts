/**
 * native-tx-lookup: decodes a transaction by id: status (pending or mined; an id this node does
 * not hold is refused before any quote),
 * confirmations, type, payload fields, fee, and a fresh check of its hybrid signature
 * (ML-DSA-87 and Ed25519, both must verify) on the node's verification pool (the reference
 * verifier where no pool runs).
 */
import { bytesEqual } from '../consensus/hash.js';
import { addressOfPublicKey, verifyHybridReference, type HybridPublicKey } from '../consensus/keys.js';
import { txSighash, type Tx } from '../consensus/tx.js';
import { defineService } from './define.js';
import { chainHealth } from './health.js';
import { isoOfSeconds, txJson } from './format.js';
import { servable, Unservable } from './market/economy.js';
import type { ServiceContext } from './types.js';

/** Result of re-checking a transaction's signatures. */
async function signatureCheck(ctx: ServiceContext, tx: Tx): Promise<Record<string, unknown>> {
  let pub: HybridPublicKey | undefined = tx.publicKey;
  let source = 'transaction';
  if (!pub) {
    pub = (await ctx.chain.getAccount(tx.from)).publicKey;
    source = 'account state';
  }
  const scheme = 'ML-DSA-87 + Ed25519 (both must verify)';
  if (!pub) return { checked: false, valid: null, scheme, reason: 'the sender has no published public key yet (it travels in an earlier pending transaction)' };
  const keyMatchesSender = bytesEqual(addressOfPublicKey(pub), tx.from);
  // On the node the check runs on the worker pool, never on the HTTP event loop.
  const msg = txSighash(tx);
  const valid = keyMatchesSender && (ctx.verifier ? (await ctx.verifier.verifyBatch([{ pub, msg, sig: tx.signature }]))[0] : verifyHybridReference(pub, msg, tx.signature));
  return { checked: true, valid, scheme, publicKeySource: source, keyMatchesSender };
}

/**
 * The transaction: pending in this node's mempool or mined on its best chain; else unservable
 * (400 before any quote; refunded when it left the mempool unmined between quote and settle).
 */
const lookup = servable(async (ctx: ServiceContext, input: unknown) => {
  const id = String(input).toLowerCase();
  const pending = ctx.mempool.get(id);
  if (pending) return { id, pending } as const;
  const mined = await ctx.chain.getTx(id);
  if (mined) return { id, mined } as const;
  return new Unservable('tx_not_found', `transaction ${id} is neither in this node's mempool nor mined on its best chain`);
});

async function run(ctx: ServiceContext, input: unknown) {
  const found = await lookup.resolved(ctx, input);
  const pending = 'pending' in found ? found.pending : undefined;
  if (pending) {
    return {
      ...(await txJson(pending.tx, pending.bytes, ctx.params, ctx.chain)),
      status: 'pending',
      height: null,
      blockHash: null,
      confirmations: 0,
      addedAt: pending.addedAt,
      signature: await signatureCheck(ctx, pending.tx),
    };
  }
  const mined = found.mined!;
  const entry = ctx.chain.getEntryByHeight(mined.height);
  return {
    ...(await txJson(mined.tx, mined.bytes, ctx.params, ctx.chain)),
    status: 'mined',
    height: mined.height,
    blockHash: mined.blockHash,
    index: mined.index,
    blockTime: entry?.header.time ?? null,
    blockTimeIso: entry ? isoOfSeconds(entry.header.time) : null,
    confirmations: Math.max(0, ctx.chain.tip.height - mined.height + 1),
    signature: await signatureCheck(ctx, mined.tx),
  };
}

/** native-tx-lookup. */
export const txLookup = defineService({
  id: 'native-tx-lookup',
  name: 'Transaction Lookup',
  category: 'explorer',
  priceBase: 600_000n,
  description: 'decode a transaction: status, payload, signature check',
  tags: ['transaction', 'tx', 'explorer', 'decode', 'signature', 'ml-dsa', 'ed25519', 'confirmations'],
  requestFormat: 'id (64 hex characters) of a transaction pending on this node or mined on its best chain',
  requestRequired: true,
  inputSchema: { type: 'string', minLength: 64, maxLength: 64, pattern: '^[0-9a-fA-F]{64}$', description: 'Transaction id (64 hex characters) of a transaction pending on this node or mined on its best chain.' },
  precheck: lookup.precheck,
  run,
  health: chainHealth,
});
