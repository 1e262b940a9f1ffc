/**
 * The one fetch wrapper of the node's HTTP clients (the agent SDK and the CLI's `NodeClient`):
 * JSON in and out, a time limit per request, and transport failures as coded errors —
 * `node_unreachable` (connection refused, DNS, reset), `node_timeout`, `node_bad_response` (a
 * body that is not JSON). Answers of any status come back as `{status, json}`; what a status
 * means is the caller's business (`errorBody` reads the API's coded error body).
 *
 * Imports nothing: each client hands in the error class it throws.
 */

/** Codes of transport failures (the server's own codes pass through the callers unchanged). */
export const TransportErrorCode = {
  UNREACHABLE: 'node_unreachable',
  TIMEOUT: 'node_timeout',
  BAD_RESPONSE: 'node_bad_response',
} as const;
export type TransportErrorCode = (typeof TransportErrorCode)[keyof typeof TransportErrorCode];

/** An answer: its status and its parsed JSON body (undefined when empty). */
export interface JsonAnswer {
  readonly status: number;
  readonly json: unknown;
}

/** A JSON object. */
export type Json = Record<string, unknown>;

/** Options of `createJsonFetch`. */
export interface JsonFetchOptions {
  /** Base URL of the node, named in "unreachable" messages. */
  readonly nodeUrl: string;
  /** Builds the error thrown for a transport failure. */
  readonly error: (code: TransportErrorCode, message: string, payload: { status?: number }) => Error;
  /** Appended to "cannot reach the node" messages (e.g. a hint about `--node`). */
  readonly unreachableHint?: string;
  /** fetch implementation (default: the global one). */
  readonly fetch?: typeof fetch;
}

/** Sends one request: `(method, url, body, timeoutMs)` → the answer; throws coded transport errors. */
export type JsonFetch = (method: 'GET' | 'POST', url: string, body: unknown, timeoutMs: number) => Promise<JsonAnswer>;

/** Whether `v` is a JSON object (not null, not an array). */
export function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The coded error body `{"error": {code, message, …}}` of an answer, if it has one; `details` holds the other fields. */
export function errorBody(json: unknown): { code: string; message: string; details: Json } | undefined {
  if (!isObject(json) || !isObject(json.error) || typeof json.error.code !== 'string') return undefined;
  const { code, message, ...details } = json.error;
  return { code: code as string, message: typeof message === 'string' ? message : (code as string), details };
}

const timedOut = (e: Error) => e.name === 'TimeoutError' || e.name === 'AbortError';

/** Creates the fetch wrapper (see module comment). */
export function createJsonFetch(o: JsonFetchOptions): JsonFetch {
  const doFetch = o.fetch ?? fetch;
  const hint = o.unreachableHint ? `; ${o.unreachableHint}` : '';
  return async (method, url, body, timeoutMs) => {
    const tooLong = () => o.error(TransportErrorCode.TIMEOUT, `${method} ${url} took longer than ${timeoutMs} ms`, {});
    let res: Response;
    try {
      res = await doFetch(url, {
        method,
        headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(Math.max(1, timeoutMs)),
      });
    } catch (e) {
      const err = e as Error & { cause?: { code?: string; message?: string } };
      if (timedOut(err)) throw tooLong();
      const why = err.cause?.code ?? err.cause?.message ?? err.message;
      throw o.error(TransportErrorCode.UNREACHABLE, `cannot reach the node at ${o.nodeUrl} (${why})${hint}`, {});
    }
    let text: string;
    try {
      text = await res.text();
    } catch (e) {
      const err = e as Error;
      if (timedOut(err)) throw tooLong();
      throw o.error(TransportErrorCode.UNREACHABLE, `the connection to ${o.nodeUrl} broke (${err.message})`, {});
    }
    try {
      return { status: res.status, json: text ? JSON.parse(text) : undefined };
    } catch {
      throw o.error(TransportErrorCode.BAD_RESPONSE, `${method} ${url} answered ${res.status} with a non-JSON body`, { status: res.status });
    }
  };
}
