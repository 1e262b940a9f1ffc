/**
 * The economy's read indexes, written in the same atomic batch as the block that changes them.
 *
 * Two sources, both known when a block connects:
 * - the state changes with their prior values (token balances → holders sorted by balance and
 *   the tokens each address holds; LP shares and stakes → positions per address; new pools →
 *   pools by asset);
 * - the block's events (consensus/events.ts) → the swap log, hourly candles, transfers, bridge
 *   records and each address's activity, keyed by height so a window reads only that window.
 *
 * Every index write's prior value is recorded (`v:<hash>`, see layout.ts), so disconnecting a
 * block restores the indexes byte for byte exactly as state undo does. Values are JSON (not
 * consensus data; amounts as base-unit strings).
 */
import { decodeStake } from '../consensus/economyState.js';
import { decodeVarintValue } from '../consensus/ledger.js';
import { toHex } from '../consensus/hash.js';
import { MAX_AMOUNT } from '../consensus/amount.js';
import type { Block } from '../consensus/block.js';
import type { BlockEvent } from '../consensus/events.js';
import type { ChainParams } from '../consensus/params.js';
import type { StateChanges } from '../consensus/state.js';
import { TxType } from '../consensus/tx.js';
import { agentInvoke } from '../consensus/txTypes/agentInvoke.js';
import { refund } from '../consensus/txTypes/refund.js';
import { providerPayout } from '../consensus/txTypes/providerPayout.js';

/** Index writes of one block and the values they replace. */
export interface IndexBatch {
  readonly writes: Map<string, Uint8Array | null>;
  readonly priors: Map<string, Uint8Array | null>;
}

/** An hourly candle of a pool: price = reserve b per reserve a in smallest units after each swap. */
export interface Candle {
  /** Unix seconds of the hour's start. */
  readonly t: number;
  readonly o: number;
  readonly h: number;
  readonly l: number;
  readonly c: number;
  /** Volume in asset a and asset b (smallest units, decimal strings). */
  readonly va: string;
  readonly vb: string;
  /** Swaps. */
  readonly n: number;
}

const EMPTY = new Uint8Array(0);
const te = new TextEncoder();
const json = (v: unknown) => te.encode(JSON.stringify(v));
const pad = (n: number, w: number) => n.toString().padStart(w, '0');

/** Sort key of a balance in the holders index: largest first under a forward scan. */
export function invBalance(b: bigint): string {
  return (MAX_AMOUNT - b).toString().padStart(20, '0');
}

/** Key builders of the economy indexes (documented in layout.ts). */
export const econKeys = {
  holder: (sym: string, balance: bigint, addrHex: string) => `eh:${sym}:${invBalance(balance)}:${addrHex}`,
  holderPrefix: (sym: string) => `eh:${sym}:`,
  holderSquares: (sym: string) => `eH:${sym}`,
  account: (addrHex: string, kind: 'T' | 'L' | 'K', id: string) => `ea:${addrHex}:${kind}:${id}`,
  accountPrefix: (addrHex: string) => `ea:${addrHex}:`,
  poolByAsset: (asset: string, pool: string) => `ep:${asset}:${pool}`,
  poolByAssetPrefix: (asset: string) => `ep:${asset}:`,
  swap: (pool: string, height: number, txIndex: number, n: number) => `es:${pool}:${pad(height, 10)}:${pad(txIndex, 5)}:${n}`,
  swapPrefix: (pool: string) => `es:${pool}:`,
  swapAll: (height: number, txIndex: number, n: number) => `eS:${pad(height, 10)}:${pad(txIndex, 5)}:${n}`,
  candle: (pool: string, hourStart: number) => `ec:${pool}:${pad(hourStart, 10)}`,
  candlePrefix: (pool: string) => `ec:${pool}:`,
  transfer: (height: number, txIndex: number, n: number) => `et:${pad(height, 10)}:${pad(txIndex, 5)}:${n}`,
  bridge: (network: string, height: number, txIndex: number) => `eb:${network}:${pad(height, 10)}:${pad(txIndex, 5)}`,
  bridgePrefix: (network: string) => `eb:${network}:`,
  activity: (addrHex: string, height: number, txIndex: number, n: number) => `ex:${addrHex}:${pad(height, 10)}:${pad(txIndex, 5)}:${n}`,
  activityPrefix: (addrHex: string) => `ex:${addrHex}:`,
  payments: (addrHex: string, height: number, txIndex: number, n: number) => `ey:${addrHex}:${pad(height, 10)}:${pad(txIndex, 5)}:${n}`,
  paymentsPrefix: (addrHex: string) => `ey:${addrHex}:`,
  heightPart: (height: number) => pad(height, 10),
} as const;

/** A token's holder aggregate (`eH:<SYM>`): holders counted since the index existed and Σ balance² (for the HHI). */
export interface HolderSquares {
  readonly n: number;
  /** Σ balance² over the holders, smallest units², decimal string. */
  readonly sq: string;
}

/**
 * The state-derived part: holders, account positions, pools by asset. Priors are derived exactly.
 * Returns each token's change of holder count and of Σ balance² in this block.
 */
function fromStateChanges(changes: StateChanges, undo: StateChanges, out: IndexBatch): Map<string, { n: number; sq: bigint }> {
  const squares = new Map<string, { n: number; sq: bigint }>();
  const put = (k: string, v: Uint8Array, prior: Uint8Array | null) => {
    out.writes.set(k, v);
    if (!out.priors.has(k)) out.priors.set(k, prior);
  };
  const del = (k: string, prior: Uint8Array | null) => {
    out.writes.set(k, null);
    if (!out.priors.has(k)) out.priors.set(k, prior);
  };
  for (const [key, value] of changes) {
    const prior = undo.get(key) ?? null;
    const c = key[0];
    if (c === 'B') {
      const [sym, addr] = key.slice(1).split(':');
      const before = prior ? decodeVarintValue(prior) : 0n;
      const after = value ? decodeVarintValue(value) : 0n;
      if (before > 0n) del(econKeys.holder(sym, before, addr), EMPTY);
      if (after > 0n) put(econKeys.holder(sym, after, addr), EMPTY, null);
      const d = squares.get(sym) ?? { n: 0, sq: 0n };
      squares.set(sym, { n: d.n + (after > 0n ? 1 : 0) - (before > 0n ? 1 : 0), sq: d.sq + after * after - before * before });
      // The account's token list changes only when the balance appears or disappears.
      const acct = econKeys.account(addr, 'T', sym);
      if (after > 0n && before === 0n) put(acct, EMPTY, null);
      else if (after === 0n && before > 0n) del(acct, EMPTY);
    } else if (c === 'L') {
      const [pool, addr] = key.slice(1).split(':');
      const acct = econKeys.account(addr, 'L', pool);
      if (value && !prior) put(acct, EMPTY, null);
      else if (!value && prior) del(acct, EMPTY);
    } else if (c === 'K') {
      const rec = decodeStake((value ?? prior)!);
      const acct = econKeys.account(toHex(rec.owner), 'K', key.slice(1));
      if (value && !prior) put(acct, EMPTY, null);
      else if (!value && prior) del(acct, EMPTY);
    } else if (c === 'P' && !prior && value) {
      const pool = key.slice(1);
      for (const asset of pool.split('-')) put(econKeys.poolByAsset(asset, pool), EMPTY, null);
    }
  }
  return squares;
}

/** Tx index the block reward's payments row is keyed under (after every transaction of the block). */
export const REWARD_TX_INDEX = 99_999;

/**
 * The payments side of each account's history (`ey:`): the block reward (coinbase) to its miner,
 * each paid call (`agent_invoke`) to its payer and its payee, each refund and provider payout to
 * both sides. These transactions emit no economy events, so they are read from the block itself;
 * kept apart from `ex:` so the services reading an account's economy activity see what they did.
 * A function of the block alone: chain/indexBackfill.ts rebuilds the rows of blocks connected
 * before this index existed from the stored blocks.
 */
export function paymentRows(block: Block, height: number, txIds: readonly Uint8Array[], addNew: (k: string, v: unknown) => void): void {
  const time = block.header.time;
  const cb = block.coinbase;
  addNew(econKeys.payments(toHex(cb.miner), height, REWARD_TX_INDEX, 0), { height, time, tx: '', kind: 'reward', reward: cb.reward.toString(), fees: cb.fees.toString() });
  block.txs.forEach((tx, i) => {
    if (tx.type !== TxType.agent_invoke && tx.type !== TxType.refund && tx.type !== TxType.provider_payout) return;
    const from = toHex(tx.from);
    const base = { height, time, tx: toHex(txIds[i]) };
    const both = (out: Record<string, unknown>, inn: Record<string, unknown>, to: string) => {
      addNew(econKeys.payments(from, height, i, 0), { ...base, ...out, counterparty: to });
      if (to !== from) addNew(econKeys.payments(to, height, i, 1), { ...base, ...inn, counterparty: from });
    };
    if (tx.type === TxType.agent_invoke) {
      const p = agentInvoke.decodePayload(tx.payload);
      const v = { serviceId: p.serviceId, amount: p.amount.toString() };
      both({ kind: 'invoke_paid', ...v }, { kind: 'invoke_received', ...v }, toHex(p.payTo));
    } else if (tx.type === TxType.refund) {
      const p = refund.decodePayload(tx.payload);
      const v = { invokeId: toHex(p.invokeId), amount: p.amount.toString() };
      both({ kind: 'refund_sent', ...v }, { kind: 'refund_received', ...v }, toHex(p.to));
    } else {
      const p = providerPayout.decodePayload(tx.payload);
      const v = { invokeId: toHex(p.invokeId), amount: p.amount.toString() };
      both({ kind: 'payout_sent', ...v }, { kind: 'payout_received', ...v }, toHex(p.to));
    }
  });
}

/** Reads what the event-derived part needs (candles of the pools swapped in this block). */
export type IndexRead = (keys: string[]) => Promise<(Uint8Array | undefined)[]>;

/**
 * All index writes of a block connecting at `height` with header time `time`, with their
 * prior values. `read` gets current index values (candles) from the store.
 */
export async function buildIndexBatch(
  block: Block,
  height: number,
  txIds: readonly Uint8Array[],
  app: { readonly changes: StateChanges; readonly undo: StateChanges; readonly events: readonly BlockEvent[] },
  params: ChainParams,
  read: IndexRead,
): Promise<IndexBatch> {
  const out: IndexBatch = { writes: new Map(), priors: new Map() };
  const squares = fromStateChanges(app.changes, app.undo, out);
  if (squares.size) {
    const syms = [...squares.keys()];
    const keys = syms.map(econKeys.holderSquares);
    const values = await read(keys);
    syms.forEach((sym, i) => {
      const v = values[i];
      const prev = v ? (JSON.parse(Buffer.from(v).toString('utf8')) as HolderSquares) : { n: 0, sq: '0' };
      const d = squares.get(sym)!;
      out.priors.set(keys[i], v ?? null);
      out.writes.set(keys[i], json({ n: prev.n + d.n, sq: (BigInt(prev.sq) + d.sq).toString() }));
    });
  }
  const time = block.header.time;
  const hour = time - (time % 3600);
  const addNew = (k: string, v: unknown) => {
    out.writes.set(k, json(v));
    out.priors.set(k, null);
  };
  paymentRows(block, height, txIds, addNew);
  if (!app.events.length) return out;
  const perTx = new Map<number, number>();
  const nextN = (i: number) => {
    const n = perTx.get(i) ?? 0;
    perTx.set(i, n + 1);
    return n;
  };
  const candles = new Map<string, Candle | undefined>();
  const swapPools = [...new Set(app.events.filter((e) => e.kind === 'swap').map((e) => (e as { pool: string }).pool))];
  if (swapPools.length) {
    const keys = swapPools.map((p) => econKeys.candle(p, hour));
    const values = await read(keys);
    keys.forEach((k, i) => {
      const v = values[i];
      out.priors.set(k, v ?? null);
      candles.set(k, v ? (JSON.parse(Buffer.from(v).toString('utf8')) as Candle) : undefined);
    });
  }
  for (const e of app.events) {
    const n = nextN(e.txIndex);
    const tx = toHex(txIds[e.txIndex]);
    const base = { height, time, tx };
    const activity = (addr: Uint8Array, v: Record<string, unknown>) => addNew(econKeys.activity(toHex(addr), height, e.txIndex, n), { ...base, ...v });
    switch (e.kind) {
      case 'transfer': {
        // The most common event (every native payment): each hex and string is made once.
        const from = toHex(e.from);
        const to = toHex(e.to);
        const amount = e.amount.toString();
        addNew(econKeys.transfer(height, e.txIndex, n), { height, time, tx, asset: e.asset, from, to, amount });
        addNew(econKeys.activity(from, height, e.txIndex, n), { height, time, tx, kind: 'transfer_out', asset: e.asset, counterparty: to, amount });
        if (to !== from) addNew(econKeys.activity(to, height, e.txIndex, n), { height, time, tx, kind: 'transfer_in', asset: e.asset, counterparty: from, amount });
        break;
      }
      case 'swap': {
        const [a] = e.pool.split('-');
        const price = Number(e.reserveB) / Number(e.reserveA);
        const v = {
          ...base,
          pool: e.pool,
          sender: toHex(e.sender),
          assetIn: e.assetIn,
          assetOut: e.assetOut,
          amountIn: e.amountIn.toString(),
          amountOut: e.amountOut.toString(),
          fee: e.fee.toString(),
          reserveA: e.reserveA.toString(),
          reserveB: e.reserveB.toString(),
          price,
        };
        addNew(econKeys.swap(e.pool, height, e.txIndex, n), v);
        addNew(econKeys.swapAll(height, e.txIndex, n), v);
        activity(e.sender, { kind: 'swap', pool: e.pool, assetIn: e.assetIn, assetOut: e.assetOut, amountIn: e.amountIn.toString(), amountOut: e.amountOut.toString() });
        const ck = econKeys.candle(e.pool, hour);
        const volA = e.assetIn === a ? e.amountIn : e.amountOut;
        const volB = e.assetIn === a ? e.amountOut : e.amountIn;
        const c = candles.get(ck);
        const next: Candle = c
          ? { ...c, h: Math.max(c.h, price), l: Math.min(c.l, price), c: price, va: (BigInt(c.va) + volA).toString(), vb: (BigInt(c.vb) + volB).toString(), n: c.n + 1 }
          : { t: hour, o: price, h: price, l: price, c: price, va: volA.toString(), vb: volB.toString(), n: 1 };
        candles.set(ck, next);
        out.writes.set(ck, json(next));
        break;
      }
      case 'liquidity':
        activity(e.owner, { kind: e.add ? 'liquidity_add' : 'liquidity_remove', pool: e.pool, amountA: e.amountA.toString(), amountB: e.amountB.toString(), shares: e.shares.toString() });
        break;
      case 'token':
        activity(e.account, { kind: `token_${e.action}`, symbol: e.symbol, amount: e.amount.toString(), native: e.native.toString() });
        break;
      case 'stake':
        activity(e.owner, { kind: 'stake', stakeId: toHex(e.id), amount: e.amount.toString(), tier: e.tier, unlockHeight: e.unlockHeight });
        break;
      case 'unstake':
        activity(e.owner, { kind: 'unstake', stakeId: toHex(e.id), amount: e.amount.toString(), reward: e.reward.toString() });
        break;
      case 'bridge': {
        const netIndex = params.economy.bridgeNetworks.findIndex((x) => x.name === e.network);
        addNew(econKeys.bridge(String(netIndex), height, e.txIndex), { ...base, network: e.network, direction: e.direction, amount: e.amount.toString(), fee: e.fee.toString(), ref: e.ref, account: toHex(e.account) });
        activity(e.account, { kind: `bridge_${e.direction}`, network: e.network, amount: e.amount.toString(), fee: e.fee.toString(), ref: e.ref });
        break;
      }
    }
  }
  return out;
}

