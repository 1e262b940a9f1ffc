/**
 * Step 1 of a sync job (`sync.ts`): the peer's headers past our best chain, fetched with
 * GET_HEADERS from a locator (Bitcoin's: the last 10 blocks, then exponentially sparser, then
 * genesis) and repeated from the last header until the peer has no more or `maxHeadersPerJob`
 * are held. Every header is checked in context as it arrives (link, ASERT bits, proof of work,
 * median time past, future limit), so a peer cannot make us download bodies of a chain it did
 * not do the work for. A failure marks the peer exhausted at its current work and charges it.
 */
import { blockHash, type BlockHeader } from '../consensus/block.js';
import { ValidationError } from '../consensus/errors.js';
import { bytesEqual, toHex } from '../consensus/hash.js';
import { blockWork } from '../consensus/pow.js';
import { medianTime, validateHeader } from '../consensus/validate.js';
import type { ChainEntry, Logger } from '../chain/types.js';
import type { HeaderItem, PeerSync } from './blockDownload.js';
import { MAX_HEADERS, MAX_LOCATOR_HASHES, zeroHash } from './protocol.js';
import { Offence } from './scoring.js';
import { P2PErrorCode, peerErrorOf, type SyncTransport } from './syncProtocol.js';
import { verdictOf } from './verdict.js';
import type { P2PChain } from './types.js';

/** What the header fetch needs from the sync manager. */
export interface HeaderContext {
  readonly chain: P2PChain;
  readonly transport: SyncTransport;
  readonly maxHeadersPerJob: number;
  signal(): AbortSignal;
  penalize(peer: string, points: number, reason: string): void;
  /** Whether the sync stopped (the fetch gives up). */
  stopped(): boolean;
  readonly now: () => number;
  readonly log: Logger;
}

/** Our best chain's locator: the last 10 blocks, then doubling steps back, then genesis. */
export function locatorOf(chain: P2PChain): Uint8Array[] {
  const out: Uint8Array[] = [];
  let step = 1;
  for (let h = chain.tip.height; h > 0 && out.length < MAX_LOCATOR_HASHES - 1; h -= step) {
    out.push(chain.getEntryByHeight(h)!.hash);
    if (out.length >= 10) step *= 2;
  }
  out.push(chain.getEntryByHeight(0)!.hash);
  return out;
}

/** Times of `entry` and its ancestors, oldest first, at most `medianTimeSpan`. */
function timesUpTo(chain: P2PChain, entry: ChainEntry): number[] {
  const times: number[] = [];
  let cur: ChainEntry | undefined = entry;
  while (cur && times.length < chain.params.medianTimeSpan) {
    times.unshift(cur.header.time);
    cur = cur.height === 0 ? undefined : chain.getEntryByHash(toHex(cur.header.prevHash));
  }
  return times;
}

/** Fetches and checks the peer's headers past our best chain; undefined when there is nothing (better) to download. */
export async function fetchHeaders(peer: PeerSync, ctx: HeaderContext): Promise<HeaderItem[] | undefined> {
  const params = ctx.chain.params;
  const items: HeaderItem[] = [];
  let prev: { hash: Uint8Array; height: number; time: number; work: bigint } | undefined;
  let times: number[] = [];
  let locator = locatorOf(ctx.chain);
  let complete = false;
  const workAtStart = peer.work;
  /** `transient`: the request failed in transit (a timeout, a dropped stream), which says nothing of the peer's chain. */
  const giveUp = (points: number, reason: string, transient = false): undefined => {
    peer.exhaustedWork = workAtStart;
    peer.discredited = !transient;
    ctx.penalize(peer.id, points, reason);
    if (reason) ctx.log.debug({ peer: peer.id, reason }, 'header sync abandoned');
    return undefined;
  };
  const maxRounds = Math.ceil(ctx.maxHeadersPerJob / MAX_HEADERS) + 1;
  rounds: for (let round = 0; round < maxRounds && !ctx.stopped(); round++) {
    let headers: BlockHeader[];
    try {
      headers = await ctx.transport.headers(peer.id, locator, zeroHash(), MAX_HEADERS, ctx.signal());
    } catch (e) {
      const err = peerErrorOf(e, 'headers');
      return giveUp(err.points, err.message, err.code === P2PErrorCode.TIMEOUT);
    }
    if (headers.length === 0) {
      complete = true;
      break;
    }
    const nowSec = Math.floor(ctx.now() / 1000);
    for (const h of headers) {
      const hash = blockHash(h);
      const hex = toHex(hash);
      if (!prev) {
        // Headers we already hold (the locator is sparse) only move the base forward.
        const known = ctx.chain.getEntryByHash(hex);
        if (known) {
          locator = [known.hash];
          continue;
        }
        const parent = ctx.chain.getEntryByHash(toHex(h.prevHash));
        if (!parent) return giveUp(Offence.UNCONNECTED_HEADERS, 'headers do not connect to our chain');
        prev = { hash: parent.hash, height: parent.height, time: parent.header.time, work: parent.chainWork };
        times = timesUpTo(ctx.chain, parent);
      } else if (!bytesEqual(h.prevHash, prev.hash)) {
        return giveUp(Offence.UNCONNECTED_HEADERS, 'headers are not a chain');
      }
      try {
        validateHeader(h, { prevHash: prev.hash, prevHeight: prev.height, prevTime: prev.time, medianTimePast: medianTime(times), now: nowSec }, params);
      } catch (e) {
        if (e instanceof ValidationError && e.action === 'ignore') {
          // Too far in the future for now: download what precedes it.
          complete = true;
          break rounds;
        }
        const v = verdictOf('block', e);
        return giveUp(v.banScore, `invalid header at height ${prev.height + 1}: ${v.code}`);
      }
      prev = { hash, height: prev.height + 1, time: h.time, work: prev.work + blockWork(h.bits) };
      times.push(h.time);
      if (times.length > params.medianTimeSpan) times.shift();
      items.push({ hash, hex, height: prev.height });
    }
    if (headers.length < MAX_HEADERS) {
      complete = true;
      break;
    }
    if (items.length >= ctx.maxHeadersPerJob) break;
    if (prev) locator = [prev.hash];
  }
  if (items.length === 0 || !prev) return giveUp(0, '');
  // A finished header chain that is not heavier than ours is not worth its bodies.
  if (complete && prev.work <= ctx.chain.tip.chainWork) return giveUp(0, '');
  return items;
}
