/**
 * A small client of the node's HTTP API, used by the CLI: JSON in and out, a time limit per
 * request, and API errors turned back into NodeErrors carrying the server's code.
 */
import { NodeError } from '../consensus/errors.js';

/** Error codes of the client itself (API errors keep the server's codes). */
export const ClientErrorCode = {
  UNREACHABLE: 'node_unreachable',
  TIMEOUT: 'node_timeout',
  BAD_RESPONSE: 'node_bad_response',
} as const;

/** Default node URL of every CLI command. */
export const DEFAULT_NODE_URL = 'http://127.0.0.1:8402';

/** `/api/v1/status` as the CLI reads it. */
export interface StatusResponse {
  network: string;
  chainId: number;
  hrp: string;
  height: number;
  tip: string;
  difficulty: number;
  hashrate: number;
  minFeeRate: string;
  mempool: { count: number; bytes: number };
  peers: number;
  syncing: boolean;
  version: string;
  mining: { running: boolean; threads: number; hashrate: number; blocksFound: number };
  /** Settled paid calls and refunds still to be mined (nodes that sell services). */
  payments?: { settled: number; settledUsdc: number; refundsPending: number; payTo: string | null };
  [k: string]: unknown;
}

/** `/api/v1/account/:address`. */
export interface AccountResponse {
  address: string;
  balance: string;
  balanceBase: string;
  nonce: number;
  pendingNonce: number;
  publicKeyKnown: boolean;
}

/** `/api/v1/tx/:id` (common fields). */
export interface TxResponse {
  txId: string;
  status: 'pending' | 'mined';
  height: number | null;
  blockHash: string | null;
  confirmations: number;
  type: string;
  from: string;
  nonce: number;
  fee: string;
  feeBase: string;
  [k: string]: unknown;
}

/** The API client. */
export class NodeClient {
  readonly baseUrl: string;
  constructor(
    baseUrl: string,
    private readonly timeoutMs = 15_000,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  /** Sends one request; resolves with the parsed JSON body of a 2xx answer, throws the API's coded error otherwise. */
  async request<T>(method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = this.timeoutMs): Promise<T> {
    const url = `${this.baseUrl}${path}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      const err = e as Error & { cause?: { code?: string; message?: string } };
      if (err.name === 'TimeoutError' || err.name === 'AbortError') throw new NodeError(ClientErrorCode.TIMEOUT, `${method} ${url} took longer than ${timeoutMs} ms`);
      const why = err.cause?.code ?? err.cause?.message ?? err.message;
      throw new NodeError(ClientErrorCode.UNREACHABLE, `cannot reach the node at ${this.baseUrl} (${why}); is it running? (see --node)`);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      throw new NodeError(ClientErrorCode.BAD_RESPONSE, `${method} ${url} answered ${res.status} with a non-JSON body`);
    }
    if (!res.ok) {
      const err = (json as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
      if (err && typeof err.code === 'string') {
        const { code, message, ...payload } = err as Record<string, unknown>;
        throw new NodeError(code as string, String(message ?? code), { status: res.status, ...payload });
      }
      throw new NodeError(ClientErrorCode.BAD_RESPONSE, `${method} ${url} answered ${res.status}`);
    }
    return json as T;
  }

  status(timeoutMs?: number): Promise<StatusResponse> {
    return this.request('GET', '/api/v1/status', undefined, timeoutMs);
  }

  account(address: string): Promise<AccountResponse> {
    return this.request('GET', `/api/v1/account/${encodeURIComponent(address)}`);
  }

  tx(id: string): Promise<TxResponse> {
    return this.request('GET', `/api/v1/tx/${encodeURIComponent(id)}`);
  }

  submitTx(hex: string): Promise<{ txId: string; status: 'accepted' }> {
    return this.request('POST', '/api/v1/tx', { tx: hex });
  }
}
