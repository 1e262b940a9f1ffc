/**
 * The sync protocol over libp2p streams (`/native/<net>/sync/1.0.0`, see `protocol.ts`): the
 * responder that serves status, headers by locator and blocks by hash from the local chain, and
 * the requester (`SyncTransport`) the sync manager uses. Both sides enforce the frame limits;
 * a peer that breaks them gets misbehaviour points (`scoring.ts`).
 */
import './polyfill.js';
import { lpStream } from '@libp2p/utils';
import { peerIdFromString } from '@libp2p/peer-id';
import type { Libp2p, Stream, Connection } from '@libp2p/interface';
import type { BlockHeader } from '../consensus/block.js';
import { CodecError, NodeError, ValidationError } from '../consensus/errors.js';
import { toHex } from '../consensus/hash.js';
import { silentLogger, type Logger } from '../chain/types.js';
import {
  BLOCK_RESPONSE_BUDGET,
  MAX_HEADERS,
  MAX_REQUEST_BYTES,
  decodeBlockFrame,
  decodeHeaders,
  decodeRequest,
  decodeStatus,
  encodeBlockFrame,
  encodeHeaders,
  encodeNotFound,
  encodeRequest,
  encodeStatus,
  isZeroHash,
  type BlockFrame,
  type PeerStatus,
  type SyncRequest,
} from './protocol.js';
import { Offence } from './scoring.js';
import type { P2PChain } from './types.js';

/** Error codes of the p2p layer. */
export const P2PErrorCode = {
  /** The peer broke the protocol (malformed, oversized or unsolicited data). */
  PROTOCOL: 'p2p_protocol_violation',
  /** The peer did not answer in time, or the stream broke. */
  TIMEOUT: 'p2p_timeout',
  /** The peer could not be reached. */
  UNREACHABLE: 'p2p_unreachable',
} as const;

/** A failed exchange with a peer, with the misbehaviour points it deserves (0: not its fault). */
export class PeerError extends NodeError<string, { points: number }> {
  constructor(code: string, message: string, points: number) {
    super(code, message, { points });
    this.name = 'PeerError';
  }
  get points(): number {
    return this.payload.points;
  }
}

/** Requests to one peer (by peer id string), as the sync manager needs them. */
export interface SyncTransport {
  status(peer: string, signal: AbortSignal): Promise<PeerStatus>;
  headers(peer: string, locator: readonly Uint8Array[], stop: Uint8Array, max: number, signal: AbortSignal): Promise<BlockHeader[]>;
  /** Requests blocks; `onFrame` gets each answer frame in request order (it may throw to abort). */
  blocks(peer: string, hashes: readonly Uint8Array[], onFrame: (frame: BlockFrame) => void, signal: AbortSignal): Promise<void>;
}

/** Seconds a responder waits for the request frame. */
const REQUEST_READ_TIMEOUT_MS = 10_000;

/** Maps a stream/codec failure while reading a peer's frame to a PeerError. */
export function peerErrorOf(e: unknown, what: string): PeerError {
  if (e instanceof PeerError) return e;
  if (e instanceof CodecError || e instanceof ValidationError) return new PeerError(P2PErrorCode.PROTOCOL, `${what}: ${e.message}`, Offence.MALFORMED);
  const name = (e as Error)?.name;
  switch (name) {
    case 'InvalidDataLengthError':
      return new PeerError(P2PErrorCode.PROTOCOL, `${what}: frame above the size limit`, Offence.OVERSIZED);
    case 'InvalidDataLengthLengthError':
    case 'InvalidMessageLengthError':
      return new PeerError(P2PErrorCode.PROTOCOL, `${what}: malformed frame length`, Offence.MALFORMED);
    case 'TimeoutError':
    case 'AbortError':
      return new PeerError(P2PErrorCode.TIMEOUT, `${what}: timed out`, Offence.TIMEOUT);
    case 'UnexpectedEOFError':
      return new PeerError(P2PErrorCode.TIMEOUT, `${what}: stream ended early`, Offence.TIMEOUT);
    default:
      return new PeerError(P2PErrorCode.TIMEOUT, `${what}: ${(e as Error)?.message ?? String(e)}`, 0);
  }
}

/** What the responder needs besides the chain. */
export interface SyncServerOptions {
  readonly chainId: number;
  readonly genesisHash: Uint8Array;
  readonly logger?: Logger;
  /** Misbehaviour report for a requester that broke the protocol. */
  readonly penalize: (peer: string, points: number, reason: string) => void;
}

/** Answers one GET_HEADERS from the best chain (Bitcoin's locator rule). */
export function headersForLocator(chain: P2PChain, locator: readonly Uint8Array[], stop: Uint8Array, max: number): BlockHeader[] {
  let start = 0;
  for (const h of locator) {
    const e = chain.getEntryByHash(toHex(h));
    if (e && chain.getEntryByHeight(e.height)?.hashHex === e.hashHex) {
      start = e.height;
      break;
    }
  }
  const stopHex = isZeroHash(stop) ? undefined : toHex(stop);
  const out: BlockHeader[] = [];
  const last = Math.min(chain.tip.height, start + Math.min(max, MAX_HEADERS));
  for (let h = start + 1; h <= last; h++) {
    const e = chain.getEntryByHeight(h);
    if (!e) break;
    out.push(e.header);
    if (e.hashHex === stopHex) break;
  }
  return out;
}

/** Creates the stream handler that serves the sync protocol from `chain`. */
export function createSyncHandler(chain: P2PChain, opts: SyncServerOptions): (stream: Stream, connection: Connection) => Promise<void> {
  const log = opts.logger ?? silentLogger;
  return async (stream, connection) => {
    const peer = connection.remotePeer.toString();
    const lp = lpStream(stream, { maxDataLength: MAX_REQUEST_BYTES });
    let req: SyncRequest;
    try {
      const frame = await lp.read({ signal: AbortSignal.timeout(REQUEST_READ_TIMEOUT_MS) });
      req = decodeRequest(frame.subarray());
    } catch (e) {
      const err = peerErrorOf(e, 'sync request');
      if (err.code === P2PErrorCode.PROTOCOL) opts.penalize(peer, err.points, err.message);
      stream.abort(err);
      return;
    }
    try {
      switch (req.type) {
        case 'status': {
          const tip = chain.tip;
          await lp.write(encodeStatus({ chainId: opts.chainId, genesis: opts.genesisHash, height: tip.height, tip: tip.hash, chainWork: tip.chainWork }));
          break;
        }
        case 'getHeaders':
          await lp.write(encodeHeaders(headersForLocator(chain, req.locator, req.stop, req.max)));
          break;
        case 'getBlocks': {
          let sent = 0;
          for (const hash of req.hashes) {
            if (sent >= BLOCK_RESPONSE_BUDGET) break;
            const bytes = await chain.getBlockBytes(toHex(hash));
            if (!bytes) {
              await lp.write(encodeNotFound(hash));
              continue;
            }
            await lp.write(encodeBlockFrame(bytes));
            sent += bytes.length;
          }
          break;
        }
      }
      await stream.close();
    } catch (e) {
      log.debug({ peer, err: (e as Error).message }, 'sync answer failed');
      stream.abort(e as Error);
    }
  };
}

/** The requester side over a libp2p node. */
export class Libp2pSyncTransport implements SyncTransport {
  constructor(
    private readonly node: Pick<Libp2p, 'dialProtocol'>,
    private readonly protocol: string,
    /** Largest answer frame accepted, bytes. */
    private readonly maxFrame: number,
  ) {}

  private async open(peer: string, req: SyncRequest, signal: AbortSignal) {
    let stream: Stream;
    try {
      stream = await this.node.dialProtocol(peerIdFromString(peer), this.protocol, { signal });
    } catch (e) {
      throw new PeerError(P2PErrorCode.UNREACHABLE, `cannot open a sync stream: ${(e as Error).message}`, 0);
    }
    // An answer may hold a byte budget of blocks arriving faster than they are read: let the
    // read buffers hold it (the default 4 MiB is less than one large block).
    const maxBuffer = BLOCK_RESPONSE_BUDGET + this.maxFrame + 64 * 1024;
    stream.maxReadBufferLength = Math.max(stream.maxReadBufferLength, maxBuffer);
    const lp = lpStream(stream, { maxDataLength: this.maxFrame, maxBufferSize: maxBuffer });
    try {
      await lp.write(encodeRequest(req), { signal });
      await stream.close({ signal });
    } catch (e) {
      stream.abort(e as Error);
      throw peerErrorOf(e, 'sync request');
    }
    return { stream, lp };
  }

  async status(peer: string, signal: AbortSignal): Promise<PeerStatus> {
    const { stream, lp } = await this.open(peer, { type: 'status' }, signal);
    try {
      return decodeStatus((await lp.read({ signal })).subarray());
    } catch (e) {
      stream.abort(e as Error);
      throw peerErrorOf(e, 'status');
    }
  }

  async headers(peer: string, locator: readonly Uint8Array[], stop: Uint8Array, max: number, signal: AbortSignal): Promise<BlockHeader[]> {
    const { stream, lp } = await this.open(peer, { type: 'getHeaders', locator, stop, max }, signal);
    try {
      return decodeHeaders((await lp.read({ signal })).subarray(), max);
    } catch (e) {
      stream.abort(e as Error);
      throw peerErrorOf(e, 'headers');
    }
  }

  async blocks(peer: string, hashes: readonly Uint8Array[], onFrame: (frame: BlockFrame) => void, signal: AbortSignal): Promise<void> {
    const { stream, lp } = await this.open(peer, { type: 'getBlocks', hashes }, signal);
    try {
      for (let i = 0; i < hashes.length; i++) {
        let frame: Uint8Array;
        try {
          frame = (await lp.read({ signal })).subarray();
        } catch (e) {
          // The responder may stop early at its byte budget; the rest is asked again.
          if ((e as Error).name === 'UnexpectedEOFError' && i > 0) return;
          throw e;
        }
        onFrame(decodeBlockFrame(frame));
      }
    } catch (e) {
      stream.abort(e as Error);
      throw peerErrorOf(e, 'blocks');
    }
  }
}
