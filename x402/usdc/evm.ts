/**
 * The few EVM primitives the USDC rail needs: EIP-55 checksummed addresses, and the signer of an
 * EIP-3009 `TransferWithAuthorization` recovered from its EIP-712 signature. Hashing is @noble's
 * (already the chain's crypto); the public-key recovery is libsecp256k1's, compiled to WASM
 * (tiny-secp256k1, bitcoinjs): 0.21 ms against 1.3 ms for @noble's in JS, and it was a third of
 * the node's main thread on the USDC rail (docs/benchmarks.md). Replaces viem at run time (about
 * 100 MB of install for two calls); the tests check it against viem, the reference implementation,
 * and the recovery against @noble's (test/x402/evm.test.ts).
 *
 * EIP-712: digest = keccak256(0x19 0x01 ‖ domainSeparator ‖ hashStruct(message)), with
 * domainSeparator = hashStruct(EIP712Domain{name, version, chainId, verifyingContract}).
 */
import { recover as recoverPoint } from 'tiny-secp256k1';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';

/** An EIP-712 domain with the four fields of the USDC contract's domain. */
export interface Eip712Domain {
  readonly name: string;
  readonly version: string;
  readonly chainId: number;
  readonly verifyingContract: string;
}

/** The fields of an EIP-3009 `TransferWithAuthorization` (addresses and the nonce as 0x hex, integers as decimal strings or bigints). */
export interface TransferAuthorization {
  readonly from: string;
  readonly to: string;
  readonly value: string | bigint;
  readonly validAfter: string | bigint;
  readonly validBefore: string | bigint;
  readonly nonce: string;
}

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const UINT256_MAX = (1n << 256n) - 1n;

const keccakText = (s: string): Uint8Array => keccak_256(utf8ToBytes(s));
const DOMAIN_TYPEHASH = keccakText('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)');
const TRANSFER_TYPEHASH = keccakText('TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)');

/** Whether `s` is a 20-byte 0x hex address (any case). */
export function isEvmAddress(s: string): boolean {
  return ADDRESS_RE.test(s);
}

/** The EIP-55 checksummed form of an address; throws RangeError when it is not 20 bytes of 0x hex. */
export function checksumAddress(address: string): string {
  if (!isEvmAddress(address)) throw new RangeError(`not an EVM address: ${address}`);
  const lower = address.slice(2).toLowerCase();
  const hash = bytesToHex(keccakText(lower));
  let out = '0x';
  for (let i = 0; i < 40; i++) out += parseInt(hash[i], 16) >= 8 ? lower[i].toUpperCase() : lower[i];
  return out;
}

/** A 32-byte big-endian word of an unsigned integer below 2^256. */
function uint256(v: string | bigint | number): Uint8Array {
  const n = BigInt(v);
  if (n < 0n || n > UINT256_MAX) throw new RangeError(`not a uint256: ${v}`);
  return hexToBytes(n.toString(16).padStart(64, '0'));
}

/** A 32-byte word of an address (left-padded with zeros). */
function addressWord(address: string): Uint8Array {
  if (!isEvmAddress(address)) throw new RangeError(`not an EVM address: ${address}`);
  return hexToBytes(address.slice(2).toLowerCase().padStart(64, '0'));
}

/** The EIP-712 digest a wallet signs for `auth` in `domain`. */
export function transferAuthorizationDigest(domain: Eip712Domain, auth: TransferAuthorization): Uint8Array {
  const domainSeparator = keccak_256(concatBytes(DOMAIN_TYPEHASH, keccakText(domain.name), keccakText(domain.version), uint256(domain.chainId), addressWord(domain.verifyingContract)));
  if (!/^0x[0-9a-fA-F]{64}$/.test(auth.nonce)) throw new RangeError(`nonce must be 32 bytes of 0x hex: ${auth.nonce}`);
  const structHash = keccak_256(
    concatBytes(TRANSFER_TYPEHASH, addressWord(auth.from), addressWord(auth.to), uint256(auth.value), uint256(auth.validAfter), uint256(auth.validBefore), hexToBytes(auth.nonce.slice(2))),
  );
  return keccak_256(concatBytes(new Uint8Array([0x19, 0x01]), domainSeparator, structHash));
}

/** The address (EIP-55) whose key made the 65-byte `r ‖ s ‖ v` signature `signature` over `digest`; throws on a malformed signature. */
export function recoverAddress(digest: Uint8Array, signature: string): string {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) throw new RangeError('a signature is 65 bytes of 0x hex (r ‖ s ‖ v)');
  const bytes = hexToBytes(signature.slice(2));
  const v = bytes[64];
  const recovery = v >= 27 ? v - 27 : v;
  if (recovery !== 0 && recovery !== 1) throw new RangeError(`bad recovery byte v = ${v}`);
  // libsecp256k1 refuses r or s of 0 or ≥ n and an r that is no point's x (throws), and answers null when no key recovers.
  const pub = recoverPoint(digest, bytes.subarray(0, 64), recovery, false);
  if (!pub) throw new RangeError('the signature recovers no public key');
  return checksumAddress(`0x${bytesToHex(keccak_256(pub.subarray(1)).subarray(12))}`);
}

/** The signer of an EIP-3009 authorization in `domain` (throws on a malformed signature or field). */
export function recoverTransferAuthorizationSigner(domain: Eip712Domain, auth: TransferAuthorization, signature: string): string {
  return recoverAddress(transferAuthorizationDigest(domain, auth), signature);
}
