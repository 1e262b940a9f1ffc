/**
 * Gossip frames that never reach a topic validator: gossipsub drops a frame whose length prefix
 * exceeds `maxInboundDataLength` (it ends the peer's inbound stream) and skips an RPC it cannot
 * decode, and tells nobody but its debug log. Both cannot come from an honest implementation, so
 * the sender is reported to peer scoring (`Offence.OVERSIZED`, `Offence.MALFORMED`: banned at
 * once, as docs/operators-guide.md says of gossip garbage).
 *
 * @libp2p/gossipsub 17 has no event for either; its two instance methods on these paths are
 * wrapped (`handlePeerReadStreamError(err, peerId)`, named in its source as the hook "to spy on
 * the error handling", and `decodeRpc(bytes)`, which runs inside the read loop of one peer).
 * `decodeRpc` does not receive the peer, so the read loop's input (`pipePeerReadStream`) is
 * wrapped too, to know whose frame each decoded buffer is. A test (test/integration/p2p-ban.test.ts) fails if an
 * upgrade renames them.
 *
 * Outbound, gossipsub 17 cannot send a frame over 4 MiB at all: its outbound stream length-prefixes
 * each RPC with it-length-prefixed's default limit and the publish quietly reaches no peer
 * (libp2p/js-libp2p#3427; the option that fixes it, `maxOutboundDataLength`, is an open pull
 * request, #3486). A full block is up to 8 MB, so `sendLargeGossipFrames` gives each outbound
 * stream the same limit as inbound frames, and splits an RPC that would pass that limit with
 * several messages (an IWANT answer: a block and transactions, or two blocks, are one RPC) into
 * one RPC per message (test/p2p/gossipLarge.test.ts fails without either).
 */
import type { GossipSub } from '@libp2p/gossipsub';
import type { PeerId } from '@libp2p/interface';
import { encode } from 'it-length-prefixed';
import type { Uint8ArrayList } from 'uint8arraylist';
import { Offence } from './scoring.js';

/** The private surface of @libp2p/gossipsub 17 that is wrapped (see module comment). */
interface GossipSubInternals {
  handlePeerReadStreamError(err: unknown, peerId: PeerId): void;
  decodeRpc(bytes: Uint8Array): unknown;
  pipePeerReadStream(peerId: PeerId, stream: AsyncIterable<unknown>): Promise<void>;
  sendRpc(id: string, rpc: GossipRpc): boolean;
  readonly streamsOutbound: Map<string, GossipOutboundStream>;
  readonly opts: { readonly batchPublish?: boolean };
}

/** An RPC as gossipsub 17's `sendRpc` takes it (the fields read here). */
interface GossipRpc {
  subscriptions?: unknown[];
  messages?: { data?: Uint8Array }[];
  control?: unknown;
}

/** The outbound stream of @libp2p/gossipsub 17 (`OutboundStream`, not exported): what is replaced. */
interface GossipOutboundStream {
  push(data: Uint8Array): void;
  pushPrefixed(data: Uint8Array | Uint8ArrayList): void;
}

/** `pubsub`'s private surface, once each of `methods` is found to be a function (an upgrade may rename them). */
function internalsOf(pubsub: GossipSub, methods: readonly ('handlePeerReadStreamError' | 'decodeRpc' | 'pipePeerReadStream' | 'sendRpc')[]): GossipSubInternals {
  const inner = pubsub as unknown as GossipSubInternals;
  for (const m of methods) {
    if (typeof inner[m] !== 'function') throw new Error(`@libp2p/gossipsub has no ${m}: p2p/gossipFrames.ts needs updating`);
  }
  return inner;
}

/** Counters of the frames reported. */
export interface BadFrameStats {
  oversized: number;
  undecodable: number;
}

/**
 * Makes `pubsub` report oversized and undecodable frames to `penalize`; returns the counters.
 * Throws when the wrapped methods are missing (a gossipsub upgrade changed them).
 */
export function reportBadGossipFrames(pubsub: GossipSub, penalize: (peer: string, points: number, reason: string) => void): BadFrameStats {
  const inner = internalsOf(pubsub, ['handlePeerReadStreamError', 'decodeRpc', 'pipePeerReadStream']);
  const stats: BadFrameStats = { oversized: 0, undecodable: 0 };
  const onReadError = inner.handlePeerReadStreamError.bind(inner);
  inner.handlePeerReadStreamError = (err, peerId) => {
    const name = (err as { name?: string } | undefined)?.name;
    // it-length-prefixed's errors for a length prefix over the limit (or a prefix too long to be one).
    if (name === 'InvalidDataLengthError' || name === 'InvalidDataLengthLengthError') {
      stats.oversized++;
      penalize(peerId.toString(), Offence.OVERSIZED, `gossip frame over the size limit (${name})`);
    }
    onReadError(err, peerId);
  };
  // Whose frame each decoded buffer is: the read loop calls `data.subarray()` and decodes the
  // result, so each frame is handed on as that one buffer, remembered with its sender.
  const owner = new WeakMap<Uint8Array, string>();
  const pipe = inner.pipePeerReadStream.bind(inner);
  inner.pipePeerReadStream = (peerId, stream) => {
    const id = peerId.toString();
    async function* tagged(): AsyncGenerator<{ subarray(): Uint8Array }> {
      for await (const frame of stream as AsyncIterable<{ subarray(): Uint8Array }>) {
        const bytes = frame.subarray();
        owner.set(bytes, id);
        yield { subarray: () => bytes };
      }
    }
    return pipe(peerId, tagged());
  };
  const decode = inner.decodeRpc.bind(inner);
  inner.decodeRpc = (bytes) => {
    try {
      return decode(bytes);
    } catch (e) {
      const peer = owner.get(bytes);
      if (peer !== undefined) {
        stats.undecodable++;
        penalize(peer, Offence.MALFORMED, `undecodable gossip frame: ${(e as Error).message.slice(0, 100)}`);
      }
      throw e;
    }
  };
  return stats;
}

/**
 * Lets `pubsub` send frames up to `maxBytes` (see module comment): every outbound stream it
 * opens length-prefixes its RPCs with that limit instead of 4 MiB, and an RPC of several messages
 * over half of it is sent one message at a time. Call before the host starts.
 * Throws when the surface it replaces is missing (a gossipsub upgrade changed it).
 */
export function sendLargeGossipFrames(pubsub: GossipSub, maxBytes: number): void {
  const inner = internalsOf(pubsub, ['sendRpc']);
  if (!(inner.streamsOutbound instanceof Map)) throw new Error('@libp2p/gossipsub has no streamsOutbound map: p2p/gossipFrames.ts needs updating');
  // Batch publishing encodes with the 4 MiB default on a path of its own (sendRpcInBatch).
  if (inner.opts?.batchPublish) throw new Error('gossipsub batchPublish bypasses the outbound frame limit: leave it off');
  // One RPC carrying several messages over half the limit goes as one RPC per message (each
  // message alone fits: none is accepted or published above maxBlockBytes), then its control part.
  const sendRpc = inner.sendRpc.bind(inner);
  inner.sendRpc = (id: string, rpc: GossipRpc): boolean => {
    const messages = rpc.messages ?? [];
    if (messages.length < 2 || messages.reduce((n, m) => n + (m.data?.length ?? 0), 0) <= maxBytes / 2) return sendRpc(id, rpc);
    let sent = true;
    for (const m of messages) sent = sendRpc(id, { subscriptions: [], messages: [m] }) && sent;
    if ((rpc.subscriptions?.length ?? 0) > 0 || rpc.control !== undefined) sent = sendRpc(id, { ...rpc, messages: [] }) && sent;
    return sent;
  };
  const streams = inner.streamsOutbound;
  const set = streams.set.bind(streams);
  streams.set = (id, stream) => {
    if (typeof stream.pushPrefixed !== 'function') throw new Error('@libp2p/gossipsub outbound stream has no pushPrefixed: p2p/gossipFrames.ts needs updating');
    stream.push = (data) => stream.pushPrefixed(encode.single(data, { maxDataLength: maxBytes }));
    return set(id, stream);
  };
}
