/**
 * The Stratum server's jobs and share checks (stratum.ts): the retained works (one per
 * template, the last `jobHistory` of them) and their job ids, the per-connection coinb1 and
 * notify line, and the checks of a `mining.submit` up to its hash against the share target.
 * Accepting a share (statistics, vardiff, blocks) is the server's.
 */
import { blockHash, EXTRANONCE_OFFSET, EXTRANONCE_SIZE, type BlockHeader } from '../../consensus/block.js';
import { fromHex, toHex } from '../../consensus/hash.js';
import { ADDRESS_SIZE } from '../../consensus/keys.js';
import { difficultyOfBits, hashToBigInt } from '../../consensus/pow.js';
import { templateForMiner, templateHeader, type BlockTemplate } from '../../chain/template.js';
import type { Connection, Work } from './stratumConnection.js';
import { EXTRANONCE2_SIZE, SHARE_TOLERANCE, StratumError } from './stratumOptions.js';
import { hex32, parseHex32, stratumPrevHash, targetFromDifficulty, type WorkerIdentity } from './work.js';

/**
 * Offset of the payee inside the coinbase (and so inside coinb1): the coinbase is
 * `u8 version ‖ u32 chainId ‖ u32 height ‖ miner(20) ‖ u64 reward ‖ u64 fees ‖ extranonce(8) ‖ …`,
 * so the miner ends 16 bytes before the extranonce slot.
 */
const COINBASE_MINER_OFFSET = EXTRANONCE_OFFSET - 16 - ADDRESS_SIZE;

/** The retained works and their job ids. */
export class JobBook {
  /** Retained works, oldest first. */
  private works: Work[] = [];
  private readonly jobs = new Map<string, Work>();
  private nextJobId = 1;
  /** The work being sent now. */
  current?: Work;

  constructor(private readonly history: number) {}

  /** Makes `tpl` the current work; works beyond the history are forgotten with their job ids. */
  add(tpl: BlockTemplate): Work {
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
    while (this.works.length > this.history) {
      const old = this.works.shift()!;
      for (const id of old.jobIds) this.jobs.delete(id);
    }
    this.current = work;
    return work;
  }

  /** A fresh job id for `work`. */
  newJobId(work: Work): string {
    const id = (this.nextJobId++ >>> 0).toString(16);
    if (this.nextJobId > 0xffffffff) this.nextJobId = 1;
    work.jobIds.push(id);
    this.jobs.set(id, work);
    return id;
  }

  get(jobId: string): Work | undefined {
    return this.jobs.get(jobId);
  }

  has(jobId: string): boolean {
    return this.jobs.has(jobId);
  }
}

/** Difficulty of a connection's next job: its own, never above the block's. */
export function jobDifficulty(conn: Connection, work: Work): number {
  return Math.min(conn.difficulty, work.netDifficulty);
}

/** The `mining.notify` line of `work` for a connection paying `payout` (coinb1 gets the payee's 20 bytes: cheap, one per connection per job). */
export function notifyLine(work: Work, jobId: string, payout: WorkerIdentity, clean: boolean): string {
  const coinb1 = work.coinb1.slice(0, 2 * COINBASE_MINER_OFFSET) + toHex(payout.id) + work.coinb1.slice(2 * (COINBASE_MINER_OFFSET + ADDRESS_SIZE));
  // Every field is hex (or a hex array) and the job id is hex: the line is assembled without escaping.
  return `{"id":null,"method":"mining.notify","params":["${jobId}","${work.prevhash}","${coinb1}",${work.notifyTail},${clean}]}\n`;
}

/** The full template paying `payout` (for checking shares and building blocks), built once per work and address. */
export function minerTemplate(work: Work, payout: WorkerIdentity): BlockTemplate {
  let tpl = work.perMiner.get(payout.address);
  if (!tpl) {
    tpl = templateForMiner(work.tpl, payout.id);
    work.perMiner.set(payout.address, tpl);
  }
  return tpl;
}

/** The outcome of `checkShare`. */
export type ShareCheck =
  /** Not a share of an authorised worker (not subscribed, unknown worker): counted invalid, answered, not judged. */
  | { readonly kind: 'refused'; readonly code: number; readonly reason: string }
  | { readonly kind: 'rejected' | 'stale'; readonly worker?: WorkerIdentity; readonly code: number; readonly reason: string }
  | {
      readonly kind: 'valid';
      readonly worker: WorkerIdentity;
      readonly work: Work;
      /** The template paying the connection's payout. */
      readonly tpl: BlockTemplate;
      readonly header: BlockHeader;
      readonly extranonce: Uint8Array;
      readonly isBlock: boolean;
      /** Difficulty credited: the lower of the job's and the current one. */
      readonly credit: number;
    };

/** What a share is checked against. */
export interface ShareContext {
  readonly jobs: JobBook;
  /** The chain's tip hash (hex). */
  readonly tipHash: string;
  /** Latest acceptable ntime: now + the chain's future limit, Unix seconds. */
  readonly latestTime: number;
}

/**
 * Checks a `mining.submit`: parameters, subscription, authorisation, job, extranonce2, ntime
 * window, nonce, version bits within the negotiated mask, duplicate, stale parent, then the hash
 * against the share target (1 % tolerance). A valid share's key is remembered (duplicates).
 */
export function checkShare(conn: Connection, args: unknown[], ctx: ShareContext): ShareCheck {
  const rejected = (worker: WorkerIdentity | undefined, code: number, reason: string): ShareCheck => ({ kind: 'rejected', worker, code, reason });
  if (args.length < 5 || args.length > 6 || !args.every((a) => typeof a === 'string')) {
    return rejected(conn.worker(args[0]), StratumError.OTHER, 'mining.submit takes [worker, job_id, extranonce2, ntime, nonce] (and version bits), all strings');
  }
  const [workerName, jobId, en2Hex, ntimeHex, nonceHex, versionHex] = args as string[];
  if (!conn.subscribed) return { kind: 'refused', code: StratumError.NOT_SUBSCRIBED, reason: 'not subscribed: send mining.subscribe first' };
  const worker = conn.worker(workerName);
  if (!worker) return { kind: 'refused', code: StratumError.UNAUTHORIZED, reason: `unauthorized worker ${workerName.slice(0, 100)}: send mining.authorize first` };
  const work = ctx.jobs.get(jobId);
  const jobDiff = conn.jobDifficulty.get(jobId);
  if (!work || jobDiff === undefined) return rejected(worker, StratumError.JOB_NOT_FOUND, 'job not found');
  if (!/^[0-9a-fA-F]+$/.test(en2Hex) || en2Hex.length !== 2 * EXTRANONCE2_SIZE) {
    return rejected(worker, StratumError.OTHER, `extranonce2 must be ${EXTRANONCE2_SIZE} bytes (${2 * EXTRANONCE2_SIZE} hex digits)`);
  }
  const ntime = parseHex32(ntimeHex);
  if (ntime === undefined) return rejected(worker, StratumError.OTHER, 'ntime must be 8 hex digits');
  const latest = ctx.latestTime;
  if (ntime < work.tpl.minTime || ntime > latest) return rejected(worker, StratumError.OTHER, `ntime out of range: ${ntime} is outside [${work.tpl.minTime}, ${latest}]`);
  const nonce = parseHex32(nonceHex);
  if (nonce === undefined) return rejected(worker, StratumError.OTHER, 'nonce must be 8 hex digits');
  let version = work.tpl.block.header.version >>> 0;
  if (versionHex !== undefined) {
    const bits = parseHex32(versionHex);
    if (bits === undefined) return rejected(worker, StratumError.OTHER, 'version bits must be 8 hex digits');
    if ((bits & ~conn.versionMask) >>> 0 !== 0) return rejected(worker, StratumError.OTHER, `version bits ${versionHex} outside the negotiated mask ${hex32(conn.versionMask)}`);
    version = ((version & ~conn.versionMask) | (bits & conn.versionMask)) >>> 0;
  }
  const en2 = en2Hex.toLowerCase();
  const key = `${conn.extranonce1Hex}${en2}${hex32(ntime)}${hex32(nonce)}${hex32(version)}`;
  if (work.submitted.has(key)) return rejected(worker, StratumError.DUPLICATE, 'duplicate share');
  // After the duplicate check: a share resubmitted after it completed a block is a duplicate, not stale.
  if (work.tpl.parentHash !== ctx.tipHash) return { kind: 'stale', worker, code: StratumError.JOB_NOT_FOUND, reason: 'stale: the job builds on an old block' };

  const tpl = minerTemplate(work, conn.payout!);
  const extranonce = new Uint8Array(EXTRANONCE_SIZE);
  extranonce.set(conn.extranonce1, 0);
  extranonce.set(fromHex(en2), 4);
  const header = { ...templateHeader(tpl, { extranonce, time: ntime, nonce }), version };
  const value = hashToBigInt(blockHash(header));
  const isBlock = value <= tpl.target;
  // Credit the lower of the job's difficulty and the current one: a miner may apply a new
  // difficulty to jobs it already holds, in either direction.
  const credit = Math.min(jobDiff, jobDifficulty(conn, work));
  if (!isBlock && value > targetFromDifficulty(credit * SHARE_TOLERANCE)) return rejected(worker, StratumError.LOW_DIFFICULTY, 'low difficulty share');
  // Remembered only once it met its target: junk costs a hash, never memory.
  work.submitted.add(key);
  return { kind: 'valid', worker, work, tpl, header, extranonce, isBlock, credit };
}
