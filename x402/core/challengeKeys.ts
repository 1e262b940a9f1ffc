/**
 * The keys of the node's stateless HTTP challenges: the `Payment` authentication scheme's
 * challenge ids (node/api/paymentDialects.ts) and the sign-in-with-x nonces (x402/usdc/siwx.ts). Both
 * are HMACs a node checks without storing the challenge, so every node that may receive the
 * retry must hold the same key: it is derived from one secret kept in the settlement ledger
 * (mark `auth-secret`, 32 random bytes written once by the first node), so the nodes of a fleet
 * sharing a PostgreSQL ledger — behind one load balancer — check each other's challenges, and a
 * restart keeps them valid.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { NodeError } from '../../consensus/errors.js';
import type { SettlementLedger } from '../ledger/ledger.js';

/** Name of the ledger mark holding the secret. */
export const AUTH_SECRET_MARK = 'auth-secret';

/** Error code of a ledger whose secret mark is not 32 bytes of hex. */
export const ChallengeKeyErrorCode = { BAD_SECRET: 'auth_secret_invalid' } as const;

/** The two 32-byte keys, each for one purpose only. */
export interface ChallengeKeys {
  readonly paymentAuth: Uint8Array;
  readonly siwx: Uint8Array;
}

/** The keys derived from the ledger's secret, which is created on first use (once per ledger, whichever node comes first). */
export async function loadChallengeKeys(ledger: Pick<SettlementLedger, 'initMark'>): Promise<ChallengeKeys> {
  const { secret } = await ledger.initMark<{ secret: string; createdAt: number }>(AUTH_SECRET_MARK, { secret: randomBytes(32).toString('hex'), createdAt: Date.now() });
  if (typeof secret !== 'string' || !/^[0-9a-f]{64}$/.test(secret)) throw new NodeError(ChallengeKeyErrorCode.BAD_SECRET, `the ledger's ${AUTH_SECRET_MARK} mark is not 64 hex characters`);
  const derive = (purpose: string) => new Uint8Array(createHmac('sha256', Buffer.from(secret, 'hex')).update(`native-node/${purpose}`).digest());
  return { paymentAuth: derive('payment-auth'), siwx: derive('sign-in-with-x') };
}
