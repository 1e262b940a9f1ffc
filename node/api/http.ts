/**
 * The HTTP API (koa + @koa/router): transaction submission and the chain explorer routes.
 *
 *   POST /api/v1/tx, POST /api/tx      {"tx": "<hex>"} → {"txId", "status": "accepted"}
 *   GET  /api/v1/tx/:id                pending or mined transaction, decoded
 *   GET  /api/v1/block/:heightOrHash   header, coinbase, tx ids
 *   GET  /api/v1/blocks?from=&limit=   block summaries, newest first, from height `from` down
 *   GET  /api/v1/account/:address      balance, nonce, pending nonce
 *   GET  /api/v1/mempool?limit=        size and the highest fee-rate entries
 *   GET  /api/v1/status                network, tip, difficulty, hashrate, mempool, mining
 *
 * Other subsystems' routers (x402, discovery, mining RPC, peers) are mounted after these, in the
 * JSON app of `app.ts` (error bodies, time limit, body parser), which this module re-exports:
 * it is the API's entry point.
 */
import type Koa from 'koa';
import { Router } from '@koa/router';
import { NodeError } from '../../consensus/errors.js';
import { encodeAddress, tryDecodeAddress } from '../../consensus/address.js';
import { coinbaseId, encodeCoinbase, type Block } from '../../consensus/block.js';
import { fromHex, isHex, toHex } from '../../consensus/hash.js';
import { difficultyOfBits } from '../../consensus/pow.js';
import { encodeTx, txId as computeTxId, type Tx } from '../../consensus/tx.js';
import { getTxType } from '../../consensus/txTypes/index.js';
import { payloadView } from '../../consensus/txTypes/amountUnits.js';
import type { ChainParams } from '../../consensus/params.js';
import { silentLogger, type ChainEntry, type ChainReader, type Logger, type MempoolReader } from '../../chain/types.js';
import { formatAmount } from '../../consensus/amount.js';
import { blockHeaderJson } from '../../chain/blockJson.js';
import { estimateHashrate } from '../../chain/hashrate.js';
import { accountEconomyFields } from './economyAccount.js';
import { createJsonApp, HttpErrorCode, HttpServer, type ErrorStatuses, type HttpOptions } from './app.js';

export { createJsonApp, createRouterServer, defaultHttpOptions, HttpErrorCode, HttpServer, httpStatusOf, type ErrorStatuses, type HttpOptions } from './app.js';

/** What the API needs to accept transactions (the mempool). */
export interface TxSubmitter {
  add(bytes: Uint8Array): Promise<{ id: string; status: 'accepted' }>;
}

/** Miner figures shown in `/api/v1/status`. */
export interface MinerStats {
  running: boolean;
  threads: number;
  /** Local hashes per second. */
  hashrate: number;
  blocksFound: number;
}

/** The parts the API reads (narrow interfaces, so tests and later subsystems can supply their own). */
export interface HttpModules {
  readonly chain: ChainReader;
  readonly mempool: MempoolReader & TxSubmitter;
  readonly params: ChainParams;
  readonly miner?: { stats(): MinerStats };
  readonly logger?: Logger;
  /**
   * Routers of other subsystems (x402, discovery, mining RPC, peers…), mounted after the chain
   * API behind the same error handling, body parsing and timeouts. Each subsystem owns its file.
   */
  readonly routers?: readonly Router[];
  /** Statuses of the error codes those routers throw (the payment codes…), besides the API's own. */
  readonly errorStatuses?: ErrorStatuses;
  /** Middleware run before everything else, error handling included (metrics see final statuses). */
  readonly middleware?: readonly Koa.Middleware[];
  /** Extra fields merged into `GET /api/v1/status` (peers, sync progress, stratum…), computed per request. */
  readonly statusExtras?: readonly (() => Record<string, unknown> | Promise<Record<string, unknown>>)[];
  /**
   * The node's own policy on submitted transactions, before the mempool: throws a NodeError to
   * refuse one (a payment to this node's payee that no settle could ever claim).
   */
  readonly admitTx?: (bytes: Uint8Array) => void;
}

/** Largest `limit` of list routes. */
export const MAX_LIST_LIMIT = 100;

function requireTxId(id: string): string {
  if (!isHex(id, 32)) throw new NodeError(HttpErrorCode.INVALID_TX_ID, 'a transaction id is 64 hex characters');
  return id.toLowerCase();
}

/** Parses an optional non-negative integer query parameter; `invalid_query` names it. */
function intQuery(value: unknown, name: string, min: number, max: number): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !/^\d{1,10}$/.test(value)) throw new NodeError(HttpErrorCode.INVALID_QUERY, `${name} must be an integer`, { param: name });
  const n = Number(value);
  if (n < min || n > max) throw new NodeError(HttpErrorCode.INVALID_QUERY, `${name} must be between ${min} and ${max}`, { param: name });
  return n;
}

/**
 * JSON view of a transaction: envelope, type name, addresses, each payload amount as a decimal at
 * its own asset's decimals (NATIVE 8, a token's from chain state) beside its base units. `fee` is
 * always the transaction's fee; a bridge record's own fee is `bridgeFee`.
 */
export async function txToJson(tx: Tx, bytes: Uint8Array, params: ChainParams, chain: Pick<ChainReader, 'economy'>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {
    txId: toHex(computeTxId(bytes)),
    type: 'unknown',
    typeId: tx.type,
    version: tx.version,
    chainId: tx.chainId,
    from: encodeAddress(tx.from, params.hrp),
    nonce: Number(tx.nonce),
    fee: formatAmount(tx.fee),
    feeBase: tx.fee.toString(),
    size: bytes.length,
    publicKeyIncluded: tx.publicKey !== undefined,
  };
  const view = await payloadView(tx, params, async (symbol) => (await chain.economy?.getTokenRecord(symbol))?.decimals);
  if (!view) {
    try {
      out.type = getTxType(tx.type).name;
    } catch {
      // unknown type: stays 'unknown'
    }
    out.payloadHex = toHex(tx.payload);
    return out;
  }
  out.type = view.type;
  // The envelope's fields stay what they are: a payload field of the same name (a bridge record's
  // `fee`, the bridge's charge) is shown as `bridgeFee` (other types: `payload` + the name), never as the transaction's fee.
  const prefix = view.type === 'bridge_record' ? 'bridge' : 'payload';
  for (const [k, v] of Object.entries(view.json)) out[k in out ? `${prefix}${k[0].toUpperCase()}${k.slice(1)}` : k] = v;
  return out;
}

function blockSummary(e: ChainEntry): Record<string, unknown> {
  return {
    height: e.height,
    hash: e.hashHex,
    time: e.header.time,
    bits: e.header.bits.toString(16).padStart(8, '0'),
    difficulty: difficultyOfBits(e.header.bits),
    txCount: e.txCount,
    size: e.size,
  };
}

/** Printable text of a coinbase tag (hex when it is not plain ASCII). */
function tagText(tag: Uint8Array): string {
  const s = Buffer.from(tag).toString('latin1');
  return /^[\x20-\x7e]*$/.test(s) ? s : `0x${toHex(tag)}`;
}


/** Builds the koa application of the API. */
export function createHttpApp(opts: HttpOptions, modules: HttpModules): Koa {
  const { chain, mempool, params } = modules;
  const log = modules.logger ?? silentLogger;
  const router = new Router();

  const confirmations = (height: number) => Math.max(0, chain.tip.height - height + 1);

  const submitTx = async (ctx: Koa.Context) => {
    const body = ctx.request.body as unknown;
    if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof (body as { tx?: unknown }).tx !== 'string') {
      throw new NodeError(HttpErrorCode.INVALID_REQUEST, 'body must be a JSON object {"tx": "<hex of the signed transaction>"}');
    }
    const hex = (body as { tx: string }).tx;
    let bytes: Uint8Array | undefined;
    try {
      bytes = fromHex(hex); // one pass: decoding checks every character (no regex over ~10 kB first)
    } catch {
      // refused below
    }
    if (!bytes?.length) throw new NodeError(HttpErrorCode.INVALID_TX_HEX, 'tx must be a non-empty, even-length hex string');
    modules.admitTx?.(bytes);
    const result = await mempool.add(bytes);
    log.info({ txId: result.id }, 'tx accepted');
    // queued: kept beyond a nonce gap, neither relayed nor mined until the missing nonces come (docs/operators-guide.md#mempool-policy).
    ctx.body = { txId: result.id, status: result.status, ...('queued' in result && result.queued ? { queued: true } : {}) };
  };
  router.post('/api/v1/tx', submitTx);
  router.post('/api/tx', submitTx);

  router.get('/api/v1/tx/:id', async (ctx) => {
    const id = requireTxId(ctx.params.id);
    const pending = mempool.get(id);
    if (pending) {
      ctx.body = { ...(await txToJson(pending.tx, pending.bytes, params, chain)), status: 'pending', height: null, blockHash: null, confirmations: 0, addedAt: pending.addedAt };
      return;
    }
    const mined = await chain.getTx(id);
    if (!mined) throw new NodeError(HttpErrorCode.TX_NOT_FOUND, `transaction ${id} is neither pending nor mined`);
    ctx.body = {
      ...(await txToJson(mined.tx, mined.bytes, params, chain)),
      status: 'mined',
      height: mined.height,
      blockHash: mined.blockHash,
      index: mined.index,
      confirmations: confirmations(mined.height),
    };
  });

  router.get('/api/v1/block/:id', async (ctx) => {
    const id: string = ctx.params.id;
    let entry: ChainEntry | undefined;
    if (/^\d{1,10}$/.test(id)) entry = chain.getEntryByHeight(Number(id));
    else if (isHex(id, 32)) entry = chain.getEntryByHash(id.toLowerCase());
    else throw new NodeError(HttpErrorCode.INVALID_BLOCK_ID, 'a block is named by its height or its 64-hex-character hash');
    const block: Block | undefined = entry && (await chain.getBlock(entry.hashHex));
    if (!entry || !block) throw new NodeError(HttpErrorCode.BLOCK_NOT_FOUND, `no block ${id}`);
    const cb = block.coinbase;
    ctx.body = {
      ...blockHeaderJson(chain, entry, block),
      coinbase: {
        id: toHex(coinbaseId(encodeCoinbase(cb))),
        miner: encodeAddress(cb.miner, params.hrp),
        reward: formatAmount(cb.reward),
        rewardBase: cb.reward.toString(),
        fees: formatAmount(cb.fees),
        feesBase: cb.fees.toString(),
        extranonce: toHex(cb.extranonce),
        tag: tagText(cb.tag),
      },
      txIds: block.txs.map((t) => toHex(computeTxId(encodeTx(t)))),
    };
  });

  router.get('/api/v1/blocks', (ctx) => {
    const tipHeight = chain.tip.height;
    const from = Math.min(intQuery(ctx.query.from, 'from', 0, 0xffffffff) ?? tipHeight, tipHeight);
    const limit = intQuery(ctx.query.limit, 'limit', 1, MAX_LIST_LIMIT) ?? 20;
    const blocks: Record<string, unknown>[] = [];
    for (let h = from; h >= 0 && blocks.length < limit; h--) {
      const e = chain.getEntryByHeight(h);
      if (e) blocks.push(blockSummary(e));
    }
    ctx.body = { tip: tipHeight, from, limit, blocks };
  });

  router.get('/api/v1/account/:address', async (ctx) => {
    const address: string = ctx.params.address;
    const id = tryDecodeAddress(address, params.hrp);
    if (!id) throw new NodeError(HttpErrorCode.INVALID_ADDRESS, `${address} is not a ${params.network} address (${params.hrp}1…)`);
    const acc = await chain.getAccount(id);
    ctx.body = {
      address,
      balance: formatAmount(acc.balance),
      balanceBase: acc.balance.toString(),
      nonce: Number(acc.nonce),
      pendingNonce: Number(mempool.pendingNonce(id, acc.nonce)),
      publicKeyKnown: acc.publicKey !== undefined,
      ...(chain.economy ? await accountEconomyFields(chain.economy, id) : {}),
    };
  });

  router.get('/api/v1/mempool', (ctx) => {
    const limit = intQuery(ctx.query.limit, 'limit', 1, MAX_LIST_LIMIT) ?? 20;
    ctx.body = {
      count: mempool.count,
      bytes: mempool.bytes,
      entries: mempool.list(limit).map((e) => ({
        txId: e.id,
        type: safeTypeName(e.tx.type),
        from: encodeAddress(e.tx.from, params.hrp),
        nonce: Number(e.tx.nonce),
        fee: formatAmount(e.tx.fee),
        feeBase: e.tx.fee.toString(),
        feeRate: e.feeRate,
        size: e.size,
        addedAt: e.addedAt,
      })),
    };
  });

  router.get('/api/v1/status', async (ctx) => {
    const tip = chain.tip;
    const supply = await chain.getSupply();
    ctx.body = {
      network: params.network,
      chainId: params.chainId,
      hrp: params.hrp,
      height: tip.height,
      tip: tip.hashHex,
      time: tip.header.time,
      medianTime: chain.medianTimePast(tip),
      bits: tip.header.bits.toString(16).padStart(8, '0'),
      difficulty: difficultyOfBits(tip.header.bits),
      chainWork: tip.chainWork.toString(16),
      hashrate: estimateHashrate(chain),
      minFeeRate: params.minFeeRate.toString(),
      supply: { minted: formatAmount(supply.minted), mintedBase: supply.minted.toString(), burned: formatAmount(supply.burned), burnedBase: supply.burned.toString() },
      mempool: mempool.stats?.() ?? { count: mempool.count, bytes: mempool.bytes },
      peers: 0,
      syncing: false,
      version: opts.version,
      peerId: null,
      listen: [],
      mining: modules.miner ? modules.miner.stats() : { running: false, threads: 0, hashrate: 0, blocksFound: 0 },
    };
    for (const extra of modules.statusExtras ?? []) Object.assign(ctx.body as Record<string, unknown>, await extra());
  });

  return createJsonApp(opts, log, [router, ...(modules.routers ?? [])], modules.errorStatuses, modules.middleware);
}

function safeTypeName(type: number): string {
  try {
    return getTxType(type).name;
  } catch {
    return 'unknown';
  }
}

/** Creates the HTTP API server (call `start()`). */
export function createHttpServer(opts: HttpOptions, modules: HttpModules): HttpServer {
  return new HttpServer(opts, createHttpApp(opts, modules));
}
