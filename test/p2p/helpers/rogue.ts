/** A misbehaving libp2p host in the test process, dialled to a real node: what the ban and flood tests play the attacker with. */
import { generateKeyPair } from '@libp2p/crypto/keys';
import { multiaddr } from '@multiformats/multiaddr';
import { createHost, type Host } from '../../../p2p/host.js';
import type { ProtocolIds } from '../../../p2p/protocol.js';

/**
 * Starts a host speaking this chain's protocols (generous frame limit) and dials `addr`. It
 * connects to that node only: its DHT would otherwise find the node's other peers and flood them
 * directly, and the tests ask what the node itself forwards.
 */
export async function startRogue(ids: ProtocolIds, addr: string): Promise<Host> {
  const ma = multiaddr(addr);
  const target = ma.getComponents().find((c) => c.name === 'p2p')?.value;
  if (!target) throw new Error(`rogue: ${addr} names no peer id`);
  const host = await createHost({
    privateKey: await generateKeyPair('Ed25519'),
    host: '127.0.0.1',
    port: 0,
    bootstrap: [],
    ids,
    maxMessageBytes: 16 * 1024 * 1024,
    maxConnections: 8,
    agentVersion: 'rogue/1',
    isBanned: (peer) => peer.toString() !== target,
  });
  await host.start();
  await host.dial(ma);
  return host;
}
