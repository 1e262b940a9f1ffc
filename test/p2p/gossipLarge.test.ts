/**
 * Gossip frames over 4 MiB between two real hosts on 127.0.0.1: gossipsub 17 alone publishes
 * them to nobody (its outbound length prefix stops at 4 MiB), so a full block would only travel
 * by the sync's status poll. The host lets frames up to its maxMessageBytes out, and no larger,
 * and splits an RPC of several large messages into one per message.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { createHost, type Host } from '../../p2p/host.js';
import { protocolIds } from '../../p2p/protocol.js';
import { waitFor } from './helpers/node.js';

const ids = protocolIds(new Uint8Array(32).fill(7));
const maxMessageBytes = 8_000_000 + 64 * 1024;
const hosts: Host[] = [];

async function host(): Promise<Host> {
  const h = await createHost({ privateKey: await generateKeyPair('Ed25519'), host: '127.0.0.1', port: 0, bootstrap: [], ids, maxMessageBytes, maxConnections: 4, agentVersion: 't', isBanned: () => false });
  hosts.push(h);
  await h.start();
  return h;
}

afterAll(async () => {
  for (const h of hosts) await h.stop();
});

/** Two started hosts on the block topic, A connected to B and seeing B subscribed; what B receives. */
async function subscribedPair(): Promise<{ a: Host; b: Host; topic: string; received: Uint8Array[] }> {
  const [a, b] = [await host(), await host()];
  const topic = ids.blockTopic;
  a.services.pubsub.subscribe(topic);
  b.services.pubsub.subscribe(topic);
  const received: Uint8Array[] = [];
  b.services.pubsub.addEventListener('message', (evt) => received.push(evt.detail.data));
  await a.dial(b.getMultiaddrs()[0]);
  await waitFor(() => a.services.pubsub.getSubscribers(topic).some((p) => p.equals(b.peerId)), 10_000, 'A to see B subscribed');
  return { a, b, topic, received };
}

describe('gossip of large frames', () => {
  test('a 7.9 MB message reaches the subscribed peer; one over the limit reaches nobody', async () => {
    const { a, b, topic, received } = await subscribedPair();

    const block = new Uint8Array(7_908_639).map((_, i) => (i * 31) & 0xff);
    const sent = await a.services.pubsub.publish(topic, block);
    expect(sent.recipients.map(String)).toEqual([b.peerId.toString()]);
    await waitFor(() => received.length === 1, 15_000, 'B to receive the message');
    expect(Buffer.from(received[0]).equals(Buffer.from(block))).toBe(true);

    // Over the limit: not sent (B would drop it and ban A), and the stream stays usable.
    const tooBig = await a.services.pubsub.publish(topic, new Uint8Array(maxMessageBytes + 1).fill(1));
    expect(tooBig.recipients).toEqual([]);
    const after = await a.services.pubsub.publish(topic, Uint8Array.of(1, 2, 3));
    expect(after.recipients.map(String)).toEqual([b.peerId.toString()]);
    await waitFor(() => received.length === 2, 10_000, 'B to receive the small message');
    expect(Array.from(received[1])).toEqual([1, 2, 3]);
  }, 40_000);

  test('an RPC of two 5 MB messages (as an IWANT answer may be) goes as one RPC per message', async () => {
    const { a, b, topic, received } = await subscribedPair();

    // gossipsub answers an IWANT with every asked message in one RPC, through sendRpc (wrapped).
    const blocks = [5_000_000, 5_000_001].map((n, k) => new Uint8Array(n).fill(k + 1));
    const sendRpc = (a.services.pubsub as unknown as { sendRpc(id: string, rpc: object): boolean }).sendRpc;
    const sent = sendRpc.call(a.services.pubsub, b.peerId.toString(), { subscriptions: [], messages: blocks.map((data) => ({ topic, data })) });
    expect(sent).toBe(true);
    await waitFor(() => received.length === 2, 15_000, 'B to receive both messages');
    expect(received.map((d) => d.length).sort()).toEqual([5_000_000, 5_000_001]);
  }, 40_000);
});
