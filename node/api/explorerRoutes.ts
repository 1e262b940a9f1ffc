/**
 * The chain explorer for people, served by the node:
 *
 *   GET /explorer                     search, chain figures, latest blocks and transactions (live)
 *   GET /explorer/search?q=           height, block hash, tx id, address, token symbol or pool → its page
 *   GET /explorer/block/:heightOrHash block page, each transaction in words
 *   GET /explorer/tx/:id              transaction page (pending or mined), in words
 *   GET /explorer/blocks?before=&limit=  the best chain, 25 (limit ≤ 100) blocks a page, down to the genesis
 *   GET /explorer/mempool             pending transactions, highest fee rate first
 *   GET /explorer/address/:address    balances, tokens, LP positions, stakes, pending transactions and
 *                                     the whole history (economy activity, paid calls, refunds,
 *                                     payouts, block rewards), 50 rows a page (?before=<cursor>&limit=)
 *   GET /explorer/tokens, /explorer/pools  every token, every pool
 *   GET /explorer/swaps?pool=&before= swaps newest first, paged by height
 *   GET /explorer/token/:symbol       token page (supply, holders, pools)
 *   GET /explorer/pool/:id            pool page (reserves, 24 h volume, price chart from hourly candles, swaps)
 *   GET /explorer/events              server-sent events: `block` (connected), `disconnect` (reorganisation)
 *   GET /explorer/assets/live.js      the home page's script
 *
 * Every read is a point read or a bounded range scan of the chain's indexes (chain/economyReader.ts,
 * the tx and height indexes); the latest transactions come from a ring the connect and disconnect
 * events keep. No request scans the chain. Each answer carries `Server-Timing: app;dur=<ms>`.
 */
import { PassThrough } from 'node:stream';
import { Router } from '@koa/router';
import type Koa from 'koa';
import { encodeAddress, tryDecodeAddress } from '../../consensus/address.js';
import type { Block } from '../../consensus/block.js';
import { formatAmount } from '../../consensus/amount.js';
import { fromHex, isHex, toHex } from '../../consensus/hash.js';
import { difficultyOfBits } from '../../consensus/pow.js';
import { encodeTx, txId as computeTxId, type Tx } from '../../consensus/tx.js';
import { getTxType } from '../../consensus/txTypes/index.js';
import { payloadView } from '../../consensus/txTypes/amountUnits.js';
import { decodeInvokeRecord, invokeKey } from '../../consensus/txTypes/agentInvoke.js';
import { SYMBOL_RE } from '../../consensus/txTypes/economyRules.js';
import type { ChainParams } from '../../consensus/params.js';
import type { ChainEntry, ChainEvents, ChainReader, MempoolReader } from '../../chain/types.js';
import { blockHeaderJson } from '../../chain/blockJson.js';
import { estimateHashrate } from '../../chain/hashrate.js';
import type { EconomyReader, SwapView } from '../../chain/economyReader.js';
import { describeTx, addrLink, assetLink, poolLink, txLink, units, type InvokeState, type TxExtras } from '../../discovery/pages/explorerTx.js';
import { esc } from '../../discovery/pages/layout.js';
import { renderAccount, renderBlock, renderHome, renderNotFound, renderPool, renderToken, renderTx, type BlockRow, type ShellInfo, type TxRow } from '../../discovery/pages/explorer.js';
import { BLOCKS_PER_PAGE, renderBlocks, renderMempool, renderPools, renderSwaps, renderTokens } from '../../discovery/pages/explorerLists.js';
import { EXPLORER_LIVE_JS } from '../../discovery/pages/explorerScripts.js';

/** The chain's events the live list follows. */
export interface ChainEventSource {
  on<K extends keyof ChainEvents>(event: K, fn: (...args: ChainEvents[K]) => void): unknown;
  off<K extends keyof ChainEvents>(event: K, fn: (...args: ChainEvents[K]) => void): unknown;
}

/** What the explorer reads of the paid side (node/payments.ts): this node's ledger and refunds. */
export interface ExplorerPayments {
  /** The ledger's record of a payment to this node, by invoke tx id. */
  record(invokeId: string): Promise<{ status: string; refundTxId?: string; error?: { code: string; message: string } } | undefined>;
  /** Whether a refund of the invoke is signed and not mined yet. */
  refundPending(invokeId: string): boolean;
  /** Display name of a service this node sells. */
  serviceName(serviceId: string): string | undefined;
}

/** What the explorer needs. */
export interface ExplorerModules {
  readonly chain: ChainReader & ChainEventSource;
  readonly mempool: MempoolReader;
  readonly params: ChainParams;
  readonly version: string;
  readonly payments?: ExplorerPayments;
}

/** The explorer's router and its live feed (call `stop()` to end the event streams). */
export interface Explorer {
  readonly router: Router;
  /** Open event streams. */
  clients(): number;
  stop(): void;
}

/** Latest transactions kept for the home page. */
const RECENT_TXS = 20;
/** Transactions listed on a block page at once. */
const BLOCK_PAGE_TXS = 100;
/** Rows of an account's history a page. */
const ACTIVITY_PAGE = 50;
/** Swaps a page of /explorer/swaps. */
const SWAPS_PAGE = 25;
/** Pending transactions listed on the mempool page. */
const MEMPOOL_PAGE = 200;
/** Transaction ids a `block` event carries (the live list drops these from its pending rows). */
const EVENT_IDS = 2_000;
/** Most event streams at once; more are answered 503. */
const MAX_STREAMS = 200;
/** Comment line sent to keep idle streams open through proxies, ms. */
const HEARTBEAT_MS = 15_000;

const CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

function typeName(type: number): string {
  try {
    return getTxType(type).name;
  } catch {
    return 'unknown';
  }
}

/** Builds the explorer (see module comment). */
export function createExplorer(m: ExplorerModules): Explorer {
  const { chain, mempool, params } = m;
  const info: ShellInfo = { network: params.network, chainId: params.chainId, version: m.version };
  const eco = (): EconomyReader | undefined => chain.economy;
  const router = new Router();

  // Latest transactions, newest first: filled once from the last blocks, then by the events.
  let recent: (TxRow & { block: string })[] | undefined;
  const rowsOf = (entry: ChainEntry, block: Block, ids: readonly string[]) =>
    block.txs.map((tx, i) => ({ id: ids[i], type: typeName(tx.type), from: encodeAddress(tx.from, params.hrp), height: entry.height, block: entry.hashHex })).reverse();
  const fillRecent = async () => {
    if (recent) return recent;
    const out: (TxRow & { block: string })[] = [];
    for (let h = chain.tip.height, seen = 0; h > 0 && out.length < RECENT_TXS && seen < 50; h--, seen++) {
      const e = chain.getEntryByHeight(h);
      const b = e && (await chain.getBlock(e.hashHex));
      if (!e || !b) continue;
      out.push(...rowsOf(e, b, b.txs.map((t) => toHex(computeTxId(encodeTx(t))))));
    }
    recent ??= out.slice(0, RECENT_TXS);
    return recent;
  };

  // Event streams.
  const streams = new Set<PassThrough>();
  const send = (event: string, data: unknown) => {
    const frame = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const s of streams) s.write(frame);
  };
  /** The `block` event of a connected block. */
  const blockEvent = (entry: ChainEntry, block: Block, ids: readonly string[]) => ({
    height: entry.height,
    hash: entry.hashHex,
    time: entry.header.time,
    txCount: block.txs.length,
    size: entry.size,
    txs: block.txs.slice(0, RECENT_TXS).map((tx, i) => ({ id: ids[i], type: typeName(tx.type), from: encodeAddress(tx.from, params.hrp) })),
    ids: ids.slice(0, EVENT_IDS),
    difficulty: difficultyOfBits(entry.header.bits),
    hashrate: estimateHashrate(chain),
    mempool: mempool.count,
  });
  const onConnect = (entry: ChainEntry, block: Block, txIds: readonly Uint8Array[]) => {
    const ids = txIds.map((t) => toHex(t));
    if (recent) recent = [...rowsOf(entry, block, ids), ...recent].slice(0, RECENT_TXS);
    if (streams.size === 0) return;
    send('block', blockEvent(entry, block, ids));
  };
  const onDisconnect = (entry: ChainEntry) => {
    if (recent) recent = recent.filter((r) => r.block !== entry.hashHex);
    send('disconnect', { height: entry.height, hash: entry.hashHex });
  };
  chain.on('connect', onConnect);
  chain.on('disconnect', onDisconnect);
  const heartbeat = setInterval(() => {
    for (const s of streams) s.write(': ping\n\n');
  }, HEARTBEAT_MS);
  heartbeat.unref();

  /** Runs a page handler with the headers every page carries and the server time. */
  const page = (path: string, handler: (ctx: Koa.Context) => Promise<void> | void) =>
    router.get(path, async (ctx) => {
      const started = process.hrtime.bigint();
      ctx.set('Content-Security-Policy', CSP);
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Cache-Control', 'no-cache');
      await handler(ctx);
      ctx.set('Server-Timing', `app;dur=${(Number(process.hrtime.bigint() - started) / 1e6).toFixed(2)}`);
    });
  const html = (ctx: Koa.Context, body: string, status = 200) => {
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = body;
  };
  const notFound = (ctx: Koa.Context, q: string, message: string, status = 404) => html(ctx, renderNotFound(info, q, message), status);

  /** Decimals of every token (one range scan of the token records), NATIVE 8. */
  const decimalsMap = async (): Promise<(asset: string) => number> => {
    const recs = (await eco()?.tokenRecords()) ?? new Map();
    return (a) => (a === 'NATIVE' ? 8 : (recs.get(a)?.decimals ?? 0));
  };

  /** A transaction's JSON view (txToJson's fields, amounts at their decimals). */
  const txJson = async (tx: Tx, bytes: Uint8Array, dec: (a: string) => number): Promise<Record<string, unknown>> => {
    const out: Record<string, unknown> = { txId: toHex(computeTxId(bytes)), type: typeName(tx.type), from: encodeAddress(tx.from, params.hrp), nonce: Number(tx.nonce), fee: formatAmount(tx.fee), size: bytes.length };
    const view = await payloadView(tx, params, async (s) => dec(s));
    if (view) Object.assign(out, view.json);
    return out;
  };

  const invokeState = async (id: string, serviceId: unknown): Promise<InvokeState> => {
    const raw = (await eco()?.view([invokeKey(fromHex(id))]))?.get(invokeKey(fromHex(id)));
    return {
      serviceName: m.payments?.serviceName(String(serviceId)),
      refundedOnChain: raw ? decodeInvokeRecord(raw).refunded : undefined,
      ledger: await m.payments?.record(id),
      refundPending: m.payments?.refundPending(id),
    };
  };
  const serviceOfInvoke = async (invokeId: unknown): Promise<string | undefined> => {
    if (typeof invokeId !== 'string' || !isHex(invokeId, 32)) return undefined;
    const inv = await chain.getTx(invokeId);
    if (!inv) return undefined;
    const v = await payloadView(inv.tx, params, async () => 0);
    return typeof v?.json.serviceId === 'string' ? v.json.serviceId : undefined;
  };
  /** Pending transactions sent from an account (the first 1,000 of the mempool by fee rate are looked at). */
  const pendingOf = (id: Uint8Array) => {
    const hex = toHex(id);
    return mempool
      .list(1_000)
      .filter((e) => toHex(e.tx.from) === hex)
      .map((e) => ({ id: e.id, type: typeName(e.tx.type) }));
  };
  const hopsOf = (swaps: readonly SwapView[]) => swaps.map((s) => ({ pool: s.pool, assetIn: s.assetIn, assetOut: s.assetOut, amountIn: s.amountIn, amountOut: s.amountOut }));

  page('/explorer', async (ctx) => {
    const tip = chain.tip;
    const blocks: BlockRow[] = [];
    for (let h = tip.height; h >= 0 && blocks.length < 20; h--) {
      const e = chain.getEntryByHeight(h);
      if (e) blocks.push({ height: e.height, hash: e.hashHex, time: e.header.time, txCount: e.txCount, size: e.size });
    }
    const mined = await fillRecent();
    const minedIds = new Set(mined.map((r) => r.id));
    // A transaction mined a moment ago may still be listed by the mempool: it is shown once, mined.
    const pending: TxRow[] = mempool
      .list(5)
      .filter((e) => !minedIds.has(e.id))
      .map((e) => ({ id: e.id, type: typeName(e.tx.type), from: encodeAddress(e.tx.from, params.hrp), height: null }));
    const txs = [...pending, ...mined].slice(0, RECENT_TXS);
    html(ctx, renderHome({ info, height: tip.height, difficulty: difficultyOfBits(tip.header.bits), hashrate: estimateHashrate(chain), mempool: mempool.count, blocks, txs }));
  });

  page('/explorer/search', async (ctx) => {
    const raw = typeof ctx.query.q === 'string' ? ctx.query.q.trim() : '';
    const q = raw.slice(0, 200);
    const go = (path: string) => {
      ctx.status = 302;
      ctx.redirect(path);
    };
    if (!q) return go('/explorer');
    if (/^\d{1,10}$/.test(q)) {
      const e = chain.getEntryByHeight(Number(q));
      return e ? go(`/explorer/block/${e.height}`) : notFound(ctx, q, `No block at height ${q}: the tip is at ${chain.tip.height}.`);
    }
    if (isHex(q, 32)) {
      const id = q.toLowerCase();
      if (chain.getEntryByHash(id)) return go(`/explorer/block/${id}`);
      if (mempool.has(id) || (await chain.getTx(id))) return go(`/explorer/tx/${id}`);
      return notFound(ctx, q, `No block and no transaction ${id} on this node.`);
    }
    if (tryDecodeAddress(q, params.hrp) !== undefined) return go(`/explorer/address/${encodeURIComponent(q)}`);
    const e = eco();
    const upper = String(q).toUpperCase();
    const pair = upper.split(/\s*[-/]\s*/);
    if (e && pair.length === 2 && pair.every((s) => SYMBOL_RE.test(s) || s === 'NATIVE')) {
      for (const id of [`${pair[0]}-${pair[1]}`, `${pair[1]}-${pair[0]}`]) if (await e.getPoolRecord(id)) return go(`/explorer/pool/${encodeURIComponent(id)}`);
      return notFound(ctx, q, `No pool of ${pair[0]} and ${pair[1]}.`);
    }
    const sym = upper;
    if (e && SYMBOL_RE.test(sym) && (await e.getTokenRecord(sym))) return go(`/explorer/token/${encodeURIComponent(sym)}`);
    notFound(ctx, q, `Nothing on this chain matches “${q}”.`);
  });

  page('/explorer/block/:id', async (ctx) => {
    const id: string = ctx.params.id;
    let entry: ChainEntry | undefined;
    if (/^\d{1,10}$/.test(id)) entry = chain.getEntryByHeight(Number(id));
    else if (isHex(id, 32)) entry = chain.getEntryByHash(id.toLowerCase());
    else return notFound(ctx, id, 'A block is named by its height or its 64-hex-character hash.', 400);
    const block = entry && (await chain.getBlock(entry.hashHex));
    if (!entry || !block) return notFound(ctx, id, `No block ${id} on this node.`);
    const header = blockHeaderJson(chain, entry, block);
    const dec = await decimalsMap();
    const shown = block.txs.slice(0, BLOCK_PAGE_TXS);
    const events = shown.some((t) => typeName(t.type) === 'swap') ? await eco()?.blockEvents(entry.height) : undefined;
    const mined = header.mainChain;
    const txs = await Promise.all(
      shown.map(async (tx, i) => {
        const bytes = encodeTx(tx);
        const j = await txJson(tx, bytes, dec);
        const x: TxExtras = {
          decimals: dec,
          mined,
          swaps: mined ? hopsOf(events?.swaps.filter((s) => s.txIndex === i) ?? []) : undefined,
          invoke: j.type === 'agent_invoke' ? await invokeState(String(j.txId), j.serviceId) : undefined,
        };
        return { id: String(j.txId), type: String(j.type), sentence: describeTx(j, x) };
      }),
    );
    const cb = block.coinbase;
    html(
      ctx,
      renderBlock({
        info,
        header,
        coinbase: { miner: encodeAddress(cb.miner, params.hrp), reward: formatAmount(cb.reward), fees: formatAmount(cb.fees), tag: Buffer.from(cb.tag).toString('latin1').replace(/[^\x20-\x7e]/g, '.') },
        txs: block.txs.length > shown.length ? [...txs, { id: '', type: '', sentence: `… and ${block.txs.length - shown.length} more (see <a href="/api/v1/block/${entry.hashHex}">the block as JSON</a>).` }] : txs,
      }),
    );
  });

  page('/explorer/tx/:id', async (ctx) => {
    const id = String(ctx.params.id).toLowerCase();
    if (!isHex(id, 32)) return notFound(ctx, id, 'A transaction id is 64 hex characters.', 400);
    const pending = mempool.get(id);
    const mined = pending ? undefined : await chain.getTx(id);
    if (!pending && !mined) return notFound(ctx, id, `Transaction ${id} is neither pending nor mined on this node.`);
    const tx = (pending ?? mined)!.tx;
    const dec = await decimalsMap();
    const j = await txJson(tx, (pending ?? mined)!.bytes, dec);
    const x: TxExtras = {
      decimals: dec,
      mined: mined !== undefined,
      swaps: mined && j.type === 'swap' ? hopsOf((await eco()?.blockEvents(mined.height, mined.index))?.swaps ?? []) : undefined,
      invoke: j.type === 'agent_invoke' ? await invokeState(id, j.serviceId) : undefined,
      invokeService: j.type === 'refund' || j.type === 'provider_payout' ? await serviceOfInvoke(j.invokeId) : undefined,
    };
    const status = mined
      ? { mined: true, height: mined.height, blockHash: mined.blockHash, index: mined.index, confirmations: Math.max(0, chain.tip.height - mined.height + 1), time: chain.getEntryByHash(mined.blockHash)?.header.time }
      : { mined: false, time: pending ? Math.floor(pending.addedAt / 1000) : undefined };
    html(ctx, renderTx({ info, json: j, sentence: describeTx(j, x), status }));
  });

  page('/explorer/address/:address', async (ctx) => {
    const address: string = ctx.params.address;
    const id = tryDecodeAddress(address, params.hrp);
    if (!id) return notFound(ctx, address, `${address} is not a ${params.network} address (${params.hrp}1…).`, 400);
    const e = eco();
    const before = typeof ctx.query.before === 'string' && /^\d{10}:\d{5}:\d+$/.test(ctx.query.before) ? ctx.query.before : undefined;
    const l = Number(ctx.query.limit);
    const limit = Number.isInteger(l) && l >= 1 && l <= 200 ? l : ACTIVITY_PAGE;
    const [acc, dec, econ, activity] = await Promise.all([chain.getAccount(id), decimalsMap(), e?.account(id), e?.history(id, { before, limit })]);
    const pools = new Map<string, { a: string; b: string }>();
    for (const p of econ?.lp ?? []) {
      const [a, b] = p.pool.split('-');
      pools.set(p.pool, { a, b });
    }
    const addr = (hex: unknown) => (typeof hex === 'string' && isHex(hex, 20) ? addrLink(encodeAddress(fromHex(hex), params.hrp)) : addrLink(hex));
    const u = (v: unknown, asset: unknown) => `<strong>${units(String(v ?? '0'), dec(String(asset)))}</strong> ${assetLink(asset)}`;
    const native = (v: unknown) => `<strong>${formatAmount(BigInt(String(v ?? '0')))}</strong> NATIVE`;
    const svc = (v: unknown) => {
      const name = m.payments?.serviceName(String(v));
      return name ? `${esc(name)} (<code>${esc(v)}</code>)` : `<code>${esc(v)}</code>`;
    };
    const text = (r: Record<string, unknown>): string => {
      switch (r.kind) {
        case 'reward':
          return `mined the block: reward ${native(r.reward)} + ${native(r.fees)} fees`;
        case 'invoke_paid':
          return `paid ${native(r.amount)} for a call of ${svc(r.serviceId)} to ${addr(r.counterparty)}`;
        case 'invoke_received':
          return `was paid ${native(r.amount)} for a call of ${svc(r.serviceId)} by ${addr(r.counterparty)}`;
        case 'refund_sent':
          return `refunded ${native(r.amount)} to ${addr(r.counterparty)} for the paid call ${txLink(r.invokeId)}`;
        case 'refund_received':
          return `was refunded ${native(r.amount)} by ${addr(r.counterparty)} for the paid call ${txLink(r.invokeId)}`;
        case 'payout_sent':
          return `paid out ${native(r.amount)} to the provider ${addr(r.counterparty)} for the call ${txLink(r.invokeId)}`;
        case 'payout_received':
          return `received a provider payout of ${native(r.amount)} from ${addr(r.counterparty)} for the call ${txLink(r.invokeId)}`;
        case 'transfer_in':
          return `received ${u(r.amount, r.asset)} from ${addr(r.counterparty)}`;
        case 'transfer_out':
          return `sent ${u(r.amount, r.asset)} to ${addr(r.counterparty)}`;
        case 'swap':
          return `swapped ${u(r.amountIn, r.assetIn)} for ${u(r.amountOut, r.assetOut)} in ${poolLink(r.pool)}`;
        case 'liquidity_add':
        case 'liquidity_remove': {
          const [a, b] = String(r.pool).split('-');
          return `${r.kind === 'liquidity_add' ? 'added' : 'removed'} ${u(r.amountA, a)} and ${u(r.amountB, b)} ${r.kind === 'liquidity_add' ? 'to' : 'from'} ${poolLink(r.pool)}`;
        }
        case 'stake':
          return `staked ${u(r.amount, 'NATIVE')} until block ${Number(r.unlockHeight)}`;
        case 'unstake':
          return `unstaked ${u(r.amount, 'NATIVE')} with a reward of ${u(r.reward, 'NATIVE')}`;
        default:
          if (String(r.kind).startsWith('token_')) return `${String(r.kind).slice(6)} ${u(r.amount, r.symbol)}`;
          if (String(r.kind).startsWith('bridge_')) return `bridge ${String(r.kind).slice(7)} on ${String(r.network)}: ${u(r.amount, 'NATIVE')}`;
          return String(r.kind);
      }
    };
    html(
      ctx,
      renderAccount({
        info,
        address,
        balance: formatAmount(acc.balance),
        nonce: Number(acc.nonce),
        pendingNonce: Number(mempool.pendingNonce(id, acc.nonce)),
        tokens: (econ?.tokens ?? []).map((t) => ({ symbol: t.symbol, balance: units(t.balance, t.decimals) })),
        lp: (econ?.lp ?? []).map((p) => {
          const { a, b } = pools.get(p.pool)!;
          return { ...p, a, b, amountA: units(p.amountA, dec(a)), amountB: units(p.amountB, dec(b)) };
        }),
        stakes: (econ?.stakes ?? []).map((s) => ({ ...s, amount: formatAmount(BigInt(s.amount)), accruedReward: formatAmount(BigInt(s.accruedReward)) })),
        activity: (activity ?? []).map((r) => ({ height: Number(r.height), time: Number(r.time), tx: String(r.tx ?? ''), text: text(r) })),
        pending: before ? undefined : pendingOf(id),
        older: activity && activity.length === limit ? `/explorer/address/${encodeURIComponent(address)}?before=${String(activity.at(-1)!.cursor)}${limit === ACTIVITY_PAGE ? '' : `&limit=${limit}`}` : undefined,
        paged: before !== undefined,
      }),
    );
  });

  page('/explorer/token/:symbol', async (ctx) => {
    const sym = String(ctx.params.symbol).toUpperCase();
    const e = eco();
    const token = SYMBOL_RE.test(sym) ? await e?.getToken(sym) : undefined;
    if (!e || !token) return notFound(ctx, sym, `No token ${sym} on this chain.`);
    const [holders, pools] = await Promise.all([e.topHolders(sym, 20), e.listPools({ asset: sym })]);
    html(ctx, renderToken({ info, token, holders, pools }));
  });

  page('/explorer/pool/:id', async (ctx) => {
    const id = String(ctx.params.id).toUpperCase().replace('/', '-');
    const e = eco();
    const pool = /^[A-Z0-9]{2,10}-[A-Z0-9]{2,10}$/.test(id) ? await e?.getPool(id) : undefined;
    if (!e || !pool) return notFound(ctx, id, `No pool ${id} on this chain.`);
    const [dec, volume, candles, swaps] = await Promise.all([decimalsMap(), e.volume24h(id), e.recentCandles(id, 48), e.swaps({ pool: id, limit: 20 })]);
    const da = dec(pool.a);
    const db = dec(pool.b);
    const scale = 10 ** da / 10 ** db;
    html(
      ctx,
      renderPool({
        info,
        pool,
        da,
        db,
        volume: { a: volume.a.toString(), b: volume.b.toString(), swaps: volume.swaps },
        candles: candles.map((c) => ({ t: c.t, o: c.o * scale, h: c.h * scale, l: c.l * scale, c: c.c * scale, n: c.n })),
        swaps: swaps.map((s) => ({ height: s.height, time: s.time, tx: s.tx, sender: s.sender, text: `${addrLink(isHex(s.sender, 20) ? encodeAddress(fromHex(s.sender), params.hrp) : s.sender)} swapped <strong>${units(s.amountIn, dec(s.assetIn))}</strong> ${assetLink(s.assetIn)} for <strong>${units(s.amountOut, dec(s.assetOut))}</strong> ${assetLink(s.assetOut)}` })),
      }),
    );
  });

  page('/explorer/blocks', (ctx) => {
    const tip = chain.tip.height;
    const q = Number(ctx.query.before);
    const before = Number.isInteger(q) && q > 0 ? Math.min(q, tip + 1) : tip + 1;
    const l = Number(ctx.query.limit);
    const limit = Number.isInteger(l) && l >= 1 && l <= 100 ? l : BLOCKS_PER_PAGE;
    const blocks: BlockRow[] = [];
    for (let h = before - 1; h >= 0 && blocks.length < limit; h--) {
      const e = chain.getEntryByHeight(h);
      if (e) blocks.push({ height: e.height, hash: e.hashHex, time: e.header.time, txCount: e.txCount, size: e.size });
    }
    html(ctx, renderBlocks({ info, tip, blocks, limit }));
  });

  page('/explorer/mempool', (ctx) => {
    const stats = mempool.stats?.();
    const rows = mempool.list(MEMPOOL_PAGE).map((e) => ({
      id: e.id,
      type: typeName(e.tx.type),
      from: encodeAddress(e.tx.from, params.hrp),
      fee: formatAmount(e.tx.fee),
      size: e.size,
      feeRate: e.feeRate,
      since: Math.floor(e.addedAt / 1000),
    }));
    html(ctx, renderMempool({ info, count: mempool.count, bytes: mempool.bytes, queued: stats?.queued.count, rows }));
  });

  page('/explorer/tokens', async (ctx) => {
    const tokens = ((await eco()?.listTokens()) ?? []).sort((a, b) => b.holders - a.holders || (a.symbol < b.symbol ? -1 : 1));
    html(ctx, renderTokens({ info, tokens }));
  });

  page('/explorer/pools', async (ctx) => {
    const pools = ((await eco()?.listPools()) ?? []).sort((a, b) => b.tvlNative - a.tvlNative);
    html(ctx, renderPools({ info, pools }));
  });

  page('/explorer/swaps', async (ctx) => {
    const e = eco();
    const rawPool = typeof ctx.query.pool === 'string' ? ctx.query.pool.toUpperCase().replace('/', '-') : undefined;
    if (rawPool !== undefined && (!/^[A-Z0-9]{2,10}-[A-Z0-9]{2,10}$/.test(rawPool) || !(await e?.getPoolRecord(rawPool)))) return notFound(ctx, rawPool, `No pool ${rawPool} on this chain.`);
    const q = Number(ctx.query.before);
    const before = Number.isInteger(q) && q > 0 ? q : undefined;
    let swaps = (await e?.swaps({ pool: rawPool, before, limit: SWAPS_PAGE })) ?? [];
    let older: string | undefined;
    if (swaps.length === SWAPS_PAGE) {
      // The next page starts below the last height shown: a height cut in two moves whole to the next page.
      const last = swaps.at(-1)!.height;
      const whole = swaps.filter((s) => s.height !== last);
      if (whole.length > 0) swaps = whole;
      older = `/explorer/swaps?${rawPool ? `pool=${encodeURIComponent(rawPool)}&` : ''}before=${whole.length > 0 ? last + 1 : last}`;
    }
    const dec = await decimalsMap();
    const rows = swaps.map((s) => ({
      height: s.height,
      time: s.time,
      tx: s.tx,
      pool: s.pool,
      text: `${addrLink(isHex(s.sender, 20) ? encodeAddress(fromHex(s.sender), params.hrp) : s.sender)} swapped <strong>${units(s.amountIn, dec(s.assetIn))}</strong> ${assetLink(s.assetIn)} for <strong>${units(s.amountOut, dec(s.assetOut))}</strong> ${assetLink(s.assetOut)}`,
    }));
    html(ctx, renderSwaps({ info, pool: rawPool, swaps: rows, older, paged: before !== undefined }));
  });

  router.get('/explorer/events', async (ctx) => {
    if (streams.size >= MAX_STREAMS) {
      ctx.status = 503;
      ctx.body = { error: { code: 'too_many_streams', message: `at most ${MAX_STREAMS} live streams at once` } };
      return;
    }
    const stream = new PassThrough();
    const close = () => {
      streams.delete(stream);
      stream.end();
    };
    ctx.res.on('close', close);
    ctx.req.socket.setTimeout(0);
    ctx.req.socket.setNoDelay(true);
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('X-Accel-Buffering', 'no');
    ctx.type = 'text/event-stream';
    ctx.status = 200;
    ctx.body = stream;
    stream.write(`retry: 2000\nevent: hello\ndata: ${JSON.stringify({ height: chain.tip.height, hash: chain.tip.hashHex })}\n\n`);
    // `?since=<height>`: the page's newest block. Blocks connected between the page and this stream
    // are sent first (at most the list's length), oldest first, until the tip stops moving; only
    // then does the stream join the live ones, so no block is missed and none comes out of order.
    const since = Number(ctx.query.since);
    if (Number.isInteger(since) && since >= 0) {
      let sent = Math.max(since, chain.tip.height - 20);
      while (sent < chain.tip.height && !stream.writableEnded) {
        const e = chain.getEntryByHeight(sent + 1);
        const b = e && (await chain.getBlock(e.hashHex));
        if (!e || !b) break;
        stream.write(`event: block\ndata: ${JSON.stringify(blockEvent(e, b, b.txs.map((t) => toHex(computeTxId(encodeTx(t))))))}\n\n`);
        sent++;
      }
    }
    if (stream.writableEnded) return;
    streams.add(stream);
  });

  router.get('/explorer/assets/live.js', (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = EXPLORER_LIVE_JS;
  });

  return {
    router,
    clients: () => streams.size,
    stop() {
      clearInterval(heartbeat);
      chain.off('connect', onConnect);
      chain.off('disconnect', onDisconnect);
      for (const s of streams) s.end();
      streams.clear();
    },
  };
}
