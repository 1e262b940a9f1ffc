/**
 * The Stratum server's line framing (stratum.ts): newline-delimited JSON-RPC over a miner's TCP
 * connection. Reading splits chunks into lines (with a length cap), pauses a connection over
 * its submit rate or one that does not read its answers, and batches the answers to one chunk
 * into one write; writing drops a client whose unsent output grows too large. `parseRequest`
 * turns a line into a request or says what is wrong with it.
 */
import type { Connection } from './stratumConnection.js';

/** Largest amount of unsent output kept for a slow client before it is dropped, bytes. */
const MAX_PENDING_WRITE = 4 * 1024 * 1024;
/** Unsent output at which the server stops reading a client's requests until it reads its answers, bytes. */
const READ_PAUSE_BYTES = 64 * 1024;
/** How long a connection over its submit rate is not read, ms. */
export const THROTTLE_MS = 1_000;

/** A JSON-RPC id as miners send it. */
export type JsonId = string | number | null;

/** One request line, parsed. */
export type StratumRequest =
  | { readonly ok: true; readonly id: JsonId; readonly method: string; readonly args: unknown[] }
  | { readonly ok: false; readonly id: JsonId; readonly message: string };

/** What the framing hands lines to and asks to close connections. */
export interface LineHandlers {
  onLine(conn: Connection, line: string): void;
  close(conn: Connection, reason: string): void;
}

/** Line framing and writes for every connection of one server (see module comment). */
export class LineChannel {
  constructor(
    private readonly maxLineBytes: number,
    private readonly h: LineHandlers,
  ) {}

  /** Reads a chunk of a connection's input: each complete line goes to `onLine`. */
  read(conn: Connection, chunk: string): void {
    if (conn.closed) return;
    conn.lastActivity = Date.now();
    const buf = conn.buffer + chunk;
    let start = 0;
    let nl: number;
    // The answers to one chunk leave in one write: a client pipelining thousands of requests
    // costs one write request per chunk, not one per line (a share flood grew memory).
    conn.outBatch = [];
    try {
      while ((nl = buf.indexOf('\n', start)) >= 0) {
        const line = buf.slice(start, nl);
        start = nl + 1;
        if (line.length > this.maxLineBytes) return this.h.close(conn, 'line too long');
        this.h.onLine(conn, line);
        if (conn.closed) return;
        if (conn.throttled) {
          // Over its submit rate: the rest waits, unread, and TCP slows the sender down.
          conn.buffer = buf.slice(start);
          conn.socket.pause();
          conn.throttleTimer = setTimeout(() => {
            conn.throttled = false;
            if (conn.closed) return;
            conn.socket.resume();
            this.read(conn, '');
          }, THROTTLE_MS);
          conn.throttleTimer.unref();
          return;
        }
      }
      conn.buffer = buf.slice(start);
      if (conn.buffer.length > this.maxLineBytes) this.h.close(conn, 'line too long');
    } finally {
      const out = conn.outBatch.join('');
      conn.outBatch = undefined;
      if (out.length > 0) this.sendLine(conn, out);
    }
    // Backpressure: a client that does not read its answers is not read either until it does.
    if (!conn.closed && !conn.throttled && conn.socket.writableLength > READ_PAUSE_BYTES && !conn.socket.isPaused()) {
      conn.socket.pause();
      conn.socket.once('drain', () => {
        if (!conn.closed && !conn.throttled) conn.socket.resume();
      });
    }
  }

  /** Sends one message as a JSON line. */
  send(conn: Connection, msg: unknown): void {
    this.sendLine(conn, `${JSON.stringify(msg)}\n`);
  }

  /** Sends text ending in a newline (batched while the connection's chunk is being read). */
  sendLine(conn: Connection, line: string): void {
    if (conn.closed) return;
    if (conn.outBatch) {
      conn.outBatch.push(line);
      return;
    }
    conn.socket.write(line);
    if (conn.socket.writableLength > MAX_PENDING_WRITE) this.h.close(conn, 'not reading its messages');
  }

  /** Answers a request with a result. */
  reply(conn: Connection, id: JsonId, result: unknown): void {
    this.send(conn, { id, result, error: null });
  }

  /** Answers a request with Stratum's error `[code, message, null]`. */
  fail(conn: Connection, id: JsonId, code: number, message: string, result: unknown = null): void {
    this.send(conn, { id, result, error: [code, message, null] });
  }
}

/** Parses a request line; undefined for a blank line or a miner's answer to a request of ours. */
export function parseRequest(raw: string): StratumRequest | undefined {
  const line = raw.trim();
  if (line.length === 0) return undefined;
  let msg: unknown;
  try {
    msg = JSON.parse(line);
  } catch {
    return { ok: false, id: null, message: 'invalid JSON' };
  }
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return { ok: false, id: null, message: 'a request is a JSON object {"id", "method", "params"}' };
  const { id: rawId, method, params } = msg as { id?: unknown; method?: unknown; params?: unknown };
  const id: JsonId = typeof rawId === 'string' || typeof rawId === 'number' ? rawId : null;
  if (typeof method !== 'string') {
    // A miner's answer to a request of ours (we send none that need one): ignore it.
    if ('result' in (msg as object) || 'error' in (msg as object)) return undefined;
    return { ok: false, id, message: 'missing "method"' };
  }
  const args = Array.isArray(params) ? params : params === undefined || params === null ? [] : undefined;
  if (!args) return { ok: false, id, message: '"params" must be an array' };
  return { ok: true, id, method, args };
}
