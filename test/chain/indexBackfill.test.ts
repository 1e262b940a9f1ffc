/**
 * A data directory from before the payments index (`ey:`: paid calls, refunds, payouts, rewards in
 * account histories): the chain rebuilds the rows from its stored blocks when it opens, in
 * bounded batches, resumes an interrupted rebuild where it stopped, and a reorganisation removes
 * the rebuilt rows of the blocks it disconnects as it removes rows written at connect time.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { Level } from 'level';
import { openChain, type Chain } from '../../chain/chain.js';
import { PAYMENTS_INDEX, PAYMENTS_INDEX_VERSION } from '../../chain/indexBackfill.js';
import { layout } from '../../chain/layout.js';
import type { ChainEntry, Logger } from '../../chain/types.js';
import { assembleBlock, grindHeader } from '../../consensus/assemble.js';
import { blockTouchedKeys } from '../../consensus/apply.js';
import { encodeAddress } from '../../consensus/address.js';
import { blockHash, type Block } from '../../consensus/block.js';
import { toHex } from '../../consensus/hash.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import { COIN, createDevnetParams } from '../../consensus/params.js';
import { decodeChanges, encodeChanges } from '../../consensus/state.js';
import { signTx, TX_VERSION, txId, encodeTx, type Tx } from '../../consensus/tx.js';
import { feeForRate } from '../../consensus/txBuilder.js';
import { agentInvoke } from '../../consensus/txTypes/agentInvoke.js';
import { refund } from '../../consensus/txTypes/refund.js';
import type { TxTypeModule } from '../../consensus/txTypes/types.js';
import { testKey } from '../helpers/keys.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';

const [alice, bob, miner] = ['backfill-alice', 'backfill-bob', 'backfill-miner'].map(testKey);
const params = createDevnetParams({ genesisBits: 0x207fffff, allocations: [alice, bob].map((k) => ({ address: encodeAddress(k.address, 'tnative'), amount: 1000n * COIN })) });
const now = () => params.genesis.time + 1_000_000;

afterAll(cleanupTmp);

const nonces = new Map<HybridKeyPair, bigint>();
function tx<P>(key: HybridKeyPair, mod: TxTypeModule<P>, p: P): Tx {
  const nonce = nonces.get(key) ?? 0n;
  nonces.set(key, nonce + 1n);
  const base = { version: TX_VERSION, chainId: params.chainId, type: mod.type, from: key.address, nonce, payload: mod.encodePayload(p), ...(nonce === 0n ? { publicKey: key.publicKey } : {}) };
  return signTx({ ...base, fee: feeForRate(base, 1n) }, key);
}

async function mine(chain: Chain, parent: ChainEntry, txs: Tx[], tag = 0): Promise<ChainEntry> {
  const view = await chain.getStateView(blockTouchedKeys({ coinbase: { miner: miner.address }, txs } as unknown as Block));
  const draft = assembleBlock(
    { parent: { hash: parent.hash, height: parent.height, time: parent.header.time }, medianTimePast: parent.header.time, now: parent.header.time + 3, txs, miner: miner.address, state: view, tag: Uint8Array.of(tag) },
    params,
  );
  const block = { ...draft, header: grindHeader(draft.header, params.powLimit)! };
  await chain.addBlock(block);
  return chain.getEntryByHash(toHex(blockHash(block.header)))!;
}

/** The `ey:` rows and each `v:` record (decoded, as key → value hex) of a closed chain directory. */
async function dump(dir: string): Promise<{ rows: Map<string, string>; undo: Map<string, Map<string, string | null>>; marks: Map<string, string> }> {
  const db = new Level<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
  const rows = new Map<string, string>();
  const undo = new Map<string, Map<string, string | null>>();
  const marks = new Map<string, string>();
  for await (const [k, v] of db.iterator()) {
    if (k.startsWith('ey:')) rows.set(k, Buffer.from(v).toString('hex'));
    else if (k.startsWith('v:')) undo.set(k, new Map([...decodeChanges(v)].map(([a, b]) => [a, b && Buffer.from(b).toString('hex')])));
    else if (k.startsWith('m:index:')) marks.set(k, Buffer.from(v).toString('hex'));
  }
  await db.close();
  return { rows, undo, marks };
}

/** Makes the directory look as a node from before the payments index left it: no `ey:` rows, none in the undo records, no version mark. */
async function forgetIndex(dir: string, next?: number): Promise<void> {
  const db = new Level<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
  const batch: ({ type: 'put'; key: string; value: Uint8Array } | { type: 'del'; key: string })[] = [];
  for await (const [k, v] of db.iterator()) {
    if (k.startsWith('ey:') || k.startsWith('m:index:')) batch.push({ type: 'del', key: k });
    else if (k.startsWith('v:')) {
      const rest = new Map([...decodeChanges(v)].filter(([key]) => !key.startsWith('ey:')));
      batch.push(rest.size ? { type: 'put', key: k, value: encodeChanges(rest) } : { type: 'del', key: k });
    }
  }
  if (next !== undefined) batch.push({ type: 'put', key: layout.indexNext(PAYMENTS_INDEX), value: Uint8Array.of(next, 0, 0, 0) });
  await db.batch(batch);
  await db.close();
}

function recordingLogger(): Logger & { lines: { msg: string; obj: Record<string, unknown> }[] } {
  const lines: { msg: string; obj: Record<string, unknown> }[] = [];
  const add = (obj: object, msg?: string) => lines.push({ msg: msg ?? '', obj: obj as Record<string, unknown> });
  return { lines, debug: () => undefined, info: add, warn: add, error: add };
}

const kinds = async (chain: Chain, key: HybridKeyPair) => (await chain.economy.history(key.address, { limit: 100 })).map((r) => `${String(r.kind)}@${String(r.height)}`);

describe('the payments index of a data directory from before it', () => {
  test('is rebuilt from the stored blocks at start, in batches, logged; a reorganisation then removes the rebuilt rows of the blocks it disconnects', async () => {
    const dir = await tmpDir();
    let chain = await openChain({ dataDir: dir, params, verifier: new CountingVerifier(), now });
    expect(await chain.indexesRebuilt()).toEqual({ status: 'current', blocks: 0, rows: 0 });
    const pay = (amount: bigint) => tx(alice, agentInvoke, { serviceId: 'native-world-clock', payTo: bob.address, amount });
    const invoke1 = pay(COIN);
    const invoke2 = pay(2n * COIN);
    await mine(chain, chain.tip, [invoke1, invoke2]);
    const fork = chain.tip;
    await mine(chain, chain.tip, [tx(bob, refund, { invokeId: txId(encodeTx(invoke2)), to: alice.address, amount: 2n * COIN })]);
    await mine(chain, chain.tip, []);
    const before = await kinds(chain, alice);
    expect(before).toEqual(['refund_received@2', 'invoke_paid@1', 'invoke_paid@1']);
    expect(await kinds(chain, miner)).toEqual(['reward@3', 'reward@2', 'reward@1']);
    await chain.close();
    const written = await dump(dir);
    expect(written.rows.size).toBe(3 + 2 * 3);
    expect(written.marks.get(layout.indexVersion(PAYMENTS_INDEX))).toBe(Buffer.from(Uint8Array.of(PAYMENTS_INDEX_VERSION, 0, 0, 0)).toString('hex'));

    // What a node from before the index left: the explorer would say "No activity recorded".
    await forgetIndex(dir);
    expect((await dump(dir)).rows.size).toBe(0);
    const log = recordingLogger();
    chain = await openChain({ dataDir: dir, params, verifier: new CountingVerifier(), now, logger: log, indexBackfill: { maxBlocks: 1 } });
    expect(await chain.indexesRebuilt()).toEqual({ status: 'done', blocks: 3, rows: 9 });
    expect(log.lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['rebuilding the payments index of account histories from the stored blocks', 'payments index rebuilt']));
    expect(log.lines.find((l) => l.msg.startsWith('rebuilding'))?.obj).toMatchObject({ from: 1, to: 3, resumed: false });
    expect(await kinds(chain, alice)).toEqual(before);
    expect(await kinds(chain, bob)).toEqual(['refund_sent@2', 'invoke_received@1', 'invoke_received@1']);

    // A heavier branch from height 1: the rebuilt rows of blocks 2 and 3 go with them.
    let parent = fork;
    for (const tag of [10, 11, 12]) parent = await mine(chain, parent, [], tag);
    expect(chain.tip.height).toBe(4);
    expect(await kinds(chain, alice)).toEqual(['invoke_paid@1', 'invoke_paid@1']);
    expect(await kinds(chain, bob)).toEqual(['invoke_received@1', 'invoke_received@1']);
    expect(await kinds(chain, miner)).toEqual(['reward@4', 'reward@3', 'reward@2', 'reward@1']);
    await chain.close();
    // Rebuilt and connected rows alike: the same bytes as a chain that always had the index.
    const after = await dump(dir);
    expect([...after.rows.keys()].filter((k) => k.includes(':0000000001:'))).toEqual([...written.rows.keys()].filter((k) => k.includes(':0000000001:')));
    for (const [k, v] of written.rows) if (k.includes(':0000000001:')) expect(after.rows.get(k)).toBe(v);
    expect(after.marks.has(layout.indexNext(PAYMENTS_INDEX))).toBe(false);
    // The rebuilt block's undo record is the one connecting it wrote.
    const b1 = `v:${fork.hashHex}`;
    expect(after.undo.get(b1)).toEqual(written.undo.get(b1));
  });

  test('an interrupted rebuild resumes at the height it had reached', async () => {
    const dir = await tmpDir();
    let chain = await openChain({ dataDir: dir, params, verifier: new CountingVerifier(), now });
    for (let i = 0; i < 4; i++) await mine(chain, chain.tip, [], i);
    await chain.close();
    // Stopped after heights 1 and 2 (their rows lost here, to show they are not written again).
    await forgetIndex(dir, 3);
    const log = recordingLogger();
    chain = await openChain({ dataDir: dir, params, verifier: new CountingVerifier(), now, logger: log });
    expect(await chain.indexesRebuilt()).toEqual({ status: 'done', blocks: 2, rows: 2 });
    expect(log.lines.find((l) => l.msg.startsWith('rebuilding'))?.obj).toMatchObject({ from: 3, to: 4, resumed: true });
    expect(await kinds(chain, miner)).toEqual(['reward@4', 'reward@3']);
    await chain.close();
    // Done: the next start has nothing to do.
    chain = await openChain({ dataDir: dir, params, verifier: new CountingVerifier(), now });
    expect(await chain.indexesRebuilt()).toEqual({ status: 'current', blocks: 0, rows: 0 });
    await chain.close();
  });
});
