/**
 * The payee's nonce slots (x402/native/payeeNonces.ts) of a single node, in its providers
 * database (LevelDB). A fleet keeps them in the ledger's PostgreSQL (x402/native/pgPayeeTxLog.ts);
 * x402/native/open.ts picks the engine.
 */
import type { Level } from 'level';
import type { PayeeTxLog, PayeeTxSlot } from './payeeNonces.js';

/** Width of a nonce in a key: keys sort by nonce. */
const NONCE_DIGITS = 20;
const keyOf = (payee: string, nonce: bigint) => `n:${payee}:${nonce.toString().padStart(NONCE_DIGITS, '0')}`;

/**
 * Slots of a single node in its providers database: `n:<payee hex>:<nonce, 20 digits>` → JSON
 * `{purpose, txId, raw}`. Its one writer is the node's payee queue (x402/native/payeeTx.ts), one claim at a time.
 */
export function levelPayeeTxLog(db: Level<string, string>): PayeeTxLog {
  const decode = (k: string, v: string): PayeeTxSlot => {
    const o = JSON.parse(v) as { purpose: string; txId: string; raw: string };
    return { nonce: BigInt(k.slice(k.lastIndexOf(':') + 1)), purpose: o.purpose, txId: o.txId, raw: o.raw };
  };
  const encode = (s: PayeeTxSlot) => JSON.stringify({ purpose: s.purpose, txId: s.txId, raw: s.raw });
  const live = async (payee: string, from: bigint) => {
    const out: PayeeTxSlot[] = [];
    for await (const [k, v] of db.iterator({ gte: keyOf(payee, from), lt: `n:${payee};` })) out.push(decode(k, v));
    return out;
  };
  return {
    live,
    async claim(payee, slot, from) {
      const held = await live(payee, from);
      if (held.some((s) => s.nonce === slot.nonce || s.purpose === slot.purpose)) return false;
      if ((await db.get(keyOf(payee, slot.nonce))) !== undefined) return false;
      await db.put(keyOf(payee, slot.nonce), encode(slot));
      return true;
    },
    async replace(payee, slot) {
      const v = await db.get(keyOf(payee, slot.nonce));
      if (v === undefined || decode(keyOf(payee, slot.nonce), v).purpose !== slot.purpose) return false;
      await db.put(keyOf(payee, slot.nonce), encode(slot));
      return true;
    },
    async prune(payee, below) {
      await db.clear({ gte: `n:${payee}:`, lt: keyOf(payee, below) });
    },
  };
}
