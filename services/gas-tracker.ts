/**
 * native-gas-tracker: fee conditions of this chain: mempool pressure, average fee and fee rate
 * over the last 20 blocks, burn rate, congestion level and suggested fee rates.
 */
import { encodeTx, TX_VERSION, TxType } from '../consensus/tx.js';
import { transfer } from '../consensus/txTypes/transfer.js';
import { ED25519_SIGNATURE_SIZE, MLDSA_SIGNATURE_SIZE } from '../consensus/keys.js';
import type { ChainParams } from '../consensus/params.js';
import { recentBlocks } from './chainStats.js';
import { defineService } from './define.js';
import { chainHealth } from './health.js';
import { amountFields } from './format.js';
import { noInput } from './inputs.js';
import type { ServiceContext } from './types.js';

/** Blocks of the fee window (the spec's "last 20 blocks"). */
const FEE_WINDOW = 20;

/** Signed size of a plain transfer from an account whose key is already published (the common case). */
function transferSize(params: ChainParams): number {
  return encodeTx({
    version: TX_VERSION,
    chainId: params.chainId,
    type: TxType.transfer,
    from: new Uint8Array(20),
    nonce: 1n,
    fee: 10_000n,
    payload: transfer.encodePayload({ to: new Uint8Array(20), amount: 100_000_000n }),
    signature: { mldsa: new Uint8Array(MLDSA_SIGNATURE_SIZE), ed25519: new Uint8Array(ED25519_SIGNATURE_SIZE) },
  }).length;
}

/** Congestion from pending bytes (in blocks' worth) and recent block fullness. */
function congestion(pendingBlocks: number, fullness: number): 'low' | 'moderate' | 'high' | 'severe' {
  if (pendingBlocks >= 3 || fullness >= 0.95) return 'severe';
  if (pendingBlocks >= 1 || fullness >= 0.75) return 'high';
  if (pendingBlocks >= 0.25 || fullness >= 0.4) return 'moderate';
  return 'low';
}

function ceilRate(x: number): bigint {
  return BigInt(Math.ceil(x));
}

async function run(ctx: ServiceContext) {
  const { chain, mempool, params } = ctx;
  const blocks = await recentBlocks(chain, FEE_WINDOW, params);
  const counted = blocks.filter((b) => b.entry.height > 0);
  let fees = 0n;
  let burned = 0n;
  let txs = 0;
  let txBytes = 0;
  let blockBytes = 0;
  for (const b of counted) {
    fees += b.fees;
    burned += b.burned;
    txs += b.block.txs.length;
    txBytes += b.txBytes;
    blockBytes += b.entry.size;
  }
  const newest = counted[0];
  const oldest = counted[counted.length - 1];
  const parentOfOldest = oldest ? chain.getEntryByHeight(oldest.entry.height - 1) : undefined;
  const spanSeconds = newest && parentOfOldest ? Math.max(1, newest.entry.header.time - parentOfOldest.header.time) : 0;

  const pending = mempool.list();
  const pendingRates = pending.map((e) => e.feeRate).sort((a, b) => a - b);
  const median = pendingRates.length ? pendingRates[Math.floor(pendingRates.length / 2)] : 0;
  // Fee rate of the last entry that still fits in the next block (entries are highest first).
  let fill = 0;
  let nextBlockRate = 0;
  for (const e of pending) {
    if (fill + e.size > params.limits.maxBlockBytes) break;
    fill += e.size;
    nextBlockRate = e.feeRate;
  }
  const pendingBlocks = mempool.bytes / params.limits.maxBlockBytes;
  const fullness = counted.length ? blockBytes / counted.length / params.limits.maxBlockBytes : 0;
  const level = congestion(pendingBlocks, fullness);
  const min = params.minFeeRate;
  const max = (a: bigint, b: bigint) => (a > b ? a : b);
  const economy = min;
  const standard = max(min, level === 'low' ? min : ceilRate(median));
  const fast = max(standard, level === 'low' || level === 'moderate' ? standard : ceilRate(nextBlockRate) + 1n);
  const size = transferSize(params);

  return {
    network: params.network,
    height: chain.tip.height,
    window: {
      blocks: counted.length,
      fromHeight: oldest?.entry.height ?? null,
      toHeight: newest?.entry.height ?? null,
      seconds: spanSeconds,
    },
    fees: {
      ...amountFields('total', fees),
      transactions: txs,
      ...amountFields('averagePerTx', txs ? fees / BigInt(txs) : 0n),
      ...amountFields('averagePerBlock', counted.length ? fees / BigInt(counted.length) : 0n),
      averageFeeRate: txBytes ? Number(fees) / txBytes : 0,
      feeRateUnit: 'base units per signed byte',
      minFeeRate: min.toString(),
    },
    burn: {
      burnShareBps: params.burnShareBps,
      ...amountFields('burnedInWindow', burned),
      ...amountFields('perBlock', counted.length ? burned / BigInt(counted.length) : 0n),
      ...amountFields('perHour', spanSeconds ? (burned * 3600n) / BigInt(spanSeconds) : 0n),
    },
    mempool: {
      count: mempool.count,
      bytes: mempool.bytes,
      pressure: pendingBlocks,
      pressureUnit: 'pending bytes in blocks of maxBlockBytes',
      medianFeeRate: median,
      topFeeRate: pending[0]?.feeRate ?? 0,
    },
    blockFullness: fullness,
    congestion: level,
    suggestedFeeRate: { economy: economy.toString(), standard: standard.toString(), fast: fast.toString() },
    standardTransfer: {
      sizeBytes: size,
      note: 'transfer from an account whose public key is already on chain (a first transaction carries 2624 more bytes)',
      ...amountFields('economyFee', economy * BigInt(size)),
      ...amountFields('standardFee', standard * BigInt(size)),
      ...amountFields('fastFee', fast * BigInt(size)),
    },
  };
}

/** native-gas-tracker. */
export const gasTracker = defineService({
  id: 'native-gas-tracker',
  name: 'Gas Tracker',
  category: 'oracle',
  priceBase: 600_000n,
  description: 'mempool pressure, average fees over last 20 blocks, burn rate, congestion level',
  tags: ['gas', 'fees', 'fee-rate', 'mempool', 'congestion', 'burn', 'oracle'],
  requestFormat: '',
  requestRequired: false,
  inputSchema: noInput(),
  run,
  health: chainHealth,
});
