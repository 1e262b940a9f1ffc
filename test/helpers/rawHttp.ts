/**
 * A minimal keep-alive HTTP/1.1 client for load tests against the node on 127.0.0.1: one socket,
 * one request at a time, JSON bodies, answers with a Content-Length (what koa sends for JSON).
 * It costs about a third of `http.request`'s client CPU per 9.6 kB transaction POST (0.17 against
 * 0.55 ms, measured with the mempool flood test), which matters when the test process signs and
 * sends tens of thousands of them on the same two cores as the node.
 */
import net from 'node:net';

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
  const u = new URL(url);
  const sock = net.connect(Number(u.port), u.hostname);
  sock.setNoDelay(true);
  let buf: Buffer = Buffer.alloc(0);
  let waiting: { resolve: (a: RawAnswer) => void; reject: (e: Error) => void } | undefined;
  const fail = (e: Error) => {
    waiting?.reject(e);
    waiting = undefined;
  };
  sock.on('error', fail);
  sock.on('close', () => fail(new Error(`connection to ${u.host} closed`)));
  sock.on('data', (d: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, d]) : d;
    const end = buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    const head = buf.subarray(0, end).toString('latin1');
    const m = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!m) return fail(new Error(`answer without Content-Length: ${head.slice(0, 200)}`));
    const size = Number(m[1]);
    if (buf.length < end + 4 + size) return;
    const text = buf.subarray(end + 4, end + 4 + size).toString('utf8');
    buf = buf.subarray(end + 4 + size);
    const w = waiting;
    waiting = undefined;
    try {
      w?.resolve({ status: Number(head.slice(9, 12)), json: JSON.parse(text) as Record<string, unknown> });
    } catch (e) {
      w?.reject(e as Error);
    }
  });
  return {
    post(path, body) {
      if (waiting) return Promise.reject(new Error('openRawConnection: one request at a time'));
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        sock.write(`POST ${path} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      });
    },
    close: () => sock.destroy(),
  };
}
