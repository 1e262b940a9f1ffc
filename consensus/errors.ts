/** What a peer that sent the offending data deserves: drop it quietly, or reject and penalise. */
export type PeerAction = 'ignore' | 'reject';

/** Base error of the whole node: a stable machine-readable `code`, a message and a typed payload. */
export class NodeError<C extends string = string, P extends object = Record<string, unknown>> extends Error {
  readonly code: C;
  readonly payload: P;
  constructor(code: C, message: string, payload?: P) {
    super(message);
    this.name = 'NodeError';
    this.code = code;
    this.payload = payload ?? ({} as P);
  }
}

/** Codes of the canonical binary codec. */
export const CodecErrorCode = {
  TRUNCATED: 'codec_truncated',
  TRAILING_BYTES: 'codec_trailing_bytes',
  NON_CANONICAL_INT: 'codec_non_canonical_int',
  OVERSIZED: 'codec_oversized',
  BAD_VALUE: 'codec_bad_value',
} as const;
export type CodecErrorCode = (typeof CodecErrorCode)[keyof typeof CodecErrorCode];

/** Codes of stateless and stateful transaction rules. */
export const TxErrorCode = {
  BAD_VERSION: 'tx_bad_version',
  WRONG_CHAIN: 'tx_wrong_chain',
  UNKNOWN_TYPE: 'tx_unknown_type',
  TOO_LARGE: 'tx_too_large',
  FEE_TOO_LOW: 'tx_fee_too_low',
  BAD_PAYLOAD: 'tx_bad_payload',
  KEY_MISMATCH: 'tx_key_mismatch',
  MISSING_KEYS: 'tx_missing_keys',
  BAD_SIGNATURE: 'tx_bad_signature',
  BAD_NONCE: 'tx_bad_nonce',
  INSUFFICIENT_FUNDS: 'tx_insufficient_funds',
  AMOUNT_OVERFLOW: 'tx_amount_overflow',
  INVOKE_NOT_FOUND: 'tx_invoke_not_found',
  REFUND_NOT_PAYEE: 'tx_refund_not_payee',
  REFUND_MISMATCH: 'tx_refund_mismatch',
  ALREADY_REFUNDED: 'tx_already_refunded',
} as const;
export type TxErrorCode = (typeof TxErrorCode)[keyof typeof TxErrorCode];

/**
 * Codes of the economy's rules (tokens, stablecoins, pools, staking, bridge records). Stateful
 * ones are raised with `action: 'ignore'` (they depend on the tip); stateless ones reject.
 */
export const EconomyErrorCode = {
  BAD_SYMBOL: 'token_bad_symbol',
  BAD_NAME: 'token_bad_name',
  BAD_DECIMALS: 'token_bad_decimals',
  BAD_SUPPLY: 'token_bad_supply',
  SYMBOL_TAKEN: 'token_symbol_taken',
  UNKNOWN_TOKEN: 'token_unknown',
  NOT_ISSUER: 'token_not_issuer',
  MAX_SUPPLY: 'token_max_supply_exceeded',
  FROZEN: 'token_frozen',
  IS_STABLE: 'token_is_stable',
  NOT_STABLE: 'token_not_stable',
  NOTHING_TO_REDEEM: 'token_nothing_to_redeem',
  UNDERCOLLATERALIZED: 'stable_undercollateralized',
  IDENTICAL_ASSETS: 'pool_identical_assets',
  POOL_EXISTS: 'pool_exists',
  UNKNOWN_POOL: 'pool_unknown',
  INSUFFICIENT_LIQUIDITY: 'pool_insufficient_liquidity',
  LIQUIDITY_SLIPPAGE: 'pool_slippage',
  INSUFFICIENT_SHARES: 'pool_insufficient_shares',
  SLIPPAGE: 'swap_slippage',
  EXPIRED: 'swap_expired',
  BAD_PATH: 'swap_bad_path',
  BAD_TIER: 'stake_bad_tier',
  UNKNOWN_STAKE: 'stake_unknown',
  NOT_STAKE_OWNER: 'stake_not_owner',
  STAKE_LOCKED: 'stake_locked',
  NOT_AUTHORITY: 'bridge_not_authority',
  BAD_COSIGNATURE: 'bridge_bad_cosignature',
  UNKNOWN_NETWORK: 'bridge_unknown_network',
  BAD_FEE: 'bridge_bad_fee',
  BAD_REF: 'bridge_bad_ref',
  DUPLICATE_REF: 'bridge_duplicate_ref',
  INSUFFICIENT_FLOAT: 'bridge_insufficient_float',
} as const;
export type EconomyErrorCode = (typeof EconomyErrorCode)[keyof typeof EconomyErrorCode];

/** Codes of header and block rules. */
export const BlockErrorCode = {
  BAD_VERSION: 'block_bad_version',
  HIGH_HASH: 'block_high_hash',
  BAD_BITS: 'block_bad_bits',
  BAD_PREV: 'block_bad_prev',
  TIME_TOO_OLD: 'block_time_too_old',
  TIME_TOO_NEW: 'block_time_too_new',
  BAD_MERKLE_ROOT: 'block_bad_merkle_root',
  TOO_LARGE: 'block_too_large',
  TOO_MANY_TXS: 'block_too_many_txs',
  DUPLICATE_TX: 'block_duplicate_tx',
  BAD_COINBASE: 'block_bad_coinbase',
  BAD_TX: 'block_bad_tx',
} as const;
export type BlockErrorCode = (typeof BlockErrorCode)[keyof typeof BlockErrorCode];

/** Codes of chain parameter loading. */
export const ParamsErrorCode = {
  INVALID_GENESIS: 'params_invalid_genesis',
} as const;

/** Error of the binary codec: malformed bytes from anywhere (peer, HTTP, disk). */
export class CodecError extends NodeError<CodecErrorCode, { offset?: number }> {
  readonly action: PeerAction = 'reject';
  constructor(code: CodecErrorCode, message: string, offset?: number) {
    super(code, message, { offset });
    this.name = 'CodecError';
  }
}

/** A consensus rule violation: says which rule, what the sender deserves and the ban score. */
export class ValidationError<C extends string = TxErrorCode | BlockErrorCode | EconomyErrorCode> extends NodeError<C, Record<string, unknown>> {
  readonly action: PeerAction;
  readonly banScore: number;
  constructor(code: C, message: string, opts: { action?: PeerAction; banScore?: number; payload?: Record<string, unknown> } = {}) {
    super(code, message, opts.payload);
    this.name = 'ValidationError';
    this.action = opts.action ?? 'reject';
    this.banScore = opts.banScore ?? (this.action === 'reject' ? 100 : 0);
  }
}

/** Whether `e` is a NodeError, of a given code when one is given. */
export function isNodeError(e: unknown, code?: string): e is NodeError {
  return e instanceof NodeError && (code === undefined || e.code === code);
}
