/**
 * The libp2p host: TCP transport, noise encryption, yamux multiplexing, identify, ping,
 * gossipsub, the network's own Kademlia DHT (peer discovery beyond the bootstrap list) and the
 * bootstrap list. Bans are enforced by the connection gater (no dial to, no connection from a
 * banned peer). Built here, started by `network.ts`.
 */
import './polyfill.js';
import { createLibp2p, type Libp2p } from 'libp2p';
import { tcp } from '@libp2p/tcp';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { identify, type Identify } from '@libp2p/identify';
import { ping, type Ping } from '@libp2p/ping';
import { bootstrap } from '@libp2p/bootstrap';
import { gossipsub, type GossipSub } from '@libp2p/gossipsub';
import { kadDHT, passthroughMapper, type KadDHT } from '@libp2p/kad-dht';
import { multiaddr } from '@multiformats/multiaddr';
import type { PeerId, PrivateKey } from '@libp2p/interface';
import { sha256 } from '../consensus/hash.js';
import { NodeError } from '../consensus/errors.js';
import type { ProtocolIds } from './protocol.js';
import { sendLargeGossipFrames } from './gossipFrames.js';

/** The services of the host. */
export type HostServices = { identify: Identify; ping: Ping; pubsub: GossipSub; dht: KadDHT };
/** A libp2p node with the host's services. */
export type Host = Libp2p<HostServices>;

/** Error codes of the host. */
export const HostErrorCode = {
  BAD_ADDRESS: 'p2p_bad_address',
} as const;

/** Options of the host. */
export interface HostOptions {
  readonly privateKey: PrivateKey;
  /** Interface to listen on (`0.0.0.0`, `127.0.0.1`, `::`…). */
  readonly host: string;
  /** TCP port; 0 picks a free one. */
  readonly port: number;
  /** Multiaddrs dialled at start (those with `/p2p/<id>` also feed the bootstrap discovery). */
  readonly bootstrap: readonly string[];
  readonly ids: ProtocolIds;
  /** Largest gossip frame received or sent, bytes. */
  readonly maxMessageBytes: number;
  readonly maxConnections: number;
  /** `native-node/<version>`, sent in identify. */
  readonly agentVersion: string;
  /** Whether a peer is banned (the gater refuses it). */
  readonly isBanned: (peer: PeerId) => boolean;
}

/** The listen multiaddr of an interface and port. */
export function listenAddr(host: string, port: number): string {
  return host.includes(':') ? `/ip6/${host}/tcp/${port}` : `/ip4/${host}/tcp/${port}`;
}

/** Parses bootstrap multiaddrs; throws `p2p_bad_address` naming the bad one. */
export function parseBootstrap(list: readonly string[]): ReturnType<typeof multiaddr>[] {
  return list.map((s) => {
    try {
      return multiaddr(s);
    } catch (e) {
      throw new NodeError(HostErrorCode.BAD_ADDRESS, `bootstrap address ${s} is not a multiaddr: ${(e as Error).message}`, { address: s });
    }
  });
}

/** Builds the (not yet started) libp2p host. */
export async function createHost(opts: HostOptions): Promise<Host> {
  const withId = parseBootstrap(opts.bootstrap)
    .filter((ma) => ma.getComponents().some((c) => c.name === 'p2p'))
    .map(String);
  const node = await createLibp2p({
    start: false,
    privateKey: opts.privateKey,
    nodeInfo: { userAgent: opts.agentVersion },
    addresses: { listen: [listenAddr(opts.host, opts.port)] },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    connectionManager: { maxConnections: opts.maxConnections, dialTimeout: 10_000 },
    connectionGater: {
      denyDialPeer: (peer) => opts.isBanned(peer),
      denyInboundEncryptedConnection: (peer) => opts.isBanned(peer),
      denyOutboundEncryptedConnection: (peer) => opts.isBanned(peer),
    },
    peerDiscovery: withId.length ? [bootstrap({ list: withId, timeout: 100 })] : [],
    services: {
      identify: identify(),
      ping: ping(),
      pubsub: gossipsub({
        // Messages are content-addressed and validated on their own merits: no libp2p signature.
        globalSignaturePolicy: 'StrictNoSign',
        msgIdFn: (msg) => sha256(msg.data),
        allowedTopics: [opts.ids.txTopic, opts.ids.blockTopic],
        allowPublishToZeroTopicPeers: true,
        ignoreDuplicatePublishError: true,
        emitSelf: false,
        doPX: false,
        maxInboundDataLength: opts.maxMessageBytes,
      }),
      // Our own DHT (protocol id scoped to the chain), not IPFS's; private addresses are kept so
      // a devnet on one machine or a LAN discovers itself.
      dht: kadDHT({ protocol: opts.ids.kad, clientMode: false, peerInfoMapper: passthroughMapper }),
    },
  });
  // A full block is one gossip frame of up to maxMessageBytes; gossipsub alone stops at 4 MiB.
  sendLargeGossipFrames(node.services.pubsub, opts.maxMessageBytes);
  return node;
}
