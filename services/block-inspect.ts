/** native-block-inspect: facts of a block by height or hash: header, coinbase, fees burned and paid, transaction mix. */
import { encodeAddress } from '../consensus/address.js';
import { toHex } from '../consensus/hash.js';
import { encodeTx, txId } from '../consensus/tx.js';
import { blockHeaderJson } from '../chain/blockJson.js';
import type { ChainEntry } from '../chain/types.js';
import { blockFacts, mixJson, txSize } from './chainStats.js';
import { defineService } from './define.js';
import { chainHealth } from './health.js';
import { amountFields, isoOfSeconds, txTypeName } from './format.js';
import { servable, Unservable } from './market/economy.js';
import type { ServiceContext } from './types.js';

/** Transactions listed one by one (the mix covers all of them). */
const MAX_LISTED_TXS = 100;

/** The block by height (best chain) or hash; else unservable (400 before any quote; refunded when a reorganisation took it between quote and settle). */
const target = servable(async (ctx: ServiceContext, input: unknown) => {
  const id = String(input);
  const entry: ChainEntry | undefined = /^\d{1,10}$/.test(id) ? ctx.chain.getEntryByHeight(Number(id)) : ctx.chain.getEntryByHash(id.toLowerCase());
  const block = entry && (await ctx.chain.getBlock(entry.hashHex));
  if (entry && block) return { entry, block };
  return new Unservable('block_not_found', /^\d{1,10}$/.test(id) ? `no block at height ${id} on this node (tip ${ctx.chain.tip.height})` : `no block ${id.toLowerCase()} on this node`);
});

async function run(ctx: ServiceContext, input: unknown) {
  const { chain, params } = ctx;
  const id = String(input);
  const { entry, block } = await target.resolved(ctx, input);
  const facts = blockFacts(entry, block, params);
  const cb = block.coinbase;
  return {
    query: id,
    found: true,
    ...blockHeaderJson(chain, entry, block),
    timeIso: isoOfSeconds(block.header.time),
    coinbase: {
      miner: encodeAddress(cb.miner, params.hrp),
      ...amountFields('subsidy', cb.reward),
      ...amountFields('minerFees', cb.fees),
      ...amountFields('minerTotal', cb.reward + cb.fees),
    },
    fees: {
      ...amountFields('total', facts.fees),
      ...amountFields('burned', facts.burned),
      ...amountFields('toMiner', facts.minerFees),
      burnShareBps: params.burnShareBps,
      averageFeeRate: facts.txBytes ? Number(facts.fees) / facts.txBytes : 0,
    },
    supplyEffect: {
      ...amountFields('minted', facts.subsidy),
      ...amountFields('burned', facts.burned),
      ...amountFields('net', facts.subsidy - facts.burned),
    },
    txMix: mixJson(facts.mix, (b) => amountFields('fees', b)),
    transactions: block.txs.slice(0, MAX_LISTED_TXS).map((tx) => ({
      txId: toHex(txId(encodeTx(tx))),
      type: txTypeName(tx.type),
      from: encodeAddress(tx.from, params.hrp),
      ...amountFields('fee', tx.fee),
      size: txSize(tx),
    })),
    transactionsListed: Math.min(block.txs.length, MAX_LISTED_TXS),
  };
}

/** native-block-inspect. */
export const blockInspect = defineService({
  id: 'native-block-inspect',
  name: 'Block Inspector',
  category: 'explorer',
  priceBase: 600_000n,
  description: 'block facts, fees burned, tx mix',
  tags: ['block', 'explorer', 'fees', 'burn', 'transactions', 'miner', 'height', 'hash'],
  requestFormat: 'block height (decimal) or block hash (64 hex characters)',
  requestRequired: true,
  inputSchema: {
    type: 'string',
    maxLength: 64,
    pattern: '^([0-9]{1,10}|[0-9a-fA-F]{64})$',
    description: 'Height of a block of this node\'s best chain (e.g. 1024) or hash of a block it holds (64 hex characters).',
  },
  precheck: target.precheck,
  run,
  health: chainHealth,
});
