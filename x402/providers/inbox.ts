/**
 * The provider inbox: after a verified payment for a provider agent's service, the
 * paid-call core runs the service's `run`, which puts a job here and waits for the agent's
 * answer within the service's timeout. The agent takes jobs (`take`, a long poll) and answers
 * each once (`answer`): a result settles the call (the caller gets it with the receipt, the
 * provider is paid by `payouts.ts`), a failure or no answer in time fails it (the caller is
 * refunded by the settlement's refund path, the provider is not paid) and a late answer is
 * refused.
 *
 *   queued ──take──▶ taken ──answer(result)──▶ done
 *      │               │  └──answer(failure) / oversized──▶ failed
 *      └───────────────┴──timeout / node stop──▶ expired
 *
 * This module is the interface (`Inbox`), its codes and types, and the rules both engines share
 * (the signature check, the answer's shape); it imports no engine. The engines: the LevelDB inbox
 * of one node (`levelInbox.ts`) and the PostgreSQL inbox of a fleet (`pgInbox.ts`), chosen by
 * `openInbox` (`open.ts`). Jobs and stats outlive a restart; a job left open by a crash is expired
 * at start (its payment is refunded).
 *
 * Start-up grace: an agent that polled within its online window of the node's last known moment
 * alive was online before the restart: for `startGraceMs` after start (default: the online
 * window) it is `inGrace`, so payments already made for its services are served (the job waits
 * for its next poll) instead of refunded at once. It is not online meanwhile: its services are
 * quoted, sold and listed by the live rule. A job of it that expires ends its grace.
 *
 * Authentication (x402/providers/inboxAuth.ts): the agent's chain key signs method, path, body hash,
 * timestamp, address and the node's id (its ledger's seller id, one per fleet). Refusals are 401
 * with a code each: `inbox_signature_expired` (timestamp outside the clock window),
 * `inbox_signature_used` (its bytes were used before, at any node sharing the replay set),
 * `inbox_signature_foreign_node` (signed for another node or fleet), `inbox_unauthorized`
 * (missing, malformed, non-canonical or wrong). Each carries this node's id (`nodeId`).
 */
import { tryDecodeAddress } from '../../consensus/address.js';
import { NodeError } from '../../consensus/errors.js';
import { toHex } from '../../consensus/hash.js';
import type { HybridPublicKey } from '../../consensus/keys.js';
import type { SignatureVerifier } from '../../chain/types.js';
import { ServiceError } from '../../services/types.js';
import { INBOX_CLOCK_SKEW_MS, inboxAuthMessage, inboxSignatureKey, parseInboxSignature } from './inboxAuth.js';

/** Error codes of the inbox. */
export const InboxErrorCode = {
  /** Missing headers, an address of another chain, a malformed or non-canonical signature, one that does not verify. */
  UNAUTHORIZED: 'inbox_unauthorized',
  /** The timestamp is more than INBOX_CLOCK_SKEW_MS from the node's clock. */
  SIGNATURE_EXPIRED: 'inbox_signature_expired',
  /** The signature's bytes were used before (a replay). */
  SIGNATURE_USED: 'inbox_signature_used',
  /** The request was signed for another node (or fleet): X-Native-Node is not this node's id. */
  SIGNATURE_FOREIGN_NODE: 'inbox_signature_foreign_node',
  NOT_AGENT: 'inbox_not_registered_agent',
  JOB_NOT_FOUND: 'inbox_job_not_found',
  ALREADY_ANSWERED: 'inbox_job_already_answered',
  JOB_EXPIRED: 'inbox_job_expired',
  RESULT_TOO_LARGE: 'inbox_result_too_large',
  BAD_ANSWER: 'inbox_bad_answer',
  /** The run's failure codes (ServiceError, the caller is refunded). */
  PROVIDER_FAILED: 'provider_failed',
  PROVIDER_TIMEOUT: 'provider_timeout',
  PROVIDER_RESULT_TOO_LARGE: 'provider_result_too_large',
} as const;

/** HTTP statuses of the inbox codes. */
export const INBOX_HTTP_STATUS: Readonly<Record<string, number>> = {
  [InboxErrorCode.UNAUTHORIZED]: 401,
  [InboxErrorCode.SIGNATURE_EXPIRED]: 401,
  [InboxErrorCode.SIGNATURE_USED]: 401,
  [InboxErrorCode.SIGNATURE_FOREIGN_NODE]: 401,
  [InboxErrorCode.NOT_AGENT]: 403,
  [InboxErrorCode.JOB_NOT_FOUND]: 404,
  [InboxErrorCode.ALREADY_ANSWERED]: 409,
  [InboxErrorCode.JOB_EXPIRED]: 409,
  [InboxErrorCode.RESULT_TOO_LARGE]: 413,
  [InboxErrorCode.BAD_ANSWER]: 400,
};

/** A job as stored and as the agent sees it. */
export interface InboxJob {
  readonly id: string;
  readonly serviceId: string;
  /** Owner account id (hex) of the agent that sells the service. */
  readonly agent: string;
  /** The caller's request string (absent when the service takes none). */
  readonly request?: string;
  /** The validated input (the parsed JSON for JSON services). */
  readonly input: unknown;
  readonly createdAt: number;
  /** Unix ms after which an answer is refused. */
  readonly deadline: number;
  status: 'queued' | 'taken' | 'done' | 'failed' | 'expired';
  takenAt?: number;
  answeredAt?: number;
  error?: { code: string; message: string };
}

/** Per-service provider stats (catalog latencyMs, /agents). */
export interface ProviderStats {
  calls: number;
  failures: number;
  /** Last (up to 101) answer latencies, ms: the median is `latencyMs`. */
  latencies: number[];
}

/** Options of the inbox. */
export interface InboxOptions {
  /** Largest result, bytes of JSON. */
  readonly maxResultBytes: number;
  /** An agent that has not polled for this long is offline (its services are `down`, 503 before payment), ms. */
  readonly onlineWindowMs: number;
  /** Longest long poll, ms. */
  readonly maxWaitMs: number;
  /** Most jobs handed out by one take. */
  readonly maxTake: number;
  /** Start-up grace of agents that were online before the restart, ms after `start` (default: `onlineWindowMs`). */
  readonly startGraceMs?: number;
  readonly now?: () => number;
}

/** Defaults of InboxOptions. */
export const defaultInboxOptions: InboxOptions = { maxResultBytes: 64 * 1024, onlineWindowMs: 30_000, maxWaitMs: 25_000, maxTake: 10 };

/** Agents' last polls are written to disk at most this often each, ms (the grace check allows for it). */
export const POLL_PERSIST_MS = 5_000;

/** What the inbox needs to authenticate an agent. */
export interface InboxKeys {
  /** The public key an account published on chain, if any. */
  publicKeyOf(id: Uint8Array): Promise<HybridPublicKey | undefined>;
  /** Whether the account is a registered agent. */
  isAgent(id: Uint8Array): boolean;
}

/** An inbox request as the transport read it. */
export interface SignedRequest {
  readonly method: string;
  readonly path: string;
  readonly body: Uint8Array;
  readonly headers: { agent?: string; timestamp?: string; node?: string; signature?: string };
}

/** A coded inbox refusal (its HTTP status in INBOX_HTTP_STATUS). */
export class InboxError extends NodeError {
  constructor(code: string, message: string, payload?: Record<string, unknown>) {
    super(code, message, payload);
    this.name = 'InboxError';
  }
}

/** Whether `e` is a refusal of an inbox signature (401: counted against the sender's address). */
export function isInboxAuthRefusal(e: unknown): boolean {
  return e instanceof NodeError && INBOX_HTTP_STATUS[e.code] === 401;
}

/** Calls, failures and median latency of a provider service, as /agents and the catalog show them. */
export interface ProviderStatsView {
  readonly calls: number;
  readonly failures: number;
  readonly medianLatencyMs: number;
}

/**
 * The provider inbox as the node uses it (node/payments.ts, node/api/providerRoutes.ts, the live
 * registry, /agents): `ProviderInbox` (x402/providers/levelInbox.ts, LevelDB, one node) and `PgInbox`
 * (x402/providers/pgInbox.ts, a fleet on a PostgreSQL ledger) implement it with the same behaviour and
 * one test suite.
 */
export interface Inbox {
  /** Bumped when an agent goes on- or offline or a stat changes (document cache keys). */
  readonly version: number;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Whether a payment already made for the agent's services is still served though it is not online (start-up grace). */
  inGrace(agent: string): boolean;
  /** Whether the agent (owner id hex) polled within the online window. */
  isOnline(agent: string): boolean;
  /** Unix ms of the agent's last poll (0: never, or not since it let a job expire). */
  lastPollAt(agent: string): number;
  statsOf(serviceId: string): ProviderStatsView;
  /** Runs one paid job: resolves with the agent's result, or rejects with a ServiceError. */
  run(serviceId: string, agent: string, request: string | undefined, input: unknown, timeoutMs: number, signal: AbortSignal): Promise<unknown>;
  /** The id inbox signatures must name: the ledger's seller id (one per node, one per fleet). */
  readonly nodeId: string;
  /** Checks a signed request; returns the signer's account id (hex), or throws InboxError. */
  authenticate(req: SignedRequest, opts?: { requireAgent?: boolean }): Promise<string>;
  /** Hands the agent its queued jobs (of one service when given), waiting up to `waitMs` for one; marks the agent online. */
  take(agent: string, waitMs: number, serviceId?: string): Promise<InboxJob[]>;
  /** The agent's answer to a job (the refusals: see ProviderInbox.answer). */
  answer(agent: string, jobId: string, answer: unknown, size: number): Promise<InboxJob>;
  /**
   * A fleet's inbox only (PgInbox): expires the open jobs of nodes gone from the fleet, run by the
   * signer lease holder's sweep; returns the jobs expired.
   */
  expireOrphaned?(goneMs?: number): Promise<number>;
}

/** Signatures already used, by the hash of their bytes (replays are refused): `add` decides, answering false when the key was there. */
export interface SeenSignatures {
  /** A cheap early look (it may miss what another node saw: `add` decides). */
  has(key: string): boolean;
  add(key: string, timestamp: number): Promise<boolean>;
}

/** What the signature check needs. */
export interface InboxAuthContext {
  readonly hrp: string;
  /** This node's id (the ledger's seller id): the one signatures must name. */
  readonly nodeId: string;
  readonly now: () => number;
  readonly keys: InboxKeys;
  readonly verifier: SignatureVerifier;
  readonly seen: SeenSignatures;
}

/**
 * Checks a signed inbox request (both implementations): headers, address, the node id, the clock
 * window, the signature's canonical shape, an early replay look, the signature itself, then the
 * replay decision (`seen.add`, after the costly check, so a forged signature cannot take a key's
 * place), then the agent's registration. Returns the signer's account id (hex). Every refusal
 * names this node's id, so a client learns what to sign for.
 */
export async function authenticateInboxRequest(req: SignedRequest, opts: { requireAgent?: boolean }, c: InboxAuthContext): Promise<string> {
  const { agent, timestamp, node, signature } = req.headers;
  const refuse = (code: string, why: string) => new InboxError(code, why, { nodeId: c.nodeId });
  const unauthorized = (why: string) => refuse(InboxErrorCode.UNAUTHORIZED, why);
  if (!agent || !timestamp || !node || !signature) {
    throw unauthorized(`sign the request for node ${c.nodeId}: X-Native-Agent, X-Native-Timestamp, X-Native-Node and X-Native-Signature are required`);
  }
  const id = tryDecodeAddress(agent, c.hrp);
  if (!id) throw unauthorized('X-Native-Agent is not an address of this chain');
  if (node !== c.nodeId) throw refuse(InboxErrorCode.SIGNATURE_FOREIGN_NODE, `the request is signed for node ${node}, this is node ${c.nodeId}: sign it for this node`);
  if (!/^\d{1,15}$/.test(timestamp) || Math.abs(c.now() - Number(timestamp)) > INBOX_CLOCK_SKEW_MS) {
    throw refuse(InboxErrorCode.SIGNATURE_EXPIRED, `X-Native-Timestamp is not within ${INBOX_CLOCK_SKEW_MS / 1000} s of the node clock (${c.now()})`);
  }
  const sig = parseInboxSignature(signature);
  if (!sig) throw unauthorized('X-Native-Signature is not the canonical base64 (padded, + and /, no whitespace) of an ML-DSA-87 and an Ed25519 signature');
  const seenKey = inboxSignatureKey(sig);
  const replay = () => refuse(InboxErrorCode.SIGNATURE_USED, 'this signature was used before (replay): sign every request afresh');
  if (c.seen.has(seenKey)) throw replay();
  const pub = await c.keys.publicKeyOf(id);
  if (!pub) throw unauthorized('this address has published no key on chain');
  const msg = inboxAuthMessage({ address: agent, nodeId: c.nodeId, method: req.method, path: req.path, body: req.body, timestamp });
  const [ok] = await c.verifier.verifyBatch([{ pub, msg, sig }]);
  if (!ok) throw unauthorized('the signature does not verify for this method, path, body, timestamp and node');
  // Remembered until it could no longer pass the clock check; two requests with one signature: one wins.
  if (!(await c.seen.add(seenKey, Number(timestamp)))) throw replay();
  if (opts.requireAgent !== false && !c.keys.isAgent(id)) throw new InboxError(InboxErrorCode.NOT_AGENT, 'this key has not registered an agent (npx native-node agent register)');
  return toHex(id);
}

/** An agent's answer, checked: a result, or a failure with its message (500 characters at most). */
export type CheckedAnswer = { readonly kind: 'result'; readonly result: unknown } | { readonly kind: 'failure'; readonly message: string };

/** Checks an answer's shape (`{result}` or `{error: {message}}`); throws InboxError `inbox_bad_answer`. */
export function checkAnswer(answer: unknown): CheckedAnswer {
  const a = answer as { result?: unknown; error?: { message?: unknown } } | null;
  const isResult = typeof a === 'object' && a !== null && 'result' in a && !('error' in a);
  const isFailure = typeof a === 'object' && a !== null && 'error' in a && !('result' in a);
  if (!isResult && !isFailure) throw new InboxError(InboxErrorCode.BAD_ANSWER, 'answer with {"result": <JSON>} or {"error": {"message": "…"}}');
  if (isResult) return { kind: 'result', result: a.result };
  return { kind: 'failure', message: typeof a.error?.message === 'string' ? a.error.message.slice(0, 500) : 'the provider reported a failure' };
}

/** The job error of a result larger than `maxBytes` (the job fails, the caller is refunded). */
export function tooLargeError(maxBytes: number): { code: string; message: string } {
  return { code: InboxErrorCode.PROVIDER_RESULT_TOO_LARGE, message: `the provider's result is larger than ${maxBytes} bytes` };
}

/** The ServiceError a job's stored error fails its run with (the paid-call core refunds on it). */
export function runErrorOf(error: { code: string; message: string }): ServiceError {
  return new ServiceError(error.code, error.code === InboxErrorCode.PROVIDER_FAILED ? `the provider failed: ${error.message}` : error.message);
}

/** The median of `latencies`, ms (0 for none). */
export function medianOf(latencies: readonly number[]): number {
  const sorted = [...latencies].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)]! : 0;
}
