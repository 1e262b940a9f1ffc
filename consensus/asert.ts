/**
 * ASERT difficulty adjustment (aserti3-2d), integer-exact port of Bitcoin ABC / BCHN `src/pow/aserti32d.cpp`.
 *
 *   next = anchorTarget · 2^((t − t_anchorParent − T·(h − h_anchor + 1)) / halfLife)
 *
 * evaluated in 16-bit fixed point with the cubic approximation of 2^x on [0, 1), then clamped to
 * [1, powLimit]. All arithmetic is bigint: `/` truncates toward zero like C++ int64 division and `>>` is
 * arithmetic (floor), so every intermediate equals the C++ one wherever the C++ asserts hold. Pure: time
 * and parameters come in as arguments.
 */
import { BlockErrorCode, NodeError, ValidationError } from './errors.js';
import { decodeCompact, targetToBits } from './pow.js';

/** Codes for ASERT parameters that cannot be used (a configuration error, not a peer's fault). */
export const AsertErrorCode = {
  BAD_PARAMS: 'asert_bad_params',
} as const;
/** One of the AsertErrorCode values. */
export type AsertErrorCode = (typeof AsertErrorCode)[keyof typeof AsertErrorCode];

/** The block all ASERT scheduling is measured from: its height, its compact target and its parent's timestamp (its own when it is genesis). */
export interface AsertAnchor {
  /** Height of the anchor block. */
  readonly height: number;
  /** Compact target (`bits`) of the anchor block; must decode to a valid target in (0, powLimit]. */
  readonly bits: number;
  /** Timestamp in seconds of the anchor's parent; for a genesis anchor, the genesis block's own timestamp. */
  readonly parentTime: number;
}

/** Chain parameters ASERT depends on. */
export interface AsertParams {
  /** Ideal seconds between blocks (T); 3 on our chain, 600 on Bitcoin Cash. */
  readonly targetSpacing: number;
  /** Seconds ahead of/behind schedule that halve/double the target; about 600 on our chain, 172800 on Bitcoin Cash. */
  readonly halfLife: number;
  /** Easiest allowed target; results are clamped to it. */
  readonly powLimit: bigint;
}

/** Anchor for a chain whose ASERT schedule starts at genesis: genesis has no parent, so its own time is used (as aserti32d.cpp does). */
export function createAsertAnchorFromGenesis(genesis: { readonly bits: number; readonly time: number }): AsertAnchor {
  return { height: 0, bits: genesis.bits, parentTime: genesis.time };
}

/** aserti32d.cpp's CalculateASERT: next target in [1, powLimit] from the anchor target, `timeDiff` = prev time − anchor parent time (s) and `heightDiff` = prev height − anchor height (≥ 0). */
export function calculateAsert(refTarget: bigint, timeDiff: bigint, heightDiff: bigint, params: AsertParams): bigint {
  const { spacing, halfLife, powLimit } = checkParams(params);
  if (refTarget <= 0n || refTarget > powLimit) {
    throw new ValidationError(BlockErrorCode.BAD_BITS, 'ASERT reference target must be in (0, powLimit]', {
      payload: { refTarget: refTarget.toString(16) },
    });
  }
  if (heightDiff < 0n) {
    throw new ValidationError(BlockErrorCode.BAD_PREV, 'ASERT previous block is below the anchor', {
      payload: { heightDiff: heightDiff.toString() },
    });
  }

  // Fixed-point exponent with 16 fractional bits; bigint `/` truncates toward zero, as C++ int64 division.
  const exponent = ((timeDiff - spacing * (heightDiff + 1n)) * 65536n) / halfLife;
  // Floor split into integer and fractional parts: `>>` on bigint is arithmetic, `& 0xffff` takes the low
  // 16 bits of the two's-complement value, exactly uint16_t(exponent).
  let shifts = exponent >> 16n;
  const frac = exponent & 0xffffn;

  // 65536 · 2^(frac/65536) by the aserti3 cubic; the sum stays below 2^64 for every 16-bit frac, as in C++ uint64.
  const factor =
    65536n + ((195766423245049n * frac + 971821376n * frac * frac + 5127n * frac * frac * frac + (1n << 47n)) >> 48n);
  let next = refTarget * factor;

  // Multiply by 2^shifts / 65536.
  shifts -= 16n;
  if (shifts <= 0n) {
    // Past 512 bits everything is gone; skip the shift so absurd exponents stay cheap.
    next = -shifts >= 512n ? 0n : next >> -shifts;
  } else if (shifts >= 256n) {
    // next ≥ 65536, so the result is ≥ 2^256 > powLimit (C++ detects the lost bits and returns powLimit).
    next = powLimit;
  } else {
    next <<= shifts;
  }

  // 0 is not a valid target, 1 is; never easier than powLimit.
  if (next === 0n) return 1n;
  return next > powLimit ? powLimit : next;
}

/** Target (in (0, powLimit]) required of the block after `prev` (height `prevHeight`, timestamp `prevTime` in seconds) under ASERT from `anchor`. */
export function getNextAsertTarget(anchor: AsertAnchor, prevHeight: number, prevTime: number, params: AsertParams): bigint {
  const { powLimit } = checkParams(params);
  const anchorHeight = toInteger(anchor.height, 'anchor.height', BlockErrorCode.BAD_PREV);
  const anchorParentTime = toInteger(anchor.parentTime, 'anchor.parentTime', BlockErrorCode.BAD_PREV);
  const height = toInteger(prevHeight, 'prevHeight', BlockErrorCode.BAD_PREV);
  const time = toInteger(prevTime, 'prevTime', BlockErrorCode.BAD_PREV);

  const decoded = decodeCompact(anchor.bits);
  if (decoded.negative || decoded.overflow || decoded.target === 0n || decoded.target > powLimit) {
    throw new ValidationError(BlockErrorCode.BAD_BITS, 'ASERT anchor bits do not encode a target in (0, powLimit]', {
      payload: { bits: anchor.bits >>> 0 },
    });
  }
  return calculateAsert(decoded.target, time - anchorParentTime, height - anchorHeight, params);
}

/** Compact `bits` required of the block after `prev` under ASERT from `anchor` (canonical GetCompact of `getNextAsertTarget`). */
export function getNextAsertBits(anchor: AsertAnchor, prevHeight: number, prevTime: number, params: AsertParams): number {
  return targetToBits(getNextAsertTarget(anchor, prevHeight, prevTime, params));
}

/** Validates the parameters once and returns them as bigints. */
function checkParams(params: AsertParams): { spacing: bigint; halfLife: bigint; powLimit: bigint } {
  const { targetSpacing, halfLife, powLimit } = params;
  if (!Number.isSafeInteger(targetSpacing) || targetSpacing <= 0) {
    throw new NodeError(AsertErrorCode.BAD_PARAMS, 'ASERT targetSpacing must be a positive integer', { targetSpacing });
  }
  if (!Number.isSafeInteger(halfLife) || halfLife <= 0) {
    throw new NodeError(AsertErrorCode.BAD_PARAMS, 'ASERT halfLife must be a positive integer', { halfLife });
  }
  if (powLimit <= 0n || powLimit >= 1n << 256n) {
    throw new NodeError(AsertErrorCode.BAD_PARAMS, 'ASERT powLimit must be in (0, 2^256)', { powLimit: powLimit.toString(16) });
  }
  return { spacing: BigInt(targetSpacing), halfLife: BigInt(halfLife), powLimit };
}

/** A safe integer as bigint, or a coded error naming the field. */
function toInteger(value: number, field: string, code: BlockErrorCode): bigint {
  if (!Number.isSafeInteger(value)) {
    throw new ValidationError(code, `ASERT ${field} must be a safe integer`, { payload: { [field]: value } });
  }
  return BigInt(value);
}
