/** Error codes of the x402 payment flow, with the HTTP status each one answers. */
export const PaymentErrorCode = {
  UNKNOWN_SERVICE: 'unknown_service',
  INVALID_REQUEST: 'invalid_request',
  SERVICE_UNAVAILABLE: 'service_unavailable',
  NODE_SYNCING: 'node_syncing',
  INVALID_PAYMENT: 'invalid_payment',
  PAYMENT_NOT_FOUND: 'payment_not_found',
  PAYMENT_PENDING: 'payment_pending',
  PAYMENT_NOT_INVOKE: 'payment_not_invoke',
  WRONG_SERVICE: 'wrong_service',
  WRONG_PAYEE: 'wrong_payee',
  AMOUNT_MISMATCH: 'amount_mismatch',
  REQUEST_MISMATCH: 'request_mismatch',
  PAYMENT_ALREADY_USED: 'payment_already_used',
  SETTLEMENT_IN_PROGRESS: 'settlement_in_progress',
  SERVICE_FAILED: 'service_failed',
  SERVICE_TIMEOUT: 'service_timeout',
  /** The payment was refunded without a call (x402/native/unhonored.ts); the body names the refund tx and the reason. */
  PAYMENT_REFUNDED: 'payment_refunded',
  /** The payment commits to another seller (ledger): it was quoted by another node sharing this payee. */
  WRONG_SELLER: 'wrong_seller',
  /** The payment was mined in a stretch of chain this ledger never judged; the operator decides (`native-node ledger gap`). */
  PAYMENT_IN_LEDGER_GAP: 'payment_in_ledger_gap',
  /** The payee cannot cover the refunds it owes: no new quotes until it can. */
  PAYEE_UNDERFUNDED: 'payee_underfunded',
} as const;
export type PaymentErrorCode = (typeof PaymentErrorCode)[keyof typeof PaymentErrorCode];

/** HTTP status of each payment error code (a failed payment check is a 402: pay properly). */
export const PAYMENT_HTTP_STATUS: Readonly<Record<string, number>> = {
  unknown_service: 404,
  invalid_request: 400,
  service_unavailable: 503,
  node_syncing: 503,
  invalid_payment: 400,
  payment_not_found: 404,
  payment_not_invoke: 402,
  wrong_service: 402,
  wrong_payee: 402,
  amount_mismatch: 402,
  request_mismatch: 402,
  payment_already_used: 409,
  settlement_in_progress: 409,
  payment_refunded: 409,
  wrong_seller: 402,
  payment_in_ledger_gap: 409,
  payee_underfunded: 503,
  // The "Payment" HTTP auth scheme's credential checks (node/api/paymentDialects.ts): a bad
  // credential is a 400; a forged, stale or foreign challenge a 402 with fresh challenges.
  invalid_payment_credential: 400,
  payment_challenge_invalid: 402,
  payment_challenge_expired: 402,
  payment_challenge_mismatch: 402,
};

/** Reasons the USDC rail refuses a payment (402 unless noted), snake_case like the x402 reference's. */
export const UsdcErrorCode = {
  /** The header is not base64 (or too large, or not UTF-8). */
  INVALID_PAYMENT_BASE64: 'invalid_payment_base64',
  /** The decoded header is not JSON. */
  INVALID_PAYMENT_JSON: 'invalid_payment_json',
  /** JSON of the wrong shape. */
  INVALID_PAYLOAD: 'invalid_payload',
  INVALID_X402_VERSION: 'invalid_x402_version',
  UNSUPPORTED_SCHEME: 'unsupported_scheme',
  INVALID_NETWORK: 'invalid_network',
  /** A v2 payload whose `accepted` requirements are not the ones this node quoted. */
  INVALID_PAYMENT_REQUIREMENTS: 'invalid_payment_requirements',
  INVALID_SIGNATURE: 'invalid_exact_evm_payload_signature',
  RECIPIENT_MISMATCH: 'invalid_exact_evm_payload_recipient_mismatch',
  INVALID_VALUE: 'invalid_exact_evm_payload_authorization_value',
  VALID_AFTER: 'invalid_exact_evm_payload_authorization_valid_after',
  VALID_BEFORE: 'invalid_exact_evm_payload_authorization_valid_before',
  /** The facilitator refused with a reason that is not snake_case text. */
  FACILITATOR_REJECTED: 'facilitator_rejected',
  /** The facilitator did not answer (502), or not in time (504). */
  FACILITATOR_UNAVAILABLE: 'facilitator_unavailable',
} as const;
export type UsdcErrorCode = (typeof UsdcErrorCode)[keyof typeof UsdcErrorCode];
