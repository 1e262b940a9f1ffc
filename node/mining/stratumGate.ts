/**
 * Who may hold a Stratum connection: the per-address cap, the slots reserved for
 * addresses that hold none, eviction of a squatter when a new address finds the server full, and
 * bans of addresses whose shares were overwhelmingly invalid — with the counters the status shows.
 * The server (stratum.ts) asks `admit` for each new socket, reports opened and closed connections,
 * and closes what the gate names.
 */

/** What the gate knows of a connection. */
export interface GateConnection {
  readonly address: string;
  /** Subscribed and authorised (its handshake is done). */
  readonly ready: boolean;
  readonly openedAt: number;
}

/** Options of the gate (the StratumOptions of the same names). */
export interface GateOptions {
  readonly maxConnections: number;
  readonly maxConnectionsPerAddress: number;
  readonly reservedConnections: number;
  readonly banSeconds: number;
}

/** Counters of the abuse limits. */
export interface StratumRefusals {
  /** Connections closed at once: the address already held `maxConnectionsPerAddress`. */
  perAddress: number;
  /** Connections closed at once: no slot left for this address, none could be evicted. */
  full: number;
  /** Connections closed at once: the address is banned. */
  banned: number;
  /** Connections that had not finished their handshake (or held more than their share), closed to make room for a newcomer. */
  evicted: number;
  /** Connections closed for not subscribing and authorising within `handshakeTimeoutMs`. */
  handshakeTimeouts: number;
  /** Shares refused unchecked: over the connection's submit rate. */
  rateLimitedShares: number;
  /** Bans pronounced. */
  bans: number;
}

/** A banned client address. */
export interface StratumBan {
  readonly address: string;
  /** Unix ms when the ban ends. */
  readonly until: number;
  readonly reason: string;
}

/** Bans kept at most (the oldest is dropped first). */
const MAX_BANS = 10_000;

/** The connection gate (see module comment). */
export class ConnectionGate<C extends GateConnection> {
  private readonly byAddress = new Map<string, Set<C>>();
  private readonly bans = new Map<string, StratumBan>();
  private count = 0;
  readonly refusals: StratumRefusals = { perAddress: 0, full: 0, banned: 0, evicted: 0, handshakeTimeouts: 0, rateLimitedShares: 0, bans: 0 };

  constructor(
    private readonly opts: GateOptions,
    /** Closes a connection the gate evicts or bans (the server then calls `removed`). */
    private readonly close: (conn: C, reason: string) => void,
  ) {}

  /** Connections `address` holds now. */
  held(address: string): number {
    return this.byAddress.get(address)?.size ?? 0;
  }

  /**
   * Whether a new connection from `address` may stay, or why not: banned, over the per-address
   * cap, or no slot left for it. An address that already holds connections may not take the last
   * `reservedConnections` slots; when the newcomer finds no slot, a connection of the address
   * holding the most (at least two more than the newcomer's) is evicted — one still in its
   * handshake first, else its newest. A refusal is counted.
   */
  admit(address: string): 'banned' | 'perAddress' | 'full' | undefined {
    const refusal = this.check(address);
    if (refusal) this.refusals[refusal]++;
    return refusal;
  }

  private check(address: string): 'banned' | 'perAddress' | 'full' | undefined {
    if (this.isBanned(address)) return 'banned';
    const held = this.held(address);
    if (held >= this.opts.maxConnectionsPerAddress) return 'perAddress';
    const limit = held > 0 ? this.opts.maxConnections - this.opts.reservedConnections : this.opts.maxConnections;
    if (this.count < limit) return undefined;
    let victims: Set<C> | undefined;
    for (const [a, set] of this.byAddress) if (a !== address && set.size >= held + 2 && set.size > (victims?.size ?? 0)) victims = set;
    if (!victims) return 'full';
    let victim: C | undefined;
    for (const c of victims) if (!c.ready && (!victim || c.openedAt < victim.openedAt)) victim = c;
    if (!victim) for (const c of victims) if (!victim || c.openedAt > victim.openedAt) victim = c;
    this.refusals.evicted++;
    this.close(victim!, 'evicted to make room for a new client');
    return this.count < limit ? undefined : 'full';
  }

  /** A connection was opened (after `admit`). */
  added(conn: C): void {
    let set = this.byAddress.get(conn.address);
    if (!set) this.byAddress.set(conn.address, (set = new Set()));
    set.add(conn);
    this.count++;
  }

  /** A connection closed. */
  removed(conn: C): void {
    const set = this.byAddress.get(conn.address);
    if (!set?.delete(conn)) return;
    this.count--;
    if (set.size === 0) this.byAddress.delete(conn.address);
  }

  /**
   * Bans `conn`'s address for `banSeconds` and closes all its connections; with `banSeconds` 0
   * closes `conn` only. Returns the ban, if one was pronounced.
   */
  ban(conn: C, reason: string): StratumBan | undefined {
    if (this.opts.banSeconds <= 0) {
      this.close(conn, reason);
      return undefined;
    }
    const info: StratumBan = { address: conn.address, until: Date.now() + this.opts.banSeconds * 1000, reason };
    this.bans.delete(conn.address);
    this.bans.set(conn.address, info);
    if (this.bans.size > MAX_BANS) this.bans.delete(this.bans.keys().next().value!);
    this.refusals.bans++;
    for (const c of [...(this.byAddress.get(conn.address) ?? [])]) this.close(c, `banned: ${reason}`);
    return info;
  }

  /** Whether `address` is banned now (expired bans are dropped). */
  isBanned(address: string): boolean {
    const b = this.bans.get(address);
    if (!b) return false;
    if (b.until > Date.now()) return true;
    this.bans.delete(address);
    return false;
  }

  /** Bans in force. */
  listBans(): StratumBan[] {
    const out: StratumBan[] = [];
    for (const b of [...this.bans.values()]) if (this.isBanned(b.address)) out.push(b);
    return out;
  }
}
