/**
 * The provider inbox's request signature: no accounts, the agent's chain key signs every inbox
 * request for one node (or fleet) and one request. Both sides build the same message:
 *
 *   message = taggedHash("native-node/inbox-auth/v2",
 *               UTF-8(METHOD "\n" PATH "\n" hex(sha256(body)) "\n" TIMESTAMP "\n" ADDRESS "\n" NODE))
 *
 * METHOD upper case; PATH the request path with its query string as sent (`/api/x402/inbox?wait=20`);
 * body the raw request bytes (empty for GET); TIMESTAMP Unix milliseconds as decimal text; ADDRESS
 * the agent's bech32m address; NODE the node's id: its ledger's seller id (16 lowercase hex
 * characters, one per node, one per fleet sharing a ledger; `extra.sellerId` of its quotes, and
 * the `X-Native-Node` header of every answer of the inbox routes). The headers:
 *
 *   X-Native-Agent:      the address
 *   X-Native-Timestamp:  the timestamp
 *   X-Native-Node:       the node id
 *   X-Native-Signature:  base64(ML-DSA-87 signature ‖ Ed25519 signature) over `message`, in its one
 *                        canonical spelling (RFC 4648 §4 alphabet, `=` padding, no whitespace)
 *
 * The node checks the node id against its own, a timestamp within ±60 s of its clock, both
 * signatures against the public key the address published on chain, and that the signature's
 * bytes were not used before (replay).
 */
import { sha256, taggedHash, toHex } from '../../consensus/hash.js';
import { ED25519_SIGNATURE_SIZE, MLDSA_SIGNATURE_SIZE, signHybrid, type HybridKeyPair, type HybridSignature } from '../../consensus/keys.js';

/** Domain tag of the inbox signature (v2: the message names the node). */
export const INBOX_AUTH_TAG = 'native-node/inbox-auth/v2';
/** Header names (lower case, as node's http exposes them). */
export const INBOX_HEADERS = { agent: 'x-native-agent', timestamp: 'x-native-timestamp', node: 'x-native-node', signature: 'x-native-signature' } as const;
/** Largest distance between the signer's timestamp and the node's clock, ms. */
export const INBOX_CLOCK_SKEW_MS = 60_000;
/** Bytes of a hybrid signature: ML-DSA-87 then Ed25519. */
const SIGNATURE_BYTES = MLDSA_SIGNATURE_SIZE + ED25519_SIGNATURE_SIZE;

/** What an inbox signature covers. */
export interface InboxRequestToSign {
  /** The signer's bech32m address. */
  readonly address: string;
  /** The node (fleet) the request is for: its ledger's seller id. */
  readonly nodeId: string;
  readonly method: string;
  /** The request path with its query string, exactly as sent. */
  readonly path: string;
  /** The raw request body (empty for GET). */
  readonly body: Uint8Array;
  /** Unix ms as decimal text. */
  readonly timestamp: string;
}

/** The 32-byte message an inbox request's signature covers. */
export function inboxAuthMessage(r: InboxRequestToSign): Uint8Array {
  const text = `${r.method.toUpperCase()}\n${r.path}\n${toHex(sha256(r.body))}\n${r.timestamp}\n${r.address}\n${r.nodeId}`;
  return taggedHash(INBOX_AUTH_TAG, new TextEncoder().encode(text));
}

/** The four headers of a signed inbox request, signed at `now` (Unix ms; default: the clock). */
export function signInboxRequest(key: HybridKeyPair, r: Omit<InboxRequestToSign, 'timestamp'> & { readonly now?: number }): Record<string, string> {
  const timestamp = String(r.now ?? Date.now());
  const sig = signHybrid(key, inboxAuthMessage({ ...r, timestamp }));
  return {
    [INBOX_HEADERS.agent]: r.address,
    [INBOX_HEADERS.timestamp]: timestamp,
    [INBOX_HEADERS.node]: r.nodeId,
    [INBOX_HEADERS.signature]: encodeInboxSignature(sig),
  };
}

/** The canonical spelling of a hybrid signature in X-Native-Signature. */
export function encodeInboxSignature(sig: HybridSignature): string {
  return Buffer.concat([sig.mldsa, sig.ed25519]).toString('base64');
}

/**
 * Decodes the signature header; undefined unless it is the canonical spelling of the two
 * signatures' exact bytes. Every other spelling of the same bytes (no padding, the URL-safe
 * alphabet, non-zero unused bits in the last character, whitespace) is refused, so one
 * signature has one spelling and a used one cannot come back re-spelled.
 */
export function parseInboxSignature(header: string): HybridSignature | undefined {
  if (header.length !== 4 * Math.ceil(SIGNATURE_BYTES / 3) || !/^[A-Za-z0-9+/]+={0,2}$/.test(header)) return undefined;
  const raw = Buffer.from(header, 'base64');
  if (raw.length !== SIGNATURE_BYTES || raw.toString('base64') !== header) return undefined;
  return { mldsa: new Uint8Array(raw.subarray(0, MLDSA_SIGNATURE_SIZE)), ed25519: new Uint8Array(raw.subarray(MLDSA_SIGNATURE_SIZE)) };
}

/** The replay key of a signature: hex sha256 of its bytes (never of its spelling). */
export function inboxSignatureKey(sig: HybridSignature): string {
  return toHex(sha256(Buffer.concat([sig.mldsa, sig.ed25519])));
}
