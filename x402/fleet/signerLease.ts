/**
 * The signer lease of a fleet: of the nodes sharing one PostgreSQL ledger, only the
 * holder of this lease signs payee transactions (refunds, provider payouts) and runs the payment
 * watcher, so two nodes never sign with the payee key at once (they would collide on its nonce).
 *
 * The lease is a session-level PostgreSQL advisory lock (`pg_try_advisory_lock`) held by one
 * dedicated connection. PostgreSQL releases it when that session ends: at once when the holder's
 * process dies (its socket closes, SIGKILL included), and within the TCP keepalive bound
 * (about 10 s) when its machine or network goes silent. Every other node tries to take it every
 * `pollMs` (1 s), so a successor holds it within about a second of the holder's death.
 *
 * A holder that loses its connection no longer knows whether it holds the lock: it reports
 * `lost` at once and stops signing before anything else; it then competes again like the others.
 */
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { LEASE_APPLICATION_PREFIX } from './fleet.js';

/** Key of the advisory lock (one per database; any constant shared by every node). */
export const SIGNER_LEASE_KEY = 0x7369676e; // 'sign'

/** Options of the lease. */
export interface SignerLeaseOptions {
  /** How often a node without the lease tries to take it, ms. */
  readonly pollMs?: number;
  /**
   * This node's id in the fleet: the lease's session is named `native-node signer lease <name>`
   * (its application_name), so any reader of pg_locks can tell who holds the lease (x402/fleet/fleet.ts).
   */
  readonly name?: string;
}

/**
 * The lease (see module comment). Events: `acquired` (this node holds it now), `lost` (it no
 * longer does: stop signing). Handlers run in order; `lost` is emitted before any new attempt.
 */
export class SignerLease extends EventEmitter {
  private client: pg.Client | undefined;
  private holder = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private attempt: Promise<void> | undefined;
  private readonly pollMs: number;
  private readonly applicationName: string;

  constructor(
    private readonly url: string,
    opts: SignerLeaseOptions = {},
  ) {
    super();
    this.pollMs = opts.pollMs ?? 1000;
    // PostgreSQL keeps 63 bytes of an application_name.
    this.applicationName = (opts.name ? `${LEASE_APPLICATION_PREFIX}${opts.name}` : 'native-node signer lease').slice(0, 63);
  }

  /** The lease session's application_name: a fleet's payee nonce log fences its claims with it (x402/native/pgPayeeTxLog.ts). */
  sessionName(): string {
    return this.applicationName;
  }

  /** Whether this node holds the lease now. */
  isHolder(): boolean {
    return this.holder;
  }

  /** Tries at once, then every `pollMs` while not the holder. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.tryAcquire();
    this.timer = setInterval(() => void this.tryAcquire(), this.pollMs);
    this.timer.unref();
  }

  private tryAcquire(): Promise<void> {
    if (this.holder || this.stopped) return Promise.resolve();
    this.attempt ??= (async () => {
      try {
        if (!this.client) {
          const c = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 3000, keepAlive: true, keepAliveInitialDelayMillis: 2000, application_name: this.applicationName });
          c.on('error', () => this.drop(c));
          c.on('end', () => this.drop(c));
          await c.connect();
          // The server notices a silent peer within about 5 + 2 × 3 s and ends the session (releasing the lock).
          await c.query('SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 2; SET tcp_keepalives_count = 3');
          this.client = c;
        }
        const { rows } = await this.client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [SIGNER_LEASE_KEY]);
        if (rows[0]?.ok && !this.stopped) {
          this.holder = true;
          this.emit('acquired');
        }
      } catch {
        if (this.client) this.drop(this.client);
      } finally {
        this.attempt = undefined;
      }
    })();
    return this.attempt;
  }

  /** The connection is gone (or unusable): the lock with it. */
  private drop(c: pg.Client): void {
    if (this.client !== c && this.client !== undefined) return;
    this.client = undefined;
    c.end().catch(() => undefined);
    if (this.holder) {
      this.holder = false;
      this.emit('lost');
    }
  }

  /** Releases the lease (ends its session) and stops trying. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.attempt;
    const c = this.client;
    this.client = undefined;
    const was = this.holder;
    this.holder = false;
    if (c) await c.end().catch(() => undefined);
    if (was) this.emit('lost');
  }
}
