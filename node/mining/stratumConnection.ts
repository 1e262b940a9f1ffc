/**
 * The Stratum server's per-connection and per-template state (stratum.ts): a miner's TCP
 * connection (its extranonce1, authorised workers, difficulty and vardiff window, submit
 * allowance, ban-rule counters, read throttle) and one template's shared work.
 */
import type { Socket } from 'node:net';
import { toHex } from '../../consensus/hash.js';
import type { BlockTemplate } from '../../chain/template.js';
import type { TokenBucket } from '../rateLimit.js';
import type { WorkerIdentity } from './work.js';

/** One template's work, shared by every connection and job id that mines it. */
export interface Work {
  readonly tpl: BlockTemplate;
  readonly prevhash: string;
  /** The block's difficulty: share difficulties are capped at it. */
  readonly netDifficulty: number;
  /** Keys of submitted shares (duplicates). */
  readonly submitted: Set<string>;
  /** Hex of the base template's coinb1 and coinb2 (coinb1 pays nobody until an address is put in). */
  readonly coinb1: string;
  readonly coinb2: string;
  /** The notify parameters after coinb1, as JSON: coinb2, branch, version, nbits, ntime. */
  readonly notifyTail: string;
  /** The template paying each address (built at its first share), by address. */
  readonly perMiner: Map<string, BlockTemplate>;
  readonly jobIds: string[];
  readonly createdAt: number;
}

export interface VardiffWindow {
  since: number;
  shares: number;
  sumDifficulty: number;
}

/** One miner's TCP connection. */
export class Connection {
  readonly extranonce1: Uint8Array;
  readonly extranonce1Hex: string;
  readonly remote: string;
  /** The client's address (the key of the per-address limits and bans). */
  readonly address: string;
  /** Submits allowed (token bucket). */
  readonly submits: TokenBucket;
  /** Shares judged since the last ban check: valid (accepted) and invalid (refused, stale excluded). */
  judged = { valid: 0, invalid: 0 };
  readonly openedAt = Date.now();
  buffer = '';
  agent = '';
  subscribed = false;
  /** Usernames authorised on this connection, as the miner spells them. */
  readonly authorized = new Map<string, WorkerIdentity>();
  /** Canonical worker names counted in the statistics. */
  readonly workerNames = new Set<string>();
  /** The address every job of this connection pays (its first authorised worker's). */
  payout?: WorkerIdentity;
  /** Jobs are flowing (subscribed and authorised). */
  ready = false;
  difficulty: number;
  /** Floor asked by the miner (mining.configure minimum-difficulty). */
  minDifficulty = 0;
  /** Last difficulty sent with mining.set_difficulty. */
  sentDifficulty?: number;
  /** Difficulty in force when each job was sent to this connection. */
  readonly jobDifficulty = new Map<string, number>();
  versionMask = 0;
  vardiff: VardiffWindow;
  lastActivity = Date.now();
  lastShareAt = 0;
  badLines = 0;
  /** Lines to send once the current chunk has been read (see `onData`); undefined: write at once. */
  outBatch: string[] | undefined;
  /** Over its submit rate: not read until `throttleTimer` fires (see `onData`). */
  throttled = false;
  throttleTimer: NodeJS.Timeout | undefined;
  closed = false;

  constructor(
    readonly id: number,
    readonly socket: Socket,
    extranonce1: Uint8Array,
    difficulty: number,
    address: string,
    submits: TokenBucket,
  ) {
    this.extranonce1 = extranonce1;
    this.extranonce1Hex = toHex(extranonce1);
    this.address = address;
    this.submits = submits;
    this.remote = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
    this.difficulty = difficulty;
    this.vardiff = { since: Date.now(), shares: 0, sumDifficulty: 0 };
  }

  /** The worker a share names, when authorised here. */
  worker(name: unknown): WorkerIdentity | undefined {
    return typeof name === 'string' ? (this.authorized.get(name) ?? this.authorized.get(name.toLowerCase())) : undefined;
  }
}

