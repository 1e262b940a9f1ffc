/**
 * Telling peers of another chain apart from peers that do not answer.
 *
 * Every protocol name of ours carries the first 8 bytes of the genesis hash (protocol.ts), so a
 * node of another chain (another devnet, mainnet against a devnet) never syncs with us — which
 * used to look like a bootstrap peer that simply never answered. Two signs now name the other
 * chain: the peer's identify list (`/native/<its net>/sync/…`), and a chain-independent protocol,
 * `/native/chain-info/1.0.0`, on which a node answers its network, chain id and full genesis hash
 * (one length-prefixed JSON frame, then close). The network module logs a warning naming both
 * genesis hashes and lists such peers in `/api/v1/status` (`otherChainPeers`).
 */
import './polyfill.js';
import { lpStream } from '@libp2p/utils';
import { peerIdFromString } from '@libp2p/peer-id';
import type { Connection, Libp2p, Stream } from '@libp2p/interface';

/** The chain-independent protocol answering `ChainInfo`. */
export const CHAIN_INFO_PROTOCOL = '/native/chain-info/1.0.0';
/** Largest answer, bytes. */
const MAX_INFO_BYTES = 1024;

/** What a node says about its chain. */
export interface ChainInfo {
  readonly network: string;
  readonly chainId: number;
  /** Genesis block hash, 64 hex characters. */
  readonly genesis: string;
}

/** A connected peer found to be on another chain. */
export interface OtherChainPeer {
  readonly peerId: string;
  /** Its genesis hash: 64 hex characters from chain-info, or the 16 of its protocol names followed by `…`. */
  readonly genesis: string;
  readonly network: string | null;
  readonly chainId: number | null;
  /** Whether it is one of this node's `--bootstrap` peers. */
  readonly bootstrap: boolean;
  /** Unix ms when it was noticed. */
  readonly seenAt: number;
}

/** The stream handler answering this node's `ChainInfo`. */
export function createChainInfoHandler(info: ChainInfo): (stream: Stream, connection: Connection) => Promise<void> {
  const bytes = new TextEncoder().encode(JSON.stringify(info));
  return async (stream) => {
    try {
      await lpStream(stream, { maxDataLength: MAX_INFO_BYTES }).write(bytes);
      await stream.close();
    } catch (e) {
      stream.abort(e as Error);
    }
  };
}

/** Asks `peer` for its `ChainInfo`; throws on any failure or a malformed answer. */
export async function requestChainInfo(node: Pick<Libp2p, 'dialProtocol'>, peer: string, signal: AbortSignal): Promise<ChainInfo> {
  const stream = await node.dialProtocol(peerIdFromString(peer), CHAIN_INFO_PROTOCOL, { signal });
  try {
    const frame = await lpStream(stream, { maxDataLength: MAX_INFO_BYTES }).read({ signal });
    const info = JSON.parse(new TextDecoder().decode(frame.subarray())) as Partial<ChainInfo>;
    if (typeof info.network !== 'string' || typeof info.chainId !== 'number' || typeof info.genesis !== 'string' || !/^[0-9a-f]{64}$/.test(info.genesis)) {
      throw new Error('malformed chain-info answer');
    }
    await stream.close().catch(() => undefined);
    return { network: info.network.slice(0, 64), chainId: info.chainId, genesis: info.genesis };
  } catch (e) {
    stream.abort(e as Error);
    throw e;
  }
}

/** The genesis prefix (16 hex characters) of another chain named by a peer's protocols, if any. */
export function otherChainNet(protocols: readonly string[], ownNet: string): string | undefined {
  for (const p of protocols) {
    const m = /^\/native\/([0-9a-f]{16})\/sync\//.exec(p);
    if (m && m[1] !== ownNet) return m[1];
  }
  return undefined;
}
