/**
 * The agent's toolkit of a native-node: what a program that buys paid calls from a node needs,
 * without the node. Compiled from the node's own modules (the SDK in sdk/, the transaction
 * encoding and signatures in consensus/, the wire schema and commitment in x402/core/wire.ts), so the
 * node and this package encode payments the same way.
 */
export {
  createAgentClient,
  createPaymentTx,
  AgentClientError,
  AgentErrorCode,
  isAgentClientError,
  parseQuote,
  parseSettlement,
  quoteFromRequirement,
  usdcBinding,
  requestCommitment,
  COMMITMENT_SCHEME,
  createFilePaymentStore,
  createMemoryPaymentStore,
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_SETTLE_WAIT_SECONDS,
  type AgentClient,
  type AgentClientOptions,
  type AgentCallResult,
  type AgentPayment,
  type AgentEvent,
  type AgentErrorPayload,
  type AgentQuote,
  type AgentReceipt,
  type CallOptions,
  type SettleOptions,
  type WaitForPaymentOptions,
  type SignedPayment,
  type PaymentTxOptions,
  type PendingPayment,
  type PendingPaymentStore,
  type NativePaymentRequirement,
  type NativeRequirementExtra,
} from '../../../sdk/client.js';
export { loadWallet, WalletErrorCode, type LoadWalletOptions, type LoadedWallet } from '../../../sdk/walletFile.js';
export {
  createNativeScheme,
  registerNativeScheme,
  nativeAllowedAsset,
  preferRail,
  NATIVE_SCHEME,
  NATIVE_NETWORK_PATTERN,
  REQUEST_UNKNOWN,
  type NativeSchemeClient,
  type NativeSchemeOptions,
  type X402Requirement,
  type X402PayloadResult,
  type X402ClientLike,
} from '../../../sdk/x402Scheme.js';
export { callPaidTool, toolRequestText, MCP_PAYMENT_META, MCP_PAYMENT_RESPONSE_META, type McpToolCaller, type McpToolResult, type PaidToolOptions, type PaidToolResult } from '../../../sdk/mcpPayment.js';
export { createKeyPairFromSeed, type HybridKeyPair } from '../../../consensus/keys.js';
export { encodeAddress, tryDecodeAddress } from '../../../consensus/address.js';
export { formatAmount, parseAmount } from '../../../consensus/amount.js';
export { decodeTx, encodeTx, encodeUnsignedTx, txSighash, txId } from '../../../consensus/tx.js';
export { agentInvoke } from '../../../consensus/txTypes/agentInvoke.js';
export {
  verifyDidDocument,
  verifyOffer,
  verifyReceipt,
  verifyPaidBody,
  verifyMcpResult,
  verifyJws,
  resultBytesOfBody,
  PINNABLE,
  type Pinnable,
  type PinReport,
  type VerifiedBinding,
  type VerifiedSeller,
  type VerifiedReceipt,
  type VerifyFailure,
  type SellerExpectations,
  type ReceiptExpectations,
  type OfferPayload,
  type ReceiptPayload,
  type OfferedOption,
} from '../../../sdk/receipts.js';
export { checkNativePayment, type PaymentOnChain, type PaymentCheckOptions } from '../../../sdk/receiptPayment.js';
export { OFFER_RECEIPT, HYBRID_RECEIPT_SCHEME, OFFER_KEY_BINDING_SCHEME, didWebOf, type HybridReceipt, type HybridReceiptPayload, type OfferKeyBinding } from '../../../x402/core/wire.js';
export { RECEIPT_BATCH_SCHEME, type ReceiptBatchProof } from '../../../x402/core/receiptBatch.js';
