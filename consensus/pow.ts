/**
 * Proof of work: Bitcoin's compact `bits` encoding, the hash-versus-target check and chain work.
 *
 * Pure functions over bigint, no IO. Semantics follow Bitcoin Core's `arith_uint256::SetCompact` /
 * `GetCompact`, `CheckProofOfWork` and `GetBlockProof` exactly: the header hash (SHA-256d of the
 * 80-byte header) is read as a little-endian 256-bit integer and must not exceed the target.
 */
import { BlockErrorCode, CodecErrorCode, NodeError } from './errors.js';

const MAX_UINT256 = (1n << 256n) - 1n;

/** The difficulty-1 target, `0xFFFF · 2^208` (Bitcoin's compact 0x1d00ffff); the reference for `difficultyOfBits`. */
export const DIFF1_TARGET = 0xffffn << 208n;

/** A compact `bits` value decoded as Bitcoin's SetCompact does: the 256-bit magnitude plus its sign and overflow flags. */
export interface DecodedCompact {
  /** The unsigned magnitude, reduced mod 2^256 as arith_uint256 would hold it. */
  readonly target: bigint;
  /** The sign bit (0x00800000) was set on a non-zero mantissa. */
  readonly negative: boolean;
  /** The encoded value does not fit in 256 bits. */
  readonly overflow: boolean;
}

/** Decodes compact `bits` exactly like Bitcoin's `arith_uint256::SetCompact`, reporting the negative and overflow flags. */
export function decodeCompact(bits: number): DecodedCompact {
  const compact = bits >>> 0;
  const size = compact >>> 24;
  let word = compact & 0x007fffff;
  let target: bigint;
  if (size <= 3) {
    // SetCompact shifts nWord in place, so the flags below see the shifted mantissa (0x02800056 is not negative).
    word >>>= 8 * (3 - size);
    target = BigInt(word);
  } else {
    // arith_uint256 silently drops bits shifted past 2^256; the overflow flag reports it.
    target = (BigInt(word) << BigInt(8 * (size - 3))) & MAX_UINT256;
  }
  const negative = word !== 0 && (compact & 0x00800000) !== 0;
  const overflow = word !== 0 && (size > 34 || (word > 0xff && size > 33) || (word > 0xffff && size > 32));
  return { target, negative, overflow };
}

/** Target encoded by compact `bits`; 0n when Bitcoin would reject the encoding (negative or overflowing), since 0 is never a valid target. */
export function bitsToTarget(bits: number): bigint {
  const { target, negative, overflow } = decodeCompact(bits);
  return negative || overflow ? 0n : target;
}

/** Canonical compact encoding of a target in [0, 2^256), exactly Bitcoin's `GetCompact` (the sign bit only when `negative` and the mantissa is non-zero). */
export function targetToBits(target: bigint, negative = false): number {
  if (target < 0n || target > MAX_UINT256) {
    throw new NodeError(BlockErrorCode.BAD_BITS, 'target outside [0, 2^256)', { target: target.toString(16) });
  }
  let size = byteLength(target);
  let compact: number;
  if (size <= 3) {
    compact = Number(target << BigInt(8 * (3 - size)));
  } else {
    compact = Number((target >> BigInt(8 * (size - 3))) & 0xffffffn);
  }
  // The mantissa's top bit is the sign bit: move it into the next byte instead.
  if (compact & 0x00800000) {
    compact >>>= 8;
    size += 1;
  }
  compact = (compact | (size << 24)) >>> 0;
  if (negative && (compact & 0x007fffff) !== 0) compact = (compact | 0x00800000) >>> 0;
  return compact;
}

/** The 32-byte hash read as a little-endian unsigned integer (byte 0 least significant), as Bitcoin compares hashes to targets. */
export function hashToBigInt(hash: Uint8Array): bigint {
  if (hash.length !== 32) {
    throw new NodeError(CodecErrorCode.BAD_VALUE, `hash must be 32 bytes, got ${hash.length}`, { length: hash.length });
  }
  let value = 0n;
  for (let i = 31; i >= 0; i--) value = (value << 8n) | BigInt(hash[i]);
  return value;
}

/** Bitcoin's CheckProofOfWork: false when `bits` is zero, negative, overflowing or above `powLimit`, or when the little-endian hash exceeds the target. */
export function checkProofOfWork(hash: Uint8Array, bits: number, powLimit: bigint): boolean {
  const { target, negative, overflow } = decodeCompact(bits);
  if (negative || overflow || target === 0n || target > powLimit) return false;
  return hashToBigInt(hash) <= target;
}

/** Expected number of hashes to meet `bits`, `floor(2^256 / (target + 1))` as Bitcoin's GetBlockProof; 0n for zero, negative or overflowing bits. */
export function blockWork(bits: number): bigint {
  const { target, negative, overflow } = decodeCompact(bits);
  if (negative || overflow || target === 0n) return 0n;
  return (1n << 256n) / (target + 1n);
}

/** Display difficulty `DIFF1_TARGET / target` as a float (not consensus); 0 for invalid bits. */
export function difficultyOfBits(bits: number): number {
  const target = bitsToTarget(bits);
  if (target === 0n) return 0;
  // Scaling by 2^128 keeps a full 53-bit mantissa from regtest-easy (target ~2^255) to target 1 (~2^352 before rescaling).
  return Number((DIFF1_TARGET << 128n) / target) / 2 ** 128;
}

/** Number of bytes needed to hold `value` (0 for 0), as arith_uint256's `(bits() + 7) / 8`. */
function byteLength(value: bigint): number {
  return value === 0n ? 0 : Math.ceil(value.toString(2).length / 8);
}
