/**
 * Client of an x402 facilitator's HTTP API (`POST /verify`, `POST /settle`, `GET /supported`),
 * as the reference's `useFacilitator` speaks it: body `{x402Version, paymentPayload,
 * paymentRequirements}`, answers `{isValid, invalidReason?, payer?}` and `{success, errorReason?,
 * payer?, transaction, network}`.
 *
 * Protocol outcomes (a refused payment, a failed settlement) are values. Transport failures —
 * unreachable, a 5xx, an answer that is not the API's JSON, no answer in time — are a
 * `FacilitatorUnavailableError` (code `facilitator_unavailable`, `timedOut` telling 504 from 502):
 * the caller must never treat them as a verified payment.
 *
 * Every call has a deadline. `/verify` is retried (it has no side effect) on connection errors
 * and 5xx within its deadline; `/settle` is retried only when the connection was refused (the
 * request surely never arrived), because a settlement that may have been broadcast must not be
 * sent twice.
 */
import { NodeError } from '../../consensus/errors.js';
import { UsdcErrorCode } from './wire.js';

/** Options of the facilitator client. */
export interface FacilitatorClientOptions {
  /** Base URL, e.g. `https://x402.org/facilitator` (no trailing slash needed). */
  readonly url: string;
  /** One extra request header as `Name: value` (e.g. `Authorization: Bearer …`). */
  readonly authHeader?: string;
  /** Deadline of one `/verify` or `/supported` call, retries included, ms. */
  readonly verifyTimeoutMs?: number;
  /** Deadline of one `/settle` call, ms (settling waits for the Base transaction). */
  readonly settleTimeoutMs?: number;
  /** Attempts of `/verify` within its deadline. */
  readonly verifyAttempts?: number;
  /** Pause between attempts, ms (doubles each time). */
  readonly retryDelayMs?: number;
  /** Injected in tests. */
  readonly fetch?: typeof fetch;
}

/** Defaults of the facilitator client. */
export const defaultFacilitatorClientOptions = { verifyTimeoutMs: 10_000, settleTimeoutMs: 30_000, verifyAttempts: 3, retryDelayMs: 200 } as const;

/** Largest facilitator answer read, bytes. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** The facilitator's verdict on a payment. */
export interface FacilitatorVerifyResponse {
  readonly isValid: boolean;
  readonly invalidReason?: string;
  readonly payer?: string;
}

/** The facilitator's settlement report. */
export interface FacilitatorSettleResponse {
  readonly success: boolean;
  readonly errorReason?: string;
  readonly payer?: string;
  /** 0x hash of the transaction (empty when nothing was sent). */
  readonly transaction: string;
  readonly network: string;
}

/** `GET /supported`. */
export interface FacilitatorSupported {
  readonly kinds: readonly { x402Version: number; scheme: string; network: string; extra?: Record<string, unknown> }[];
}

/** Body of `/verify` and `/settle`. */
export interface FacilitatorRequest {
  readonly x402Version: number;
  readonly paymentPayload: unknown;
  readonly paymentRequirements: unknown;
}

/** The facilitator could not be used: unreachable, broken answer, or no answer in time. */
export class FacilitatorUnavailableError extends NodeError<typeof UsdcErrorCode.FACILITATOR_UNAVAILABLE, { endpoint: string; timedOut: boolean }> {
  constructor(endpoint: string, timedOut: boolean, message: string) {
    super(UsdcErrorCode.FACILITATOR_UNAVAILABLE, message, { endpoint, timedOut });
    this.name = 'FacilitatorUnavailableError';
  }
  /** True when the facilitator did not answer within the deadline (HTTP 504 rather than 502). */
  get timedOut(): boolean {
    return this.payload.timedOut;
  }
}

/** What the USDC rail needs of a facilitator (tests substitute their own). */
export interface Facilitator {
  verify(body: FacilitatorRequest): Promise<FacilitatorVerifyResponse>;
  settle(body: FacilitatorRequest): Promise<FacilitatorSettleResponse>;
  supported(): Promise<FacilitatorSupported>;
}

/** Parses `Name: value` into a header pair; throws on anything else. */
export function parseAuthHeader(text: string): [string, string] {
  const m = /^([A-Za-z0-9!#$%&'*+.^_`|~-]+):\s*(.+)$/.exec(text.trim());
  if (!m) throw new RangeError('the facilitator auth header must look like "Name: value"');
  return [m[1], m[2].trim()];
}

function causeCode(e: unknown): string | undefined {
  const cause = (e as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** HTTP client of one facilitator (see module comment). */
export class HttpFacilitator implements Facilitator {
  private readonly base: string;
  private readonly headers: Record<string, string>;
  private readonly opts: Required<Omit<FacilitatorClientOptions, 'authHeader' | 'fetch' | 'url'>>;
  private readonly fetchFn: typeof fetch;

  constructor(opts: FacilitatorClientOptions) {
    this.base = opts.url.replace(/\/+$/, '');
    this.headers = { 'content-type': 'application/json', accept: 'application/json' };
    if (opts.authHeader) {
      const [name, value] = parseAuthHeader(opts.authHeader);
      this.headers[name.toLowerCase()] = value;
    }
    this.opts = {
      verifyTimeoutMs: opts.verifyTimeoutMs ?? defaultFacilitatorClientOptions.verifyTimeoutMs,
      settleTimeoutMs: opts.settleTimeoutMs ?? defaultFacilitatorClientOptions.settleTimeoutMs,
      verifyAttempts: Math.max(1, opts.verifyAttempts ?? defaultFacilitatorClientOptions.verifyAttempts),
      retryDelayMs: opts.retryDelayMs ?? defaultFacilitatorClientOptions.retryDelayMs,
    };
    this.fetchFn = opts.fetch ?? fetch;
  }

  /** The facilitator's base URL. */
  get url(): string {
    return this.base;
  }

  /** `POST /verify`: the facilitator's verdict (retried on transport errors within the deadline). */
  async verify(body: FacilitatorRequest): Promise<FacilitatorVerifyResponse> {
    const data = await this.call('/verify', 'POST', body, this.opts.verifyTimeoutMs, this.opts.verifyAttempts, 'transient', (d) => typeof d.isValid === 'boolean');
    const out: FacilitatorVerifyResponse = { isValid: data.isValid as boolean };
    return { ...out, ...(typeof data.invalidReason === 'string' ? { invalidReason: data.invalidReason } : {}), ...(typeof data.payer === 'string' ? { payer: data.payer } : {}) };
  }

  /** `POST /settle`: the settlement report (re-sent only if the connection was refused). */
  async settle(body: FacilitatorRequest): Promise<FacilitatorSettleResponse> {
    const data = await this.call('/settle', 'POST', body, this.opts.settleTimeoutMs, 2, 'refused', (d) => typeof d.success === 'boolean');
    return {
      success: data.success as boolean,
      transaction: typeof data.transaction === 'string' ? data.transaction : '',
      network: typeof data.network === 'string' ? data.network : '',
      ...(typeof data.errorReason === 'string' ? { errorReason: data.errorReason } : {}),
      ...(typeof data.payer === 'string' ? { payer: data.payer } : {}),
    };
  }

  /** `GET /supported`: the payment kinds the facilitator settles. */
  async supported(): Promise<FacilitatorSupported> {
    const data = await this.call('/supported', 'GET', undefined, this.opts.verifyTimeoutMs, this.opts.verifyAttempts, 'transient', (d) => Array.isArray(d.kinds));
    return data as unknown as FacilitatorSupported;
  }

  /**
   * One API call with a deadline over all attempts. An answer whose JSON passes `isAnswer` is
   * returned whatever its status below 500 (facilitators answer a refusal with 200 or 400).
   */
  private async call(
    path: string,
    method: 'GET' | 'POST',
    body: unknown,
    timeoutMs: number,
    attempts: number,
    retryOn: 'transient' | 'refused',
    isAnswer: (d: Record<string, unknown>) => boolean,
  ): Promise<Record<string, unknown>> {
    const endpoint = `${this.base}${path}`;
    const deadline = Date.now() + timeoutMs;
    let last = 'no attempt made';
    for (let attempt = 1; ; attempt++) {
      const left = deadline - Date.now();
      if (left <= 0) throw new FacilitatorUnavailableError(endpoint, true, `the facilitator did not answer ${path} within ${timeoutMs} ms (${last})`);
      let retryable = false;
      try {
        const res = await this.fetchFn(endpoint, {
          method,
          headers: this.headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(left),
          redirect: 'error',
        });
        const text = await readLimited(res, MAX_ANSWER_BYTES);
        let data: unknown;
        try {
          data = JSON.parse(text);
        } catch {
          data = undefined;
        }
        if (res.status < 500 && typeof data === 'object' && data !== null && !Array.isArray(data) && isAnswer(data as Record<string, unknown>)) return data as Record<string, unknown>;
        last = `HTTP ${res.status}${data === undefined ? ', not JSON' : ''}`;
        retryable = retryOn === 'transient' && res.status >= 500;
      } catch (e) {
        const name = (e as { name?: string }).name;
        if (name === 'TimeoutError' || name === 'AbortError') throw new FacilitatorUnavailableError(endpoint, true, `the facilitator did not answer ${path} within ${timeoutMs} ms`);
        const code = causeCode(e);
        const causeMessage = (e as { cause?: { message?: unknown } }).cause?.message;
        last = code ?? (typeof causeMessage === 'string' ? causeMessage : e instanceof Error ? e.message : String(e));
        retryable = retryOn === 'transient' || code === 'ECONNREFUSED';
      }
      if (!retryable || attempt >= attempts) throw new FacilitatorUnavailableError(endpoint, false, `the facilitator's ${path} failed: ${last}`);
      const pause = this.opts.retryDelayMs * 2 ** (attempt - 1);
      if (Date.now() + pause >= deadline) throw new FacilitatorUnavailableError(endpoint, false, `the facilitator's ${path} failed: ${last}`);
      await sleep(pause);
    }
  }
}

/** Reads at most `limit` bytes of a response body as UTF-8 (a larger one is cut, then fails to parse). */
async function readLimited(res: Response, limit: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) break;
      chunks.push(value);
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Creates the HTTP facilitator client. */
export function createFacilitator(opts: FacilitatorClientOptions): HttpFacilitator {
  return new HttpFacilitator(opts);
}
