/**
 * A keep-alive HTTP/1.1 connection for load tests against the node on 127.0.0.1: undici's
 * `Client` (one socket, no pipelining), JSON bodies. It costs well under `http.request`'s client
 * CPU per 9.6 kB transaction POST, which matters when the test process signs and sends tens of
 * thousands of them on the same two cores as the node.
 */
import { Client } from 'undici';

/** An answer: status and parsed JSON body. */
export interface RawAnswer {
  readonly status: number;
  readonly json: Record<string, unknown>;
}

/** One keep-alive connection; `post` calls must not overlap (await each). */
export interface RawConnection {
  post(path: string, body: string): Promise<RawAnswer>;
  close(): void;
}

/** Opens a connection to the `http://host:port` of `url`. */
export function openRawConnection(url: string): RawConnection {
  const client = new Client(new URL(url).origin, { pipelining: 1 });
  return {
    async post(path, body) {
      const res = await client.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body });
      return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
    },
    close: () => void client.close(),
  };
}
