/**
 * LevelDB key layout of the chain store. One database, string keys, binary values; every
 * connected or disconnected block is one atomic batch, so a crash leaves the last committed tip.
 *
 *   m:tip              → 32-byte hash of the best block whose state is committed
 *   m:schema           → u32 schema version
 *   m:index:<name>     → u32 version of a read index rebuilt from the stored blocks when it is behind
 *                        (chain/indexBackfill.ts; `payments`: the `ey:` rows below)
 *   m:index:<name>:next → u32 next height that rebuild writes (present only while one is under way)
 *   h:<hash hex>       → entry: header(80) ‖ u32 height ‖ varint chainWork ‖ varint txCount ‖ varint size
 *                        (every block with a stored body, best chain and side branches)
 *   f:<hash hex>       → where the block's body is in the block files: u32 file ‖ u32 offset ‖ u32 length
 *                        (chain/blockFiles.ts: `blocks/blk<file, 5 digits>.dat` in the chain directory)
 *   b:<hash hex>       → full block bytes, for blocks stored before the block files (read, never written)
 *   u:<hash hex>       → undo record of a block on the best chain (consensus/state encodeChanges)
 *   n:<height, 10 digits> → hash of the best-chain block at that height
 *   t:<txid hex>       → location of a best-chain transaction: blockHash(32) ‖ u32 height ‖ varint index
 *                        ‖ varint offset ‖ varint length (its bytes inside b:<blockHash>)
 *   s:<state key>      → consensus state at m:tip (consensus/state.ts: `a<id>` accounts, `supply`,
 *                        `i<txid>` invokes; consensus/economyState.ts: `T<SYM>` tokens, `B<SYM>:<id>` token
 *                        balances, `P<A>-<B>` pools, `L<A>-<B>:<id>` LP shares, `K<txid>` stakes, `Estake`
 *                        staking totals, `R<net>` bridge totals, `r<net>:<ref>` recorded bridge refs;
 *                        consensus/registryState.ts: `A<id>` agents, `N<name>` agent names, `S<service id>`
 *                        provider services, `M<id>` address labels, `O<invoke id>` provider payouts — scanned
 *                        by prefix with `scanState`). State key prefixes are one case-sensitive character and
 *                        must stay distinct: a i s(upply) T B P L K E R r (ledger/economy), A N S M O (registry).
 *   v:<hash hex>       → undo record of a best-chain block's index writes (raw keys, encodeChanges)
 *   Economy indexes (chain/economyIndex.ts, same batch as the block; values JSON; heights 10 digits,
 *   tx indexes 5 digits, `n` = event number within the tx; <id> = 40 hex account id):
 *   eh:<SYM>:<2^64-1-balance, 20 digits>:<id> → (empty) holders of a token, largest balance first
 *   eH:<SYM>           → {n, sq}: holders counted and Σ balance² (the HHI in one read) since the index
 *                        has existed; n = the token's holders exactly when it covers every holder
 *   ea:<id>:T:<SYM> | ea:<id>:L:<pool> | ea:<id>:K:<stake txid> → (empty) an account's tokens, LP
 *                        positions and open stakes
 *   ep:<asset>:<pool>  → (empty) pools holding an asset
 *   es:<pool>:<height>:<tx>:<n> → swap (amounts, fee, reserves after, price b/a), per pool
 *   eS:<height>:<tx>:<n> → the same swap, all pools (latest swaps)
 *   ec:<pool>:<hour start, 10 digits> → hourly candle {t,o,h,l,c,va,vb,n}
 *   et:<height>:<tx>:<n> → transfer of NATIVE or a token {asset, from, to, amount}
 *   eb:<net index>:<height>:<tx> → bridge record {network, direction, amount, fee, ref, account}
 *   ex:<id>:<height>:<tx>:<n> → an account's activity (transfers in/out, swaps, liquidity, token
 *                        actions, stakes, bridge records)
 *   ey:<id>:<height>:<tx>:<n> → an account's payments: paid calls paid and received, refunds and provider
 *                        payouts sent and received, block rewards (tx 99999, after the block's transactions)
 *   x:…                → reserved for the x402 settlement ledger (x402/)
 */
import { Reader, Writer, decodeAll } from '../consensus/codec.js';
import { decodeHeader, encodeHeader, type BlockHeader } from '../consensus/block.js';

/** Schema version written in `m:schema`. */
export const SCHEMA_VERSION = 1;

/** Key builders, one per prefix. */
export const layout = {
  tip: 'm:tip',
  schema: 'm:schema',
  entry: (hashHex: string) => `h:${hashHex}`,
  entryPrefix: 'h:',
  block: (hashHex: string) => `b:${hashHex}`,
  blockFile: (hashHex: string) => `f:${hashHex}`,
  undo: (hashHex: string) => `u:${hashHex}`,
  height: (height: number) => `n:${height.toString().padStart(10, '0')}`,
  tx: (txIdHex: string) => `t:${txIdHex}`,
  state: (key: string) => `s:${key}`,
  indexUndo: (hashHex: string) => `v:${hashHex}`,
  indexVersion: (name: string) => `m:index:${name}`,
  indexNext: (name: string) => `m:index:${name}:next`,
} as const;

/** The stored part of a chain entry. */
export interface EntryRecord {
  readonly header: BlockHeader;
  readonly height: number;
  readonly chainWork: bigint;
  readonly txCount: number;
  readonly size: number;
}

/** Encodes an `h:` record. Chain work can outgrow 64 bits, so it is stored as big-endian bytes. */
export function encodeEntryRecord(e: EntryRecord): Uint8Array {
  let hex = e.chainWork.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  const work = Uint8Array.from(Buffer.from(hex === '00' ? '' : hex, 'hex'));
  return new Writer(128).raw(encodeHeader(e.header)).u32(e.height).bytes(work).varint(e.txCount).varint(e.size).finish();
}

/** Decodes an `h:` record. */
export function decodeEntryRecord(bytes: Uint8Array): EntryRecord {
  return decodeAll(bytes, (r: Reader) => {
    const header = decodeHeader(r.raw(80));
    const height = r.u32();
    const work = r.bytes(64, 'chain work');
    const chainWork = work.length ? BigInt(`0x${Buffer.from(work).toString('hex')}`) : 0n;
    return { header, height, chainWork, txCount: r.varnum(1_000_000, 'tx count'), size: r.varnum(1 << 30, 'size') };
  });
}

/** A `t:` record. */
export interface TxLocationRecord {
  readonly blockHash: Uint8Array;
  readonly height: number;
  readonly index: number;
  readonly offset: number;
  readonly length: number;
}

/** Encodes a `t:` record. */
export function encodeTxLocation(t: TxLocationRecord): Uint8Array {
  return new Writer(48).raw(t.blockHash).u32(t.height).varint(t.index).varint(t.offset).varint(t.length).finish();
}

/** Decodes a `t:` record. */
export function decodeTxLocation(bytes: Uint8Array): TxLocationRecord {
  return decodeAll(bytes, (r) => ({
    blockHash: r.raw(32).slice(),
    height: r.u32(),
    index: r.varnum(1_000_000, 'index'),
    offset: r.varnum(1 << 30, 'offset'),
    length: r.varnum(1 << 30, 'length'),
  }));
}
