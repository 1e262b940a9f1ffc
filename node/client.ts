/**
 * A small client of the node's HTTP API, used by the CLI: JSON in and out, a time limit per
 * request (the SDK's fetch wrapper, sdk/http.ts), and API errors turned back into NodeErrors
 * carrying the server's code.
 */
import { NodeError } from '../consensus/errors.js';
import { createJsonFetch, errorBody, TransportErrorCode, type JsonFetch } from '../sdk/http.js';

/** Error codes of the client itself (API errors keep the server's codes): the SDK's transport codes. */
export const ClientErrorCode = TransportErrorCode;

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
  private readonly http: JsonFetch;
  constructor(
    baseUrl: string,
    private readonly timeoutMs = 15_000,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.http = createJsonFetch({ nodeUrl: this.baseUrl, unreachableHint: 'is it running? (see --node)', error: (code, message, payload) => new NodeError(code, message, payload) });
  }

  /** Sends one request; resolves with the parsed JSON body of a 2xx answer, throws the API's coded error otherwise. */
  async request<T>(method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = this.timeoutMs): Promise<T> {
    const url = `${this.baseUrl}${path}`;
    const a = await this.http(method, url, body, timeoutMs);
    if (a.status < 200 || a.status > 299) {
      const err = errorBody(a.json);
      if (err) throw new NodeError(err.code, err.message, { status: a.status, ...err.details });
      throw new NodeError(ClientErrorCode.BAD_RESPONSE, `${method} ${url} answered ${a.status}`);
    }
    return a.json as T;
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
