/**
 * Peer scoring and temporary bans (Bitcoin Core's "misbehaviour score"): every offence adds
 * points to the sending peer; points decay linearly with time; a peer reaching `banThreshold`
 * is banned for `banSeconds`: disconnected and refused (dials and inbound connections) until
 * the ban expires. Bans are kept in memory (a restart forgives).
 */
import { silentLogger, type Logger } from '../chain/types.js';

/** Options of the peer scores. */
export interface PeerScoreOptions {
  /** Score at which a peer is banned. */
  readonly banThreshold?: number;
  /** Length of a ban, seconds. */
  readonly banSeconds?: number;
  /** Points forgiven per minute. */
  readonly decayPerMinute?: number;
  /** Bans and scores kept at most (oldest dropped first). */
  readonly maxTracked?: number;
  /** Clock, ms. */
  readonly now?: () => number;
  readonly logger?: Logger;
}

/** Defaults of PeerScoreOptions. */
export const defaultPeerScoreOptions = { banThreshold: 100, banSeconds: 600, decayPerMinute: 10, maxTracked: 10_000 } as const;

/** Points of common offences outside consensus validation (which carries its own `banScore`). */
export const Offence = {
  /** Malformed frame or message: cannot happen with an honest implementation. */
  MALFORMED: 100,
  /** A frame above the protocol's size limit. */
  OVERSIZED: 100,
  /** Data that was not asked for, or does not match what was asked. */
  UNSOLICITED: 100,
  /** Headers that do not connect to what we asked about. */
  UNCONNECTED_HEADERS: 20,
  /** A request that timed out or a stream that broke mid-answer. */
  TIMEOUT: 5,
  /**
   * A relayed transaction its sender cannot pay (`mempool_unpayable`: a future nonce beyond what
   * the confirmed balance covers). Nodes of this software never relay one (they relay only ready
   * transactions, checked for funds); a peer a few blocks ahead may, rarely, so it is not an
   * instant ban: five within the decay of 50 points ban.
   */
  UNPAYABLE: 20,
  /** A block it claimed to have but did not serve. */
  NOT_FOUND: 2,
} as const;

/** A ban in force. */
export interface BanInfo {
  readonly peerId: string;
  /** Unix ms when the ban ends. */
  readonly until: number;
  readonly reason: string;
}

interface ScoreRecord {
  score: number;
  at: number;
}

/** Misbehaviour scores and bans of peers, keyed by peer id string. */
export class PeerScores {
  private readonly scores = new Map<string, ScoreRecord>();
  private readonly bans = new Map<string, BanInfo>();
  private readonly opts: Required<Omit<PeerScoreOptions, 'logger' | 'now'>>;
  private readonly now: () => number;
  private readonly log: Logger;
  /** Called once when a peer becomes banned (the network disconnects it). */
  onBan: (info: BanInfo) => void = () => {};

  constructor(opts: PeerScoreOptions = {}) {
    this.opts = {
      banThreshold: opts.banThreshold ?? defaultPeerScoreOptions.banThreshold,
      banSeconds: opts.banSeconds ?? defaultPeerScoreOptions.banSeconds,
      decayPerMinute: opts.decayPerMinute ?? defaultPeerScoreOptions.decayPerMinute,
      maxTracked: opts.maxTracked ?? defaultPeerScoreOptions.maxTracked,
    };
    this.now = opts.now ?? Date.now;
    this.log = opts.logger ?? silentLogger;
  }

  /** Current score of a peer (after decay). */
  score(peerId: string): number {
    const r = this.scores.get(peerId);
    if (!r) return 0;
    const decayed = r.score - ((this.now() - r.at) / 60_000) * this.opts.decayPerMinute;
    return Math.max(0, decayed);
  }

  /**
   * Adds `points` for `reason`; bans the peer when its score reaches the threshold. Returns
   * whether the peer is banned afterwards.
   */
  penalize(peerId: string, points: number, reason: string): boolean {
    if (this.isBanned(peerId)) return true;
    if (points <= 0) return false;
    const score = this.score(peerId) + points;
    this.scores.delete(peerId);
    this.scores.set(peerId, { score, at: this.now() });
    this.trim(this.scores);
    this.log.info({ peer: peerId, points, score: Math.round(score), reason }, 'peer penalized');
    if (score < this.opts.banThreshold) return false;
    const info: BanInfo = { peerId, until: this.now() + this.opts.banSeconds * 1000, reason };
    this.scores.delete(peerId);
    this.bans.set(peerId, info);
    this.trim(this.bans);
    this.log.warn({ peer: peerId, reason, seconds: this.opts.banSeconds }, 'peer banned');
    this.onBan(info);
    return true;
  }

  /** Whether the peer is banned now (expired bans are dropped). */
  isBanned(peerId: string): boolean {
    const b = this.bans.get(peerId);
    if (!b) return false;
    if (b.until > this.now()) return true;
    this.bans.delete(peerId);
    return false;
  }

  /** Bans in force. */
  listBans(): BanInfo[] {
    const out: BanInfo[] = [];
    for (const b of [...this.bans.values()]) if (this.isBanned(b.peerId)) out.push(b);
    return out;
  }

  private trim<V>(m: Map<string, V>): void {
    while (m.size > this.opts.maxTracked) m.delete(m.keys().next().value!);
  }
}
