/**
 * Local verification of a USDC-rail payment against the node's own requirements, before anything
 * is reserved or any facilitator is asked: the rules of the x402 `exact` EVM scheme (EIP-3009
 * `TransferWithAuthorization`), checked with @noble and integer math only.
 *
 *   - v2: `accepted` names exactly our requirements (scheme, network, asset, payTo, amount);
 *   - `to` = the quoted payTo; `value` = exactly the quoted atomic amount (not "at least");
 *   - `validAfter` ≤ now and `validBefore` ≥ now + 6 s (the reference facilitator's margin);
 *   - the signature is a 65-byte ECDSA signature with low `s` (what the USDC contract accepts)
 *     over the EIP-712 typed data in the USDC domain of the quote (`extra.name`/`extra.version`,
 *     chain 8453, the USDC contract), and it recovers to `from` (x402/usdc/evm.ts: libsecp256k1 in WASM).
 *
 * Smart-wallet signatures (ERC-1271 / ERC-6492) need an RPC and are refused here.
 */
import { recoverTransferAuthorizationSigner } from './evm.js';
import type { PaymentRequirements } from '../core/quote.js';
import { BASE_USDC } from '../core/quote.js';
import { acceptedMatches, UsdcErrorCode, type UsdcPaymentPayload, type UsdcRefusal } from './wire.js';

/** Seconds `validBefore` must lie beyond now (the time the facilitator needs to settle). */
export const VALID_BEFORE_MARGIN_SECONDS = 6;

/** Half the secp256k1 group order: signatures with a larger `s` are malleable and refused by USDC. */
const SECP256K1_HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/** Outcome of the local check (a value, never a throw). */
export type LocalVerification = { readonly isValid: true; readonly payer: string } | ({ readonly isValid: false; readonly payer?: string } & UsdcRefusal);

/** The EIP-712 domain of the quote's USDC option. */
export function usdcDomainOf(req: PaymentRequirements): { name: string; version: string; chainId: number; verifyingContract: string } {
  const name = typeof req.extra.name === 'string' ? req.extra.name : BASE_USDC.name;
  const version = typeof req.extra.version === 'string' ? req.extra.version : BASE_USDC.version;
  return { name, version, chainId: BASE_USDC.chainId, verifyingContract: req.asset };
}

/** Whether a signature is the plain 65-byte `r ‖ s ‖ v` form with low `s` and `v` ∈ {0, 1, 27, 28}. */
function isCanonicalEcdsa(signature: string): boolean {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return false;
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = parseInt(signature.slice(130, 132), 16);
  return s > 0n && s <= SECP256K1_HALF_N && (v === 0 || v === 1 || v === 27 || v === 28);
}

/**
 * Checks `payment` against `req` (the node's USDC requirements for this call) at `nowSeconds`.
 * Cheap checks first, the signature last.
 */
export async function verifyUsdcPaymentLocally(payment: UsdcPaymentPayload, req: PaymentRequirements, nowSeconds: number): Promise<LocalVerification> {
  const auth = payment.payload.authorization;
  const payer = auth.from;
  const refuse = (code: string, message: string): LocalVerification => ({ isValid: false, code, message, payer });
  if (payment.x402Version === 2 && !acceptedMatches(payment.accepted, req)) {
    return refuse(UsdcErrorCode.INVALID_PAYMENT_REQUIREMENTS, 'accepted does not match the requirements of this call (scheme, network, asset, payTo, amount); request a fresh 402');
  }
  if (auth.to.toLowerCase() !== req.payTo.toLowerCase()) {
    return refuse(UsdcErrorCode.RECIPIENT_MISMATCH, `the authorization pays ${auth.to}, not this node's payTo ${req.payTo}`);
  }
  if (BigInt(auth.value) !== BigInt(req.maxAmountRequired)) {
    return refuse(UsdcErrorCode.INVALID_VALUE, `the authorization is for ${auth.value} USDC atomic units; the price is exactly ${req.maxAmountRequired}`);
  }
  if (BigInt(auth.validAfter) > BigInt(nowSeconds)) {
    return refuse(UsdcErrorCode.VALID_AFTER, `the authorization is valid only after ${auth.validAfter} (now ${nowSeconds})`);
  }
  if (BigInt(auth.validBefore) < BigInt(nowSeconds + VALID_BEFORE_MARGIN_SECONDS)) {
    return refuse(UsdcErrorCode.VALID_BEFORE, `the authorization expires at ${auth.validBefore}; it must stay valid at least ${VALID_BEFORE_MARGIN_SECONDS} s beyond now (${nowSeconds})`);
  }
  const signature = payment.payload.signature;
  if (!isCanonicalEcdsa(signature)) {
    return refuse(UsdcErrorCode.INVALID_SIGNATURE, 'the signature must be a 65-byte ECDSA signature with low s (smart-wallet signatures are not accepted)');
  }
  let recovered: string;
  try {
    recovered = recoverTransferAuthorizationSigner(usdcDomainOf(req), auth, signature);
  } catch {
    return refuse(UsdcErrorCode.INVALID_SIGNATURE, 'the signature does not recover to an address');
  }
  if (recovered.toLowerCase() !== auth.from.toLowerCase()) {
    return refuse(UsdcErrorCode.INVALID_SIGNATURE, `the signature is not by ${auth.from} over this authorization in the ${usdcDomainOf(req).name} domain of chain ${BASE_USDC.chainId}`);
  }
  return { isValid: true, payer };
}
