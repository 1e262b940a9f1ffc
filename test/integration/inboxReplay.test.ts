/**
 * Inbox signatures replayed as an attacker would, against two real node processes (each its own
 * ledger, so its own node id): a provider agent's signed take, once used at node A, is refused at
 * A again (401 `inbox_signature_used`), re-spelled at A (401 `inbox_unauthorized`: one canonical
 * spelling), as it is at B (401 `inbox_signature_foreign_node`), re-addressed to B (401
 * `inbox_unauthorized`: it does not verify), and at A again after A restarted within the
 * signature's clock window (401 `inbox_signature_used`: the used signatures are kept on disk).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { encodeAddress } from '../../consensus/address.js';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { toHex } from '../../consensus/hash.js';
import { COIN, DEVNET_POW_LIMIT_BITS } from '../../consensus/params.js';
import { encodeTx, signTx, TxType, TX_VERSION } from '../../consensus/tx.js';
import { feeForRate } from '../../consensus/txBuilder.js';
import { agentRegister } from '../../consensus/txTypes/agents.js';
import { signInboxRequest } from '../../x402/providers/inboxAuth.js';
import { testKey } from '../helpers/keys.js';
import { createP2PCluster, getJson, isMined, sendTransfer, stopProc, waitUntil, writeSharedGenesis, type P2PCluster, type P2PProc } from '../p2p/helpers/processes.js';

/** A devnet genesis for interval mining at one block a second. */
const PACED = { targetSpacing: 1, genesisBits: DEVNET_POW_LIMIT_BITS, powLimitBits: DEVNET_POW_LIMIT_BITS };
const PATH = '/api/x402/inbox';

let cluster: P2PCluster;
let a: P2PProc;
let b: P2PProc;
const agent = testKey('inbox-replay-agent');

beforeAll(async () => {
  cluster = createP2PCluster('native-inbox-replay-', ['a', 'b']);
  writeSharedGenesis(['a', 'b'].map((n) => join(cluster.dir, n)), PACED);
  a = await cluster.start('a', ['--mine', '--block-time', '1']);
  b = await cluster.start('b', ['--no-mine', '--bootstrap', a.addr]);
  // The agent is funded, then registers (its key on chain): both nodes know it.
  const params = cluster.params;
  const fund = await sendTransfer(a.url, params, getDevKeyPair(), agent.address, COIN);
  await waitUntil(() => isMined(a.url, fund), 30_000, 'the funding to be mined');
  const payload = agentRegister.encodePayload({ name: 'replay-bot', description: 'answers nothing', capabilities: ['test'], payout: agent.address, contact: '' });
  const unsigned = { version: TX_VERSION, chainId: params.chainId, type: TxType.agent_register, nonce: 0n, payload, publicKey: agent.publicKey };
  const tx = signTx({ ...unsigned, fee: feeForRate({ ...unsigned, from: agent.address }, params.minFeeRate) }, agent);
  const res = await fetch(`${a.url}/api/v1/tx`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tx: toHex(encodeTx(tx)) }) });
  const { txId } = (await res.json()) as { txId: string };
  await waitUntil(async () => (await isMined(a.url, txId)) && (await isMined(b.url, txId)), 30_000, 'the registration to be mined at both nodes');
}, 120_000);

afterAll(async () => {
  await cluster.stop();
});

/** A node's id: the seller id its inbox signatures must name. */
async function nodeIdOf(p: P2PProc): Promise<string> {
  return (await getJson<{ payments: { sellerId: string } }>(p.url, '/api/v1/status')).payments.sellerId;
}

/** GET the inbox of `p` with `headers`: the status and the error code. */
async function take(p: P2PProc, headers: Record<string, string>): Promise<[number, string | undefined]> {
  const res = await fetch(`${p.url}${PATH}`, { headers });
  const body = (await res.json()) as { error?: { code: string } };
  return [res.status, body.error?.code];
}

/** The same signature bytes, spelled without padding in the URL-safe alphabet. */
function respelled(headers: Record<string, string>): Record<string, string> {
  const sig = headers['x-native-signature']!;
  return { ...headers, 'x-native-signature': sig.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_') };
}

describe('inbox signatures replayed between two node processes', () => {
  test('used, re-spelled, cross-node, re-addressed and after a restart: 401 with a code each', async () => {
    const [idA, idB] = [await nodeIdOf(a), await nodeIdOf(b)];
    expect(idA).not.toBe(idB);
    const signed = signInboxRequest(agent, { address: encodeAddress(agent.address, cluster.params.hrp), nodeId: idA, method: 'GET', path: PATH, body: new Uint8Array() });
    expect(await take(a, signed)).toEqual([200, undefined]);
    expect(await take(a, signed)).toEqual([401, 'inbox_signature_used']);
    expect(await take(a, respelled(signed))).toEqual([401, 'inbox_unauthorized']);
    expect(await take(b, signed)).toEqual([401, 'inbox_signature_foreign_node']);
    expect(await take(b, { ...signed, 'x-native-node': idB })).toEqual([401, 'inbox_unauthorized']);

    // A restarts within the signature's 60 s window: the signature is still used.
    await stopProc(a);
    a = await cluster.start('a', ['--mine', '--block-time', '1']);
    expect(Date.now() - Number(signed['x-native-timestamp'])).toBeLessThan(60_000);
    expect(await take(a, signed)).toEqual([401, 'inbox_signature_used']);
    // A fresh signature still opens it.
    const fresh = signInboxRequest(agent, { address: encodeAddress(agent.address, cluster.params.hrp), nodeId: idA, method: 'GET', path: PATH, body: new Uint8Array() });
    expect(await take(a, fresh)).toEqual([200, undefined]);
  }, 120_000);
});
