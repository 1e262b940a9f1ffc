/**
 * The provider inbox's request signature (issue 17): no accounts, the agent's chain key signs
 * every inbox request. Both sides build the same message:
 *
 *   message = taggedHash("native-node/inbox-auth/v1",
 *               UTF-8(METHOD "\n" PATH "\n" hex(sha256(body)) "\n" TIMESTAMP "\n" ADDRESS))
 *
 * METHOD upper case; PATH the request path with its query string as sent (`/api/x402/inbox?wait=20`);
 * body the raw request bytes (empty for GET); TIMESTAMP Unix milliseconds as decimal text; ADDRESS
 * the agent's bech32m address. The headers:
 *
 *   X-Native-Agent:      the address
 *   X-Native-Timestamp:  the timestamp
 *   X-Native-Signature:  base64(ML-DSA-87 signature ‖ Ed25519 signature) over `message`
 *
 * The node checks both signatures against the public key the address published on chain, a
 * timestamp within ±60 s of its clock, and that the signature was not seen before (replay).
 */
import { sha256, taggedHash, toHex } from '../consensus/hash.js';
import { ED25519_SIGNATURE_SIZE, MLDSA_SIGNATURE_SIZE, signHybrid, type HybridKeyPair, type HybridSignature } from '../consensus/keys.js';

/** Domain tag of the inbox signature. */
export const INBOX_AUTH_TAG = 'native-node/inbox-auth/v1';
/** Header names (lower case, as node's http exposes them). */
export const INBOX_HEADERS = { agent: 'x-native-agent', timestamp: 'x-native-timestamp', signature: 'x-native-signature' } as const;
/** Largest distance between the signer's timestamp and the node's clock, ms. */
export const INBOX_CLOCK_SKEW_MS = 60_000;

/** The 32-byte message an inbox request's signature covers. */
export function inboxAuthMessage(method: string, path: string, body: Uint8Array, timestamp: string, address: string): Uint8Array {
  const text = `${method.toUpperCase()}\n${path}\n${toHex(sha256(body))}\n${timestamp}\n${address}`;
  return taggedHash(INBOX_AUTH_TAG, new TextEncoder().encode(text));
}

/** The three headers of a signed inbox request. */
export function signInboxRequest(key: HybridKeyPair, address: string, method: string, path: string, body: Uint8Array, now = Date.now()): Record<string, string> {
  const timestamp = String(now);
  const sig = signHybrid(key, inboxAuthMessage(method, path, body, timestamp, address));
  return {
    [INBOX_HEADERS.agent]: address,
    [INBOX_HEADERS.timestamp]: timestamp,
    [INBOX_HEADERS.signature]: Buffer.concat([sig.mldsa, sig.ed25519]).toString('base64'),
  };
}

/** Splits the signature header; undefined when it is not base64 of the two signatures' exact sizes. */
export function parseInboxSignature(header: string): HybridSignature | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(header)) return undefined;
  const raw = Buffer.from(header, 'base64');
  if (raw.length !== MLDSA_SIGNATURE_SIZE + ED25519_SIGNATURE_SIZE) return undefined;
  return { mldsa: new Uint8Array(raw.subarray(0, MLDSA_SIGNATURE_SIZE)), ed25519: new Uint8Array(raw.subarray(MLDSA_SIGNATURE_SIZE)) };
}
