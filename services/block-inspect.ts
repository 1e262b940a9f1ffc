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
import type { ServiceContext } from './types.js';

/** Transactions listed one by one (the mix covers all of them). */
const MAX_LISTED_TXS = 100;

async function run(ctx: ServiceContext, input: unknown) {
  const { chain, params } = ctx;
  const id = String(input);
  const entry: ChainEntry | undefined = /^\d{1,10}$/.test(id) ? chain.getEntryByHeight(Number(id)) : chain.getEntryByHash(id.toLowerCase());
  const block = entry && (await chain.getBlock(entry.hashHex));
  if (!entry || !block) return { query: id, found: false, tipHeight: chain.tip.height, note: 'no such block on this node' };
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
    description: 'Block height (e.g. 1024) or block hash (64 hex characters).',
  },
  run,
  health: chainHealth,
});
