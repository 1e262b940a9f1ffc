/**
 * The payout records (x402/providers/payoutStore.ts) of a single node, in its providers database
 * (LevelDB). A fleet keeps them in the ledger's PostgreSQL (x402/providers/pgPayoutStore.ts);
 * x402/providers/open.ts picks the engine.
 */
import type { Level } from 'level';
import type { PayoutEntry, PayoutStore } from './payoutStore.js';

/** The store of one node: `o:<payment id>` in its providers database (its only writer). */
export function levelPayoutStore(db: Level<string, string>): PayoutStore {
  async function* all(): AsyncGenerator<PayoutEntry> {
    for await (const [, v] of db.iterator({ gte: 'o:', lt: 'o;' })) yield JSON.parse(v) as PayoutEntry;
  }
  const get = async (id: string) => {
    const v = await db.get(`o:${id}`);
    return v === undefined ? undefined : (JSON.parse(v) as PayoutEntry);
  };
  const put = (e: PayoutEntry) => db.put(`o:${e.invokeId}`, JSON.stringify(e));
  return {
    async open() {
      const out: PayoutEntry[] = [];
      for await (const e of all()) if (e.status === 'owed' || e.status === 'submitted') out.push(e);
      return out;
    },
    async paidTotals() {
      const totals = new Map<string, bigint>();
      for await (const e of all()) if (e.status === 'paid') totals.set(e.serviceId, (totals.get(e.serviceId) ?? 0n) + BigInt(e.amount));
      return totals;
    },
    get,
    async create(e) {
      if ((await get(e.invokeId)) !== undefined) return false;
      await put(e);
      return true;
    },
    put,
    async namedTxIds(txIds) {
      const wanted = new Set(txIds);
      const named = new Set<string>();
      for await (const e of all()) if (e.txId !== undefined && wanted.has(e.txId)) named.add(e.txId);
      return named;
    },
  };
}
