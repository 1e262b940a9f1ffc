/**
 * The Stratum v1 server: unmodified SHA-256d mining software and ASICs mine the chain through it.
 *
 * Wire (newline-delimited JSON-RPC over TCP, as cpuminer, cgminer, bfgminer and ASIC firmwares
 * speak it):
 *   mining.subscribe [agent?, session?]  → [[["mining.set_difficulty", id], ["mining.notify", id]], extranonce1 (4 bytes hex), 4]
 *   mining.authorize [user, password]    → true; user = payout address, optionally `address.worker`;
 *                                          password `d=<difficulty>` asks for a starting difficulty
 *   mining.configure [exts, params]      → BIP 310: version-rolling (mask 1fffe000), minimum-difficulty
 *   mining.suggest_difficulty [d]        → true; the next jobs use d (within the server's bounds)
 *   mining.extranonce.subscribe []       → true (the extranonce never changes)
 *   mining.submit [worker, job, extranonce2, ntime, nonce(, version bits)] → true, or false with
 *     error [20 other | 21 job not found / stale | 22 duplicate | 23 low difficulty | 24 unauthorised | 25 not subscribed, message, null]
 * and it sends `mining.set_difficulty [d]` (always before the `mining.notify` it applies to) and
 * `mining.notify [job, prevhash, coinb1, coinb2, branch[], version, nbits, ntime, clean_jobs]`.
 *
 * Work: one block template per tip and mempool state, from the mining job feed (chain/jobFeed.ts,
 * which owns the tip and mempool subscriptions, the debouncing and the stale-parent retries).
 * Each connection mines a coinbase paying its own worker's address (solo mining per worker): only
 * coinb1 differs between connections, the merkle branch and the transactions are shared. The
 * coinbase's 8-byte extranonce slot is extranonce1 (4 bytes, unique per connection) ‖
 * extranonce2 (4 bytes, the miner's). Prevhash is sent word-swapped, as every miner expects.
 *
 * Jobs: a new tip sends a new job with clean_jobs = true at once (measured from the chain's 'tip'
 * event to the last socket write: `lastNotifyLatencyMs`); mempool changes send one at most every
 * `mempoolRefreshMs`; without either, a fresh job goes out every `keepAliveMs` (miners drop a
 * silent pool after 90–120 s). Jobs of the last `jobHistory` templates stay valid while they
 * build on the tip (late shares of a replaced template are still good work); those of an older
 * tip are answered "stale".
 *
 * Shares: checked in this order — parameters, subscription, authorisation, job, extranonce2,
 * ntime window ([median time past + 1, now + maxFutureBlockTime], so every share could be a
 * valid block), nonce, version bits within the negotiated mask, duplicate, then the hash. A hash
 * at or under the block target becomes a block at once (`chain.addBlock`; the chain's 'tip' then
 * sends everyone the next job); otherwise it must meet the share target, with the usual 1 %
 * tolerance for miners that compute targets in floating point.
 *
 * Difficulty: per connection, aiming at one share every `targetShareSeconds`: after
 * `retargetShares` shares or `retargetMs`, the rate of accepted difficulty sets the next
 * difficulty (up ×1024 or down ÷4 per step, ignored within −30 %/+40 %); a connection without
 * shares is eased down. The share difficulty never exceeds the block's own difficulty, so a miner
 * never sits on a block it believes is only a share.
 */
import { EventEmitter } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { blockHash, encodeBlock, EXTRANONCE_OFFSET, EXTRANONCE_SIZE, type Block } from '../../consensus/block.js';
import { NodeError, isNodeError } from '../../consensus/errors.js';
import { fromHex, toHex } from '../../consensus/hash.js';
import { ADDRESS_SIZE } from '../../consensus/keys.js';
import { difficultyOfBits, hashToBigInt } from '../../consensus/pow.js';
import type { ChainParams } from '../../consensus/params.js';
import { templateForMiner, templateHeader, type BlockTemplate } from '../../chain/template.js';
import { createJobFeed, type JobFeed, type MiningJob } from '../../chain/jobFeed.js';
import type { MinerChain, MinerMempool } from '../../chain/miner.js';
import { silentLogger, type Logger } from '../../chain/types.js';
import { LogSummary, DEFAULT_LOG_SUMMARY_MS } from '../logSummary.js';
import { TokenBucket, clientAddress } from '../rateLimit.js';
import type { MiningStats } from './stats.js';
import { ConnectionGate, type StratumBan, type StratumRefusals } from './stratumGate.js';
import { Connection, type Work } from './stratumConnection.js';
import { hex32, parseHex32, parseWorkerName, stratumPrevHash, targetFromDifficulty, type WorkerIdentity } from './work.js';

/** Error codes of the server's lifecycle. */
export const StratumErrorCode = {
  LISTEN_FAILED: 'stratum_listen_failed',
} as const;

/** Stratum's numeric error codes (the first element of an `error` array). */
export const StratumError = {
  OTHER: 20,
  JOB_NOT_FOUND: 21,
  DUPLICATE: 22,
  LOW_DIFFICULTY: 23,
  UNAUTHORIZED: 24,
  NOT_SUBSCRIBED: 25,
} as const;

/** Version bits miners may roll (BIP 310 / BIP 320's general-purpose bits). */
export const VERSION_ROLLING_MASK = 0x1fffe000;
/** Bytes of extranonce2 the miner fills (the other 4 of the slot are extranonce1). */
export const EXTRANONCE2_SIZE = 4;
/** Tolerance on the share target: miners compute it in floating point. */
export const SHARE_TOLERANCE = 0.99;

/** Options of the Stratum server. */
export interface StratumOptions {
  readonly host: string;
  /** TCP port; 0 picks a free one (logged in the "stratum listening" line). */
  readonly port: number;
  /** Fail `start()` when the port cannot be bound; false logs a warning and runs without Stratum. */
  readonly required: boolean;
  /** Share difficulty of a new connection (a 2-core CPU miner, ~12 MH/s, finds one every ~4 s at 0.01). */
  readonly initialDifficulty: number;
  readonly minDifficulty: number;
  readonly maxDifficulty: number;
  /** Seconds between shares that variable difficulty aims at. */
  readonly targetShareSeconds: number;
  /** Retarget after this many accepted shares… */
  readonly retargetShares: number;
  /** …or after this long, ms. */
  readonly retargetMs: number;
  /** Longest time without a new job, ms (at most 30 s). */
  readonly keepAliveMs: number;
  /** Shortest interval between jobs caused by mempool changes, ms. */
  readonly mempoolRefreshMs: number;
  /** Templates whose jobs are still accepted (while they build on the tip). */
  readonly jobHistory: number;
  /** Connections at most, every address together. */
  readonly maxConnections: number;
  /** Connections one client address may hold at most (further ones are closed at once). */
  readonly maxConnectionsPerAddress: number;
  /**
   * Slots only an address holding no connection yet may take: one address (or a few) filling the
   * server leaves room for a new miner. When the server is full, a newcomer evicts a connection
   * that has not finished its handshake, taken from the address holding the most.
   */
  readonly reservedConnections: number;
  /** Longest request line, bytes (a longer one closes the connection). */
  readonly maxLineBytes: number;
  /** A connection that has not subscribed and authorised within this time is closed, ms. */
  readonly handshakeTimeoutMs: number;
  /** Shares one connection may submit per second, on average (more are refused without being checked). */
  readonly submitsPerSecond: number;
  /** Shares one connection may submit in a burst. */
  readonly submitBurst: number;
  /**
   * Ban: after `banMinShares` judged shares, a connection of which at least `banInvalidPercent` %
   * were invalid (low difficulty, duplicate, unknown job, malformed, over the rate limit; stale
   * shares do not count) is closed and its address refused for `banSeconds` (0: closed, not banned).
   */
  readonly banSeconds: number;
  readonly banInvalidPercent: number;
  readonly banMinShares: number;
  /** Interval of the summary lines of repeated per-client log events, ms. */
  readonly logSummaryMs: number;
  /** A connection that sends nothing for this long is closed, ms. */
  readonly idleTimeoutMs: number;
  /** Coinbase tag (UTF-8, at most 40 bytes). */
  readonly tag: string;
  /** Clock in Unix seconds (the chain's clock: block times and the ntime window). */
  readonly now?: () => number;
}

/** Defaults of StratumOptions. */
export const defaultStratumOptions: StratumOptions = {
  host: '127.0.0.1',
  port: 3333,
  required: true,
  initialDifficulty: 0.01,
  minDifficulty: 2 ** -32,
  maxDifficulty: 2 ** 40,
  targetShareSeconds: 5,
  retargetShares: 12,
  retargetMs: 30_000,
  keepAliveMs: 25_000,
  mempoolRefreshMs: 3_000,
  jobHistory: 16,
  maxConnections: 1_000,
  maxConnectionsPerAddress: 32,
  reservedConnections: 100,
  maxLineBytes: 16 * 1024,
  handshakeTimeoutMs: 10_000,
  submitsPerSecond: 50,
  submitBurst: 200,
  banSeconds: 600,
  banInvalidPercent: 90,
  banMinShares: 100,
  logSummaryMs: DEFAULT_LOG_SUMMARY_MS,
  idleTimeoutMs: 15 * 60_000,
  tag: 'native-node',
};

/** What the server needs from the chain and the mempool (the node's `Chain` and `Mempool`). */
export interface StratumModules {
  readonly chain: MinerChain;
  readonly mempool: MinerMempool;
  readonly params: ChainParams;
  readonly stats: MiningStats;
  readonly logger?: Logger;
  /** A job feed shared with other consumers (started and stopped by its owner); default: one of the server's own. */
  readonly feed?: JobFeed;
}

/** A job went out. */
export interface StratumJobEvent {
  readonly jobId: string;
  readonly height: number;
  readonly parentHash: string;
  readonly clean: boolean;
  /** Connections it was sent to. */
  readonly connections: number;
  /** ms from the chain's 'tip' event to the last socket write, for the first job of a new tip. */
  readonly sinceTipMs?: number;
}

/** A share was judged. */
export interface StratumShareEvent {
  readonly worker: string;
  readonly result: 'accepted' | 'rejected' | 'stale';
  readonly difficulty: number;
  readonly code?: number;
  readonly reason?: string;
  readonly block: boolean;
}

/** A share became a block. */
export interface StratumBlockEvent {
  readonly hash: string;
  readonly height: number;
  readonly worker: string;
  readonly status: string;
}

/** Events of the server. */
export interface StratumEvents {
  job: [event: StratumJobEvent];
  share: [event: StratumShareEvent];
  block: [event: StratumBlockEvent];
}

/** The options `info().limits` shows. */
const LIMIT_KEYS = ['maxConnections', 'maxConnectionsPerAddress', 'reservedConnections', 'handshakeTimeoutMs', 'submitsPerSecond', 'submitBurst', 'banSeconds', 'banInvalidPercent', 'banMinShares'] as const;

/** Stratum's abuse counters and bans (stratumGate.ts), re-exported for the server's users. */
export type { StratumBan, StratumRefusals };

/** The server's state for `GET /api/v1/mining`. */
export interface StratumInfo {
  readonly enabled: boolean;
  readonly listening: boolean;
  readonly host: string;
  readonly port: number | null;
  readonly url: string | null;
  readonly connections: number;
  readonly job: { readonly id: string; readonly height: number; readonly parentHash: string; readonly transactions: number; readonly sentAt: number } | null;
  readonly difficulty: { readonly initial: number; readonly min: number; readonly max: number; readonly targetShareSeconds: number; readonly network: number | null };
  /** Last measured delay from a new tip to its job on every socket, ms. */
  readonly lastNotifyLatencyMs: number | null;
  /** The last measurements, newest last. */
  readonly notifyLatencyMs: readonly number[];
  /** The abuse limits in force (see StratumOptions). */
  readonly limits: Pick<StratumOptions, (typeof LIMIT_KEYS)[number]>;
  /** What the limits refused since the start. */
  readonly refused: StratumRefusals;
  /** Client addresses banned now (their shares were overwhelmingly invalid). */
  readonly bans: readonly StratumBan[];
}


/** Largest amount of unsent output kept for a slow client before it is dropped, bytes. */
const MAX_PENDING_WRITE = 4 * 1024 * 1024;
/** Unsent output at which the server stops reading a client's requests until it reads its answers, bytes. */
const READ_PAUSE_BYTES = 64 * 1024;
/** How long a connection over its submit rate is not read, ms. */
const THROTTLE_MS = 1_000;
/** Worker names one connection may authorise (proxies multiplex several). */
const MAX_WORKERS_PER_CONNECTION = 64;
/** Malformed lines tolerated before a connection is closed. */
const MAX_BAD_LINES = 10;
const TICK_MS = 1_000;
/** What the block lane answers for a block whose parent is no longer the tip. */
const STALE_BLOCK = 'stale';
const LATENCY_SAMPLES = 20;
/**
 * Offset of the payee inside the coinbase (and so inside coinb1): the coinbase is
 * `u8 version ‖ u32 chainId ‖ u32 height ‖ miner(20) ‖ u64 reward ‖ u64 fees ‖ extranonce(8) ‖ …`,
 * so the miner ends 16 bytes before the extranonce slot.
 */
const COINBASE_MINER_OFFSET = EXTRANONCE_OFFSET - 16 - ADDRESS_SIZE;

function perfNow(): number {
  return performance.timeOrigin + performance.now();
}

type JsonId = string | number | null;

/** The Stratum v1 server (see module comment). */
export class StratumServer extends EventEmitter<StratumEvents> {
  private readonly opts: StratumOptions;
  private readonly chain: MinerChain;
  private readonly mempool: MinerMempool;
  private readonly params: ChainParams;
  private readonly stats: MiningStats;
  private readonly log: Logger;
  private readonly now: () => number;
  private server?: Server;
  private boundPort?: number;
  private running = false;
  private readonly conns = new Map<number, Connection>();
  private nextConnId = 1;
  /** Block submissions, one after the other (see `inBlockLane`). */
  private blockLane: Promise<unknown> = Promise.resolve();
  private extranonceCounter = randomBytes(4).readUInt32BE(0);
  /** Retained works, oldest first. */
  private works: Work[] = [];
  private readonly jobs = new Map<string, Work>();
  private nextJobId = 1;
  private current?: Work;
  /** Where jobs come from (chain/jobFeed.ts): tip, mempool and keep-alive templates. */
  private readonly feed: JobFeed;
  private readonly ownsFeed: boolean;
  private tick?: NodeJS.Timeout;
  private readonly latencies: number[] = [];
  private readonly pending = new Set<Promise<unknown>>();
  /** Per-address caps, reserved slots, eviction and bans (stratumGate.ts). */
  private readonly gate: ConnectionGate<Connection>;
  /** Repeated per-client events, logged once per client and interval plus a summary line. */
  private readonly logs: { authorized: LogSummary; authRefused: LogSummary; refused: LogSummary; banned: LogSummary };

  constructor(opts: Partial<StratumOptions>, modules: StratumModules) {
    super();
    this.opts = { ...defaultStratumOptions, ...opts };
    if (this.opts.keepAliveMs > 30_000) throw new RangeError('keepAliveMs must be at most 30 s');
    this.chain = modules.chain;
    this.mempool = modules.mempool;
    this.params = modules.params;
    this.stats = modules.stats;
    this.log = modules.logger ?? silentLogger;
    this.now = this.opts.now ?? (() => Math.floor(Date.now() / 1000));
    this.gate = new ConnectionGate(this.opts, (conn, reason) => this.close(conn, reason));
    this.ownsFeed = modules.feed === undefined;
    this.feed = modules.feed ?? createJobFeed({ mempoolRefreshMs: this.opts.mempoolRefreshMs, keepAliveMs: this.opts.keepAliveMs, tag: this.opts.tag, now: this.now }, { chain: this.chain, mempool: this.mempool, params: this.params, logger: this.log });
    const every = { intervalMs: this.opts.logSummaryMs };
    this.logs = {
      authorized: new LogSummary(this.log, 'stratum worker authorized', { ...every, level: 'info' }),
      authRefused: new LogSummary(this.log, 'stratum authorization refused', { ...every, level: 'warn' }),
      refused: new LogSummary(this.log, 'stratum connection refused', { ...every, level: 'warn' }),
      banned: new LogSummary(this.log, 'stratum client banned', { ...every, level: 'warn' }),
    };
  }

  /** Whether the server is accepting connections. */
  get listening(): boolean {
    return this.server !== undefined;
  }

  /** Bound port (after `start`), or undefined when not listening. */
  get port(): number | undefined {
    return this.boundPort;
  }

  /** `stratum+tcp://host:port` once listening. */
  get url(): string | undefined {
    if (this.boundPort === undefined) return undefined;
    const host = this.opts.host.includes(':') ? `[${this.opts.host}]` : this.opts.host;
    return `stratum+tcp://${host}:${this.boundPort}`;
  }

  /** Binds the port, builds the first template and starts following the chain and the mempool. */
  async start(): Promise<void> {
    if (this.running) return;
    // No `server.maxConnections`: the limits are ours (`admit`), so a newcomer can evict a squatter.
    const server = createServer({ noDelay: true }, (socket) => this.onConnection(socket));
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.opts.port, this.opts.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
      const message = `cannot listen for Stratum on ${this.opts.host}:${this.opts.port}: ${code}`;
      if (this.opts.required) throw new NodeError(StratumErrorCode.LISTEN_FAILED, message, { host: this.opts.host, port: this.opts.port });
      this.log.warn({ host: this.opts.host, port: this.opts.port, err: code }, `${message}; Stratum is off (set --stratum-port)`);
      return;
    }
    server.on('error', (e) => this.log.error({ err: e.message }, 'stratum server error'));
    this.server = server;
    this.boundPort = (server.address() as AddressInfo).port;
    this.running = true;
    this.feed.on('job', this.onJob);
    this.tick = setInterval(() => this.onTick(), TICK_MS);
    this.tick.unref();
    if (this.ownsFeed) await this.feed.start();
    else if (this.feed.current) this.onJob({ ...this.feed.current, clean: true, tipSeenAt: undefined });
    this.log.info({ host: this.opts.host, port: this.boundPort, url: this.url, height: this.current?.tpl.height }, 'stratum listening');
  }

  /** Closes every connection and the port; waits for blocks being submitted. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.feed.off('job', this.onJob);
    if (this.ownsFeed) this.feed.stop();
    clearInterval(this.tick);
    const server = this.server;
    this.server = undefined;
    this.boundPort = undefined;
    for (const c of this.conns.values()) c.socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.allSettled([...this.pending]);
    for (const l of Object.values(this.logs)) l.stop();
    this.log.info({}, 'stratum stopped');
  }

  /** The server's state (port, connections, current job, difficulty bounds, notify latency). */
  info(): StratumInfo {
    const cur = this.current;
    return {
      enabled: true,
      listening: this.listening,
      host: this.opts.host,
      port: this.boundPort ?? null,
      url: this.url ?? null,
      connections: this.conns.size,
      job: cur ? { id: cur.jobIds[0], height: cur.tpl.height, parentHash: cur.tpl.parentHash, transactions: cur.tpl.txIds.length, sentAt: cur.createdAt } : null,
      difficulty: { initial: this.opts.initialDifficulty, min: this.opts.minDifficulty, max: this.opts.maxDifficulty, targetShareSeconds: this.opts.targetShareSeconds, network: cur ? cur.netDifficulty : null },
      lastNotifyLatencyMs: this.latencies.length ? this.latencies[this.latencies.length - 1] : null,
      notifyLatencyMs: this.latencies.slice(),
      limits: Object.fromEntries(LIMIT_KEYS.map((k) => [k, this.opts[k]])) as StratumInfo['limits'],
      refused: { ...this.gate.refusals },
      bans: this.gate.listBans(),
    };
  }

  // ---- connections ----

  private nextExtranonce1(): Uint8Array {
    const inUse = new Set([...this.conns.values()].map((c) => c.extranonce1Hex));
    for (;;) {
      this.extranonceCounter = (this.extranonceCounter + 1) >>> 0;
      const e = Buffer.alloc(4);
      e.writeUInt32BE(this.extranonceCounter, 0);
      if (!inUse.has(e.toString('hex'))) return new Uint8Array(e);
    }
  }

  private onConnection(socket: Socket): void {
    if (!this.running) {
      socket.destroy();
      return;
    }
    const address = clientAddress(socket.remoteAddress);
    const refusal = this.gate.admit(address);
    if (refusal) {
      this.logs.refused.note(address, { reason: refusal, connections: this.conns.size, fromAddress: this.gate.held(address) });
      socket.on('error', () => undefined);
      socket.destroy();
      return;
    }
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 60_000);
    socket.setEncoding('utf8');
    const submits = new TokenBucket({ ratePerSecond: this.opts.submitsPerSecond, burst: this.opts.submitBurst }, Date.now());
    const conn = new Connection(this.nextConnId++, socket, this.nextExtranonce1(), this.opts.initialDifficulty, address, submits);
    this.conns.set(conn.id, conn);
    this.gate.added(conn);
    this.log.debug({ conn: conn.id, remote: conn.remote }, 'stratum connection');
    socket.on('data', (chunk: string) => this.onData(conn, chunk));
    socket.on('error', (e) => this.log.debug({ conn: conn.id, err: e.message }, 'stratum socket error'));
    socket.on('close', () => this.onClose(conn));
  }

  private onClose(conn: Connection): void {
    if (conn.closed) return;
    conn.closed = true;
    clearTimeout(conn.throttleTimer);
    this.conns.delete(conn.id);
    this.gate.removed(conn);
    for (const name of conn.workerNames) this.stats.workerDisconnected(name);
    this.log.debug({ conn: conn.id, remote: conn.remote, workers: [...conn.workerNames] }, 'stratum connection closed');
  }

  private close(conn: Connection, reason: string): void {
    this.log.debug({ conn: conn.id, remote: conn.remote, reason }, 'stratum connection dropped');
    conn.socket.destroy();
    this.onClose(conn);
  }

  private onData(conn: Connection, chunk: string): void {
    if (conn.closed) return;
    conn.lastActivity = Date.now();
    const buf = conn.buffer + chunk;
    let start = 0;
    let nl: number;
    // The answers to one chunk leave in one write: a client pipelining thousands of requests
    // costs one write request per chunk, not one per line (issue 22: a share flood grew memory).
    conn.outBatch = [];
    try {
      while ((nl = buf.indexOf('\n', start)) >= 0) {
        const line = buf.slice(start, nl);
        start = nl + 1;
        if (line.length > this.opts.maxLineBytes) return this.close(conn, 'line too long');
        this.onLine(conn, line);
        if (conn.closed) return;
        if (conn.throttled) {
          // Over its submit rate: the rest waits, unread, and TCP slows the sender down.
          conn.buffer = buf.slice(start);
          conn.socket.pause();
          conn.throttleTimer = setTimeout(() => {
            conn.throttled = false;
            if (conn.closed) return;
            conn.socket.resume();
            this.onData(conn, '');
          }, THROTTLE_MS);
          conn.throttleTimer.unref();
          return;
        }
      }
      conn.buffer = buf.slice(start);
      if (conn.buffer.length > this.opts.maxLineBytes) this.close(conn, 'line too long');
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

  private send(conn: Connection, msg: unknown): void {
    this.sendLine(conn, `${JSON.stringify(msg)}\n`);
  }

  private sendLine(conn: Connection, line: string): void {
    if (conn.closed) return;
    if (conn.outBatch) {
      conn.outBatch.push(line);
      return;
    }
    conn.socket.write(line);
    if (conn.socket.writableLength > MAX_PENDING_WRITE) this.close(conn, 'not reading its messages');
  }

  private reply(conn: Connection, id: JsonId, result: unknown): void {
    this.send(conn, { id, result, error: null });
  }

  private fail(conn: Connection, id: JsonId, code: number, message: string, result: unknown = null): void {
    this.send(conn, { id, result, error: [code, message, null] });
  }

  private onLine(conn: Connection, raw: string): void {
    const line = raw.trim();
    if (line.length === 0) return;
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      this.badLine(conn, null, 'invalid JSON');
      return;
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) {
      this.badLine(conn, null, 'a request is a JSON object {"id", "method", "params"}');
      return;
    }
    const { id: rawId, method, params } = msg as { id?: unknown; method?: unknown; params?: unknown };
    const id: JsonId = typeof rawId === 'string' || typeof rawId === 'number' ? rawId : null;
    if (typeof method !== 'string') {
      // A miner's answer to a request of ours (we send none that need one): ignore it.
      if ('result' in (msg as object) || 'error' in (msg as object)) return;
      this.badLine(conn, id, 'missing "method"');
      return;
    }
    const args = Array.isArray(params) ? params : params === undefined || params === null ? [] : undefined;
    if (!args) {
      this.badLine(conn, id, '"params" must be an array');
      return;
    }
    switch (method) {
      case 'mining.subscribe':
        return this.onSubscribe(conn, id, args);
      case 'mining.authorize':
        return this.onAuthorize(conn, id, args);
      case 'mining.configure':
        return this.onConfigure(conn, id, args);
      case 'mining.suggest_difficulty':
        return this.onSuggestDifficulty(conn, id, args);
      case 'mining.extranonce.subscribe':
        return this.reply(conn, id, true);
      case 'mining.submit': {
        if (!conn.submits.take(Date.now())) {
          // Refused before any work: a flood costs a token check and one short answer per line.
          this.gate.refusals.rateLimitedShares++;
          this.fail(conn, id, StratumError.OTHER, `rate limited: at most ${this.opts.submitsPerSecond} shares a second; nothing more is read from this connection for ${THROTTLE_MS / 1000} s`, false);
          this.countShare(conn, false);
          conn.throttled = true;
          return;
        }
        const p = this.onSubmit(conn, id, args).catch((e) => {
          this.log.error({ conn: conn.id, err: (e as Error).message }, 'stratum submit failed');
          this.fail(conn, id, StratumError.OTHER, 'internal error', false);
        });
        this.pending.add(p);
        void p.finally(() => this.pending.delete(p));
        return;
      }
      default:
        this.fail(conn, id, StratumError.OTHER, `unknown method ${method.slice(0, 64)}`);
    }
  }

  private badLine(conn: Connection, id: JsonId, message: string): void {
    this.fail(conn, id, StratumError.OTHER, message);
    if (++conn.badLines > MAX_BAD_LINES) this.close(conn, 'too many malformed requests');
  }

  private onSubscribe(conn: Connection, id: JsonId, args: unknown[]): void {
    if (typeof args[0] === 'string') conn.agent = args[0].slice(0, 100);
    conn.subscribed = true;
    const sub = conn.id.toString(16);
    this.reply(conn, id, [
      [
        ['mining.set_difficulty', sub],
        ['mining.notify', sub],
      ],
      conn.extranonce1Hex,
      EXTRANONCE2_SIZE,
    ]);
    this.maybeStartJobs(conn);
  }

  private onAuthorize(conn: Connection, id: JsonId, args: unknown[]): void {
    const [user, password] = args;
    const who = parseWorkerName(user, this.params.hrp, this.params.network);
    if ('error' in who) {
      this.logs.authRefused.note(conn.address, { conn: conn.id, remote: conn.remote, username: typeof user === 'string' ? user.slice(0, 100) : null, reason: who.error });
      this.fail(conn, id, StratumError.UNAUTHORIZED, who.error, false);
      return;
    }
    if (conn.payout && conn.payout.address !== who.address) {
      this.fail(conn, id, StratumError.UNAUTHORIZED, `this connection already mines for ${conn.payout.address}; open another connection to mine for ${who.address}`, false);
      return;
    }
    if (!conn.authorized.has(user as string) && conn.authorized.size >= MAX_WORKERS_PER_CONNECTION) {
      this.fail(conn, id, StratumError.UNAUTHORIZED, `at most ${MAX_WORKERS_PER_CONNECTION} worker names per connection`, false);
      return;
    }
    conn.authorized.set(user as string, who);
    if (!conn.workerNames.has(who.name)) {
      conn.workerNames.add(who.name);
      this.stats.workerConnected(who.name, who.address, who.worker);
    }
    conn.payout ??= who;
    // A password `d=<difficulty>` (alone or among comma-separated options) asks for a starting difficulty.
    const asked = typeof password === 'string' ? /(?:^|[,;\s])d=([0-9]*\.?[0-9]+(?:e[-+]?\d+)?)/i.exec(password) : null;
    if (asked) this.setDifficulty(conn, Number(asked[1]), false);
    this.logs.authorized.note(conn.address, { conn: conn.id, remote: conn.remote, worker: who.name, agent: conn.agent });
    this.reply(conn, id, true);
    this.maybeStartJobs(conn);
  }

  private onConfigure(conn: Connection, id: JsonId, args: unknown[]): void {
    const exts = Array.isArray(args[0]) ? args[0].filter((x): x is string => typeof x === 'string') : [];
    const p = typeof args[1] === 'object' && args[1] !== null ? (args[1] as Record<string, unknown>) : {};
    const result: Record<string, unknown> = {};
    for (const ext of exts) {
      if (ext === 'version-rolling') {
        const asked = parseHex32(p['version-rolling.mask']) ?? VERSION_ROLLING_MASK;
        conn.versionMask = (asked & VERSION_ROLLING_MASK) >>> 0;
        result['version-rolling'] = true;
        result['version-rolling.mask'] = hex32(conn.versionMask);
      } else if (ext === 'minimum-difficulty') {
        const v = Number(p['minimum-difficulty.value']);
        if (v > 0 && Number.isFinite(v)) {
          conn.minDifficulty = Math.min(v, this.opts.maxDifficulty);
          result['minimum-difficulty'] = true;
          if (conn.difficulty < conn.minDifficulty) this.setDifficulty(conn, conn.minDifficulty, true);
        } else {
          result['minimum-difficulty'] = false;
        }
      } else {
        // subscribe-extranonce and anything else: not supported.
        result[ext.slice(0, 64)] = false;
      }
    }
    this.reply(conn, id, result);
  }

  private onSuggestDifficulty(conn: Connection, id: JsonId, args: unknown[]): void {
    const d = Number(args[0]);
    if (!(d > 0) || !Number.isFinite(d)) {
      this.fail(conn, id, StratumError.OTHER, 'mining.suggest_difficulty takes one positive number', false);
      return;
    }
    this.reply(conn, id, true);
    this.setDifficulty(conn, d, true);
  }

  /** Sends the first job once the connection is both subscribed and authorised. */
  private maybeStartJobs(conn: Connection): void {
    if (conn.ready || !conn.subscribed || !conn.payout) return;
    conn.ready = true;
    conn.vardiff = { since: Date.now(), shares: 0, sumDifficulty: 0 };
    if (this.current) this.sendJob(conn, this.current, this.newJobId(this.current), true);
  }

  // ---- difficulty ----

  private clampDifficulty(conn: Connection, d: number): number {
    return Math.min(this.opts.maxDifficulty, Math.max(this.opts.minDifficulty, conn.minDifficulty, d));
  }

  /** Difficulty of the next job: the connection's, never above the block's own. */
  private effectiveDifficulty(conn: Connection, work: Work): number {
    return Math.min(conn.difficulty, work.netDifficulty);
  }

  /** Changes a connection's difficulty; with `resend`, a fresh job carries it at once. */
  private setDifficulty(conn: Connection, d: number, resend: boolean): void {
    const next = this.clampDifficulty(conn, d);
    const changed = next !== conn.difficulty;
    conn.difficulty = next;
    conn.vardiff = { since: Date.now(), shares: 0, sumDifficulty: 0 };
    if (changed && resend && conn.ready && this.current) this.sendJob(conn, this.current, this.newJobId(this.current), false);
  }

  private onAcceptedShare(conn: Connection, difficulty: number): void {
    const v = conn.vardiff;
    v.shares++;
    v.sumDifficulty += difficulty;
    if (v.shares >= this.opts.retargetShares || Date.now() - v.since >= this.opts.retargetMs) this.retarget(conn);
  }

  /** Sets the difficulty from the accepted difficulty per second since the last retarget. */
  private retarget(conn: Connection): void {
    const v = conn.vardiff;
    const elapsed = Math.max(1, Date.now() - v.since) / 1000;
    const wanted = (v.sumDifficulty / elapsed) * this.opts.targetShareSeconds;
    const ratio = Math.min(1024, Math.max(0.25, wanted / conn.difficulty));
    conn.vardiff = { since: Date.now(), shares: 0, sumDifficulty: 0 };
    if (ratio > 0.7 && ratio < 1.4) return;
    const before = conn.difficulty;
    this.setDifficulty(conn, conn.difficulty * ratio, true);
    this.log.debug({ conn: conn.id, from: before, to: conn.difficulty, shares: v.shares, seconds: elapsed }, 'stratum difficulty retargeted');
  }

  // ---- jobs ----

  private newJobId(work: Work): string {
    const id = (this.nextJobId++ >>> 0).toString(16);
    if (this.nextJobId > 0xffffffff) this.nextJobId = 1;
    work.jobIds.push(id);
    this.jobs.set(id, work);
    return id;
  }

  /** coinb1 paying `payout`: the base coinb1 with the payee's 20 bytes put in (cheap: one per connection per job). */
  private coinb1For(work: Work, payout: WorkerIdentity): string {
    return work.coinb1.slice(0, 2 * COINBASE_MINER_OFFSET) + toHex(payout.id) + work.coinb1.slice(2 * (COINBASE_MINER_OFFSET + ADDRESS_SIZE));
  }

  /** The full template paying `payout` (for checking shares and building blocks). */
  private minerTemplate(work: Work, payout: WorkerIdentity): BlockTemplate {
    let tpl = work.perMiner.get(payout.address);
    if (!tpl) {
      tpl = templateForMiner(work.tpl, payout.id);
      work.perMiner.set(payout.address, tpl);
    }
    return tpl;
  }

  private sendJob(conn: Connection, work: Work, jobId: string, clean: boolean): void {
    if (!conn.payout) return;
    const diff = this.effectiveDifficulty(conn, work);
    if (conn.sentDifficulty !== diff) {
      this.send(conn, { id: null, method: 'mining.set_difficulty', params: [diff] });
      conn.sentDifficulty = diff;
      for (const name of conn.workerNames) this.stats.setDifficulty(name, diff);
    }
    const coinb1 = this.coinb1For(work, conn.payout);
    conn.jobDifficulty.set(jobId, diff);
    if (conn.jobDifficulty.size > 4 * this.opts.jobHistory) {
      for (const k of conn.jobDifficulty.keys()) if (!this.jobs.has(k)) conn.jobDifficulty.delete(k);
    }
    // Every field is hex (or a hex array) and the job id is hex: the line is assembled without escaping.
    this.sendLine(conn, `{"id":null,"method":"mining.notify","params":["${jobId}","${work.prevhash}","${coinb1}",${work.notifyTail},${clean}]}\n`);
  }

  /** Makes `tpl` the current work and sends it to every ready connection. */
  private broadcast(tpl: BlockTemplate, clean: boolean, tipSeenAt?: number): void {
    const h = tpl.block.header;
    const branch = tpl.merkleBranch.map((b) => toHex(b));
    const coinb2 = toHex(tpl.coinb2);
    const work: Work = {
      tpl,
      prevhash: stratumPrevHash(h.prevHash),
      notifyTail: JSON.stringify([coinb2, branch, hex32(h.version), hex32(h.bits), hex32(h.time)]).slice(1, -1),
      netDifficulty: difficultyOfBits(h.bits),
      coinb1: toHex(tpl.coinb1),
      coinb2,
      submitted: new Set(),
      perMiner: new Map(),
      jobIds: [],
      createdAt: Date.now(),
    };
    this.works.push(work);
    while (this.works.length > this.opts.jobHistory) {
      const old = this.works.shift()!;
      for (const id of old.jobIds) this.jobs.delete(id);
    }
    this.current = work;
    const jobId = this.newJobId(work);
    let sent = 0;
    for (const conn of this.conns.values()) {
      if (!conn.ready) continue;
      this.sendJob(conn, work, jobId, clean);
      sent++;
    }
    let sinceTipMs: number | undefined;
    if (clean && tipSeenAt !== undefined) {
      sinceTipMs = perfNow() - tipSeenAt;
      this.latencies.push(sinceTipMs);
      if (this.latencies.length > LATENCY_SAMPLES) this.latencies.shift();
    }
    this.log.debug({ job: jobId, height: tpl.height, txs: tpl.txIds.length, clean, connections: sent, sinceTipMs }, 'stratum job');
    this.emit('job', { jobId, height: tpl.height, parentHash: tpl.parentHash, clean, connections: sent, sinceTipMs });
  }

  private readonly onJob = (job: MiningJob): void => {
    if (this.running) this.broadcast(job.template, job.clean, job.tipSeenAt);
  };

  private onTick(): void {
    const now = Date.now();
    for (const conn of this.conns.values()) {
      if (!conn.ready) {
        if (now - conn.openedAt > this.opts.handshakeTimeoutMs) {
          this.gate.refusals.handshakeTimeouts++;
          this.close(conn, 'did not subscribe and authorize in time');
        }
        continue;
      }
      if (now - conn.lastActivity > this.opts.idleTimeoutMs) {
        this.close(conn, 'idle');
        continue;
      }
      // No share for a long while: the difficulty is too high for this miner, ease it down.
      const quiet = now - Math.max(conn.vardiff.since, conn.lastShareAt);
      if (conn.vardiff.shares === 0 && quiet > Math.max(this.opts.retargetMs, 6_000 * this.opts.targetShareSeconds)) {
        const factor = Math.max(0.25, (this.opts.targetShareSeconds * 1000) / quiet);
        this.setDifficulty(conn, conn.difficulty * factor, true);
      }
    }
  }

  // ---- shares ----

  /**
   * Counts a judged share towards the ban rule: every `banMinShares` shares, a connection with at
   * least `banInvalidPercent` % invalid ones is closed and (with `banSeconds`) its address banned.
   */
  private countShare(conn: Connection, valid: boolean): void {
    const j = conn.judged;
    if (valid) j.valid++;
    else j.invalid++;
    const total = j.valid + j.invalid;
    if (total < this.opts.banMinShares) return;
    conn.judged = { valid: 0, invalid: 0 };
    if (j.invalid * 100 < this.opts.banInvalidPercent * total) return;
    this.ban(conn, `${j.invalid} of ${total} shares invalid`);
  }

  private ban(conn: Connection, reason: string): void {
    this.logs.banned.note(conn.address, { conn: conn.id, remote: conn.remote, reason, seconds: Math.max(0, this.opts.banSeconds) });
    this.gate.ban(conn, reason);
  }

  private judge(conn: Connection, id: JsonId, worker: WorkerIdentity | undefined, result: 'rejected' | 'stale', code: number, reason: string): void {
    if (result === 'rejected') this.countShare(conn, false);
    if (worker) this.stats.recordShare(worker.name, result, 0, reason);
    this.fail(conn, id, code, reason, false);
    this.log.debug({ conn: conn.id, worker: worker?.name, code, reason }, 'stratum share refused');
    this.emit('share', { worker: worker?.name ?? '', result, difficulty: 0, code, reason, block: false });
  }

  private async onSubmit(conn: Connection, id: JsonId, args: unknown[]): Promise<void> {
    if (args.length < 5 || args.length > 6 || !args.every((a) => typeof a === 'string')) {
      return this.judge(conn, id, conn.worker(args[0]), 'rejected', StratumError.OTHER, 'mining.submit takes [worker, job_id, extranonce2, ntime, nonce] (and version bits), all strings');
    }
    const [workerName, jobId, en2Hex, ntimeHex, nonceHex, versionHex] = args as string[];
    if (!conn.subscribed) {
      this.countShare(conn, false);
      return this.fail(conn, id, StratumError.NOT_SUBSCRIBED, 'not subscribed: send mining.subscribe first', false);
    }
    const worker = conn.worker(workerName);
    if (!worker) {
      this.countShare(conn, false);
      return this.fail(conn, id, StratumError.UNAUTHORIZED, `unauthorized worker ${workerName.slice(0, 100)}: send mining.authorize first`, false);
    }
    const work = this.jobs.get(jobId);
    const jobDiff = conn.jobDifficulty.get(jobId);
    if (!work || jobDiff === undefined) return this.judge(conn, id, worker, 'rejected', StratumError.JOB_NOT_FOUND, 'job not found');
    if (!/^[0-9a-fA-F]+$/.test(en2Hex) || en2Hex.length !== 2 * EXTRANONCE2_SIZE) {
      return this.judge(conn, id, worker, 'rejected', StratumError.OTHER, `extranonce2 must be ${EXTRANONCE2_SIZE} bytes (${2 * EXTRANONCE2_SIZE} hex digits)`);
    }
    const ntime = parseHex32(ntimeHex);
    if (ntime === undefined) return this.judge(conn, id, worker, 'rejected', StratumError.OTHER, 'ntime must be 8 hex digits');
    const latest = this.now() + this.params.maxFutureBlockTime;
    if (ntime < work.tpl.minTime || ntime > latest) {
      return this.judge(conn, id, worker, 'rejected', StratumError.OTHER, `ntime out of range: ${ntime} is outside [${work.tpl.minTime}, ${latest}]`);
    }
    const nonce = parseHex32(nonceHex);
    if (nonce === undefined) return this.judge(conn, id, worker, 'rejected', StratumError.OTHER, 'nonce must be 8 hex digits');
    let version = work.tpl.block.header.version >>> 0;
    if (versionHex !== undefined) {
      const bits = parseHex32(versionHex);
      if (bits === undefined) return this.judge(conn, id, worker, 'rejected', StratumError.OTHER, 'version bits must be 8 hex digits');
      if ((bits & ~conn.versionMask) >>> 0 !== 0) return this.judge(conn, id, worker, 'rejected', StratumError.OTHER, `version bits ${versionHex} outside the negotiated mask ${hex32(conn.versionMask)}`);
      version = ((version & ~conn.versionMask) | (bits & conn.versionMask)) >>> 0;
    }
    const en2 = en2Hex.toLowerCase();
    const key = `${conn.extranonce1Hex}${en2}${hex32(ntime)}${hex32(nonce)}${hex32(version)}`;
    if (work.submitted.has(key)) return this.judge(conn, id, worker, 'rejected', StratumError.DUPLICATE, 'duplicate share');
    // After the duplicate check: a share resubmitted after it completed a block is a duplicate, not stale.
    if (work.tpl.parentHash !== this.chain.tip.hashHex) return this.judge(conn, id, worker, 'stale', StratumError.JOB_NOT_FOUND, 'stale: the job builds on an old block');

    const mine = { tpl: this.minerTemplate(work, conn.payout!) };
    const extranonce = new Uint8Array(EXTRANONCE_SIZE);
    extranonce.set(conn.extranonce1, 0);
    extranonce.set(fromHex(en2), 4);
    const header = { ...templateHeader(mine.tpl, { extranonce, time: ntime, nonce }), version };
    const hash = blockHash(header);
    const value = hashToBigInt(hash);
    const isBlock = value <= mine.tpl.target;
    // Credit the lower of the job's difficulty and the current one: a miner may apply a new
    // difficulty to jobs it already holds, in either direction.
    const credit = Math.min(jobDiff, this.effectiveDifficulty(conn, work));
    if (!isBlock && value > targetFromDifficulty(credit * SHARE_TOLERANCE)) {
      return this.judge(conn, id, worker, 'rejected', StratumError.LOW_DIFFICULTY, 'low difficulty share');
    }
    // Remembered only once it met its target: junk costs a hash, never memory (issue 22).
    work.submitted.add(key);
    conn.lastShareAt = Date.now();
    if (isBlock) {
      // One block at a time, each checked against the tip the one before it made: of two blocks
      // found on one job before the next notify, the second could only become a side branch.
      const refusal = await this.inBlockLane(async () => {
        if (work.tpl.parentHash !== this.chain.tip.hashHex) return STALE_BLOCK;
        return this.submitBlock(worker, mine.tpl, { header, coinbase: { ...mine.tpl.block.coinbase, extranonce }, txs: mine.tpl.block.txs });
      });
      if (refusal === STALE_BLOCK) return this.judge(conn, id, worker, 'stale', StratumError.JOB_NOT_FOUND, 'stale: a block was found on this job\'s parent first');
      if (refusal) return this.judge(conn, id, worker, 'rejected', StratumError.OTHER, refusal);
    }
    this.countShare(conn, true);
    this.stats.recordShare(worker.name, 'accepted', credit);
    this.reply(conn, id, true);
    this.emit('share', { worker: worker.name, result: 'accepted', difficulty: credit, block: isBlock });
    if (!conn.closed) this.onAcceptedShare(conn, credit);
  }

  /** Runs `fn` after every block submission before it has finished. */
  private inBlockLane<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.blockLane.then(fn);
    this.blockLane = run.catch(() => undefined);
    return run;
  }

  /** Hands a solved block to the chain; returns the reason when the chain refuses it. */
  private async submitBlock(worker: WorkerIdentity, tpl: BlockTemplate, block: Block): Promise<string | undefined> {
    const hashHex = toHex(blockHash(block.header));
    this.log.info({ hash: hashHex, height: tpl.height, worker: worker.name, txs: tpl.txIds.length }, 'stratum share is a block');
    try {
      const res = await this.chain.addBlock(encodeBlock(block, tpl.txBytes));
      if (res.status === 'connected' || res.status === 'reorganized') {
        this.stats.recordBlock({ height: tpl.height, hash: hashHex, source: 'stratum', worker: worker.name, address: worker.address });
        this.log.info({ hash: hashHex, height: tpl.height, worker: worker.name, status: res.status }, 'block found by stratum worker');
      } else {
        this.log.warn({ hash: hashHex, height: tpl.height, worker: worker.name, status: res.status }, 'stratum block not connected');
      }
      this.emit('block', { hash: hashHex, height: tpl.height, worker: worker.name, status: res.status });
      return undefined;
    } catch (e) {
      const code = isNodeError(e) ? e.code : 'internal_error';
      this.log.error({ hash: hashHex, height: tpl.height, worker: worker.name, code, err: (e as Error).message }, 'stratum block rejected by the chain');
      return `block rejected: ${code}`;
    }
  }
}

/** Creates the Stratum server (call `start()`). */
export function createStratumServer(opts: Partial<StratumOptions>, modules: StratumModules): StratumServer {
  return new StratumServer(opts, modules);
}
