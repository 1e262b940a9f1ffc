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
 *
 * Files: this one is the server (lifecycle, connection table, protocol handlers, vardiff, job
 * broadcast, block submission) and the Stratum entry point; around 600 lines because those parts
 * share the connection table, the statistics and the abuse counters. Apart from it: the options
 * and events (stratumOptions.ts), line framing and writes (stratumWire.ts), the retained jobs and
 * the share checks (stratumJobs.ts), per-connection state (stratumConnection.ts) and the
 * connection gate (stratumGate.ts).
 */
import { EventEmitter } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { blockHash, encodeBlock, type Block } from '../../consensus/block.js';
import { NodeError, isNodeError } from '../../consensus/errors.js';
import { toHex } from '../../consensus/hash.js';
import type { ChainParams } from '../../consensus/params.js';
import type { BlockTemplate } from '../../chain/template.js';
import { createJobFeed, type JobFeed, type MiningJob } from '../../chain/jobFeed.js';
import type { MinerChain, MinerMempool } from '../../chain/miner.js';
import { silentLogger, type Logger } from '../../chain/types.js';
import { LogSummary } from '../logSummary.js';
import { TokenBucket, clientAddress } from '../rateLimit.js';
import type { MiningStats } from './stats.js';
import { ConnectionGate, type StratumBan, type StratumRefusals } from './stratumGate.js';
import { Connection, type Work } from './stratumConnection.js';
import { checkShare, JobBook, jobDifficulty, notifyLine } from './stratumJobs.js';
import {
  defaultStratumOptions,
  EXTRANONCE2_SIZE,
  LIMIT_KEYS,
  StratumError,
  StratumErrorCode,
  VERSION_ROLLING_MASK,
  type StratumEvents,
  type StratumInfo,
  type StratumModules,
  type StratumOptions,
} from './stratumOptions.js';
import { LineChannel, parseRequest, THROTTLE_MS, type JsonId } from './stratumWire.js';
import { hex32, parseHex32, parseWorkerName, type WorkerIdentity } from './work.js';

/** Stratum's abuse counters and bans (stratumGate.ts), re-exported for the server's users. */
export type { StratumBan, StratumRefusals };
/** The server's options, events and constants (stratumOptions.ts), re-exported: this file is the Stratum entry point. */
export * from './stratumOptions.js';

/** Worker names one connection may authorise (proxies multiplex several). */
const MAX_WORKERS_PER_CONNECTION = 64;
/** Malformed lines tolerated before a connection is closed. */
const MAX_BAD_LINES = 10;
const TICK_MS = 1_000;
/** What the block lane answers for a block whose parent is no longer the tip. */
const STALE_BLOCK = 'stale';
const LATENCY_SAMPLES = 20;
function perfNow(): number {
  return performance.timeOrigin + performance.now();
}

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
  /** Set when the port could not be had and Stratum stays off (see `start`). */
  private listenError?: string;
  private readonly conns = new Map<number, Connection>();
  private nextConnId = 1;
  /** Block submissions, one after the other (see `inBlockLane`). */
  private blockLane: Promise<unknown> = Promise.resolve();
  private extranonceCounter = randomBytes(4).readUInt32BE(0);
  /** Retained works and their job ids (stratumJobs.ts). */
  private readonly book: JobBook;
  /** Line framing and writes (stratumWire.ts). */
  private readonly wire: LineChannel;
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
    this.book = new JobBook(this.opts.jobHistory);
    this.wire = new LineChannel(this.opts.maxLineBytes, { onLine: (conn, line) => this.onLine(conn, line), close: (conn, reason) => this.close(conn, reason) });
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
      this.listenError = message;
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
    this.log.info({ host: this.opts.host, port: this.boundPort, url: this.url, height: this.book.current?.tpl.height }, 'stratum listening');
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
    const cur = this.book.current;
    return {
      enabled: this.listenError === undefined,
      listening: this.listening,
      ...(this.listenError ? { listenError: this.listenError } : {}),
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
    socket.on('data', (chunk: string) => this.wire.read(conn, chunk));
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

  private onLine(conn: Connection, raw: string): void {
    const req = parseRequest(raw);
    if (!req) return;
    if (!req.ok) return this.badLine(conn, req.id, req.message);
    const { id, method, args } = req;
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
        return this.wire.reply(conn, id, true);
      case 'mining.submit': {
        if (!conn.submits.take(Date.now())) {
          // Refused before any work: a flood costs a token check and one short answer per line.
          this.gate.refusals.rateLimitedShares++;
          this.wire.fail(conn, id, StratumError.OTHER, `rate limited: at most ${this.opts.submitsPerSecond} shares a second; nothing more is read from this connection for ${THROTTLE_MS / 1000} s`, false);
          this.countShare(conn, false);
          conn.throttled = true;
          return;
        }
        const p = this.onSubmit(conn, id, args).catch((e) => {
          this.log.error({ conn: conn.id, err: (e as Error).message }, 'stratum submit failed');
          this.wire.fail(conn, id, StratumError.OTHER, 'internal error', false);
        });
        this.pending.add(p);
        void p.finally(() => this.pending.delete(p));
        return;
      }
      default:
        this.wire.fail(conn, id, StratumError.OTHER, `unknown method ${method.slice(0, 64)}`);
    }
  }

  private badLine(conn: Connection, id: JsonId, message: string): void {
    this.wire.fail(conn, id, StratumError.OTHER, message);
    if (++conn.badLines > MAX_BAD_LINES) this.close(conn, 'too many malformed requests');
  }

  private onSubscribe(conn: Connection, id: JsonId, args: unknown[]): void {
    if (typeof args[0] === 'string') conn.agent = args[0].slice(0, 100);
    conn.subscribed = true;
    const sub = conn.id.toString(16);
    this.wire.reply(conn, id, [
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
      this.wire.fail(conn, id, StratumError.UNAUTHORIZED, who.error, false);
      return;
    }
    if (conn.payout && conn.payout.address !== who.address) {
      this.wire.fail(conn, id, StratumError.UNAUTHORIZED, `this connection already mines for ${conn.payout.address}; open another connection to mine for ${who.address}`, false);
      return;
    }
    if (!conn.authorized.has(user as string) && conn.authorized.size >= MAX_WORKERS_PER_CONNECTION) {
      this.wire.fail(conn, id, StratumError.UNAUTHORIZED, `at most ${MAX_WORKERS_PER_CONNECTION} worker names per connection`, false);
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
    this.wire.reply(conn, id, true);
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
    this.wire.reply(conn, id, result);
  }

  private onSuggestDifficulty(conn: Connection, id: JsonId, args: unknown[]): void {
    const d = Number(args[0]);
    if (!(d > 0) || !Number.isFinite(d)) {
      this.wire.fail(conn, id, StratumError.OTHER, 'mining.suggest_difficulty takes one positive number', false);
      return;
    }
    this.wire.reply(conn, id, true);
    this.setDifficulty(conn, d, true);
  }

  /** Sends the first job once the connection is both subscribed and authorised. */
  private maybeStartJobs(conn: Connection): void {
    if (conn.ready || !conn.subscribed || !conn.payout) return;
    conn.ready = true;
    conn.vardiff = { since: Date.now(), shares: 0, sumDifficulty: 0 };
    if (this.book.current) this.sendJob(conn, this.book.current, this.book.newJobId(this.book.current), true);
  }

  // ---- difficulty ----

  private clampDifficulty(conn: Connection, d: number): number {
    return Math.min(this.opts.maxDifficulty, Math.max(this.opts.minDifficulty, conn.minDifficulty, d));
  }

  /** Changes a connection's difficulty; with `resend`, a fresh job carries it at once. */
  private setDifficulty(conn: Connection, d: number, resend: boolean): void {
    const next = this.clampDifficulty(conn, d);
    const changed = next !== conn.difficulty;
    conn.difficulty = next;
    conn.vardiff = { since: Date.now(), shares: 0, sumDifficulty: 0 };
    if (changed && resend && conn.ready && this.book.current) this.sendJob(conn, this.book.current, this.book.newJobId(this.book.current), false);
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

  private sendJob(conn: Connection, work: Work, jobId: string, clean: boolean): void {
    if (!conn.payout) return;
    const diff = jobDifficulty(conn, work);
    if (conn.sentDifficulty !== diff) {
      this.wire.send(conn, { id: null, method: 'mining.set_difficulty', params: [diff] });
      conn.sentDifficulty = diff;
      for (const name of conn.workerNames) this.stats.setDifficulty(name, diff);
    }
    conn.jobDifficulty.set(jobId, diff);
    if (conn.jobDifficulty.size > 4 * this.opts.jobHistory) {
      for (const k of conn.jobDifficulty.keys()) if (!this.book.has(k)) conn.jobDifficulty.delete(k);
    }
    this.wire.sendLine(conn, notifyLine(work, jobId, conn.payout, clean));
  }

  /** Makes `tpl` the current work and sends it to every ready connection. */
  private broadcast(tpl: BlockTemplate, clean: boolean, tipSeenAt?: number): void {
    const work = this.book.add(tpl);
    const jobId = this.book.newJobId(work);
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
    this.wire.fail(conn, id, code, reason, false);
    this.log.debug({ conn: conn.id, worker: worker?.name, code, reason }, 'stratum share refused');
    this.emit('share', { worker: worker?.name ?? '', result, difficulty: 0, code, reason, block: false });
  }

  private async onSubmit(conn: Connection, id: JsonId, args: unknown[]): Promise<void> {
    const share = checkShare(conn, args, { jobs: this.book, tipHash: this.chain.tip.hashHex, latestTime: this.now() + this.params.maxFutureBlockTime });
    if (share.kind === 'refused') {
      this.countShare(conn, false);
      return this.wire.fail(conn, id, share.code, share.reason, false);
    }
    if (share.kind !== 'valid') return this.judge(conn, id, share.worker, share.kind, share.code, share.reason);
    const { worker, work, tpl, header, extranonce, isBlock, credit } = share;
    conn.lastShareAt = Date.now();
    if (isBlock) {
      // One block at a time, each checked against the tip the one before it made: of two blocks
      // found on one job before the next notify, the second could only become a side branch.
      const refusal = await this.inBlockLane(async () => {
        if (work.tpl.parentHash !== this.chain.tip.hashHex) return STALE_BLOCK;
        return this.submitBlock(worker, tpl, { header, coinbase: { ...tpl.block.coinbase, extranonce }, txs: tpl.block.txs });
      });
      if (refusal === STALE_BLOCK) return this.judge(conn, id, worker, 'stale', StratumError.JOB_NOT_FOUND, 'stale: a block was found on this job\'s parent first');
      if (refusal) return this.judge(conn, id, worker, 'rejected', StratumError.OTHER, refusal);
    }
    this.countShare(conn, true);
    this.stats.recordShare(worker.name, 'accepted', credit);
    this.wire.reply(conn, id, true);
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
