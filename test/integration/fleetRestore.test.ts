/**
 * A fleet's PostgreSQL ledger restored from a backup, on real node processes: node a mines and
 * sells, node b follows it and sells; both share one ledger and one payee. The operator backs the
 * database up (the nodes stopped), the nodes serve a call each and leave one payment unsettled,
 * then the backup is restored. Every node must honour the gap, not only the lease holder: the
 * call served at a is not served again at b, the one served at b not again at a, and none of the
 * three payments is refunded past the window.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { createAgentClient } from '../../sdk/client.js';
import { settleCode } from '../helpers/settleCode.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { join } from 'node:path';
import { createP2PCluster, getJson, stopProc, waitUntil, writeSharedGenesis, type P2PCluster, type P2PProc } from '../p2p/helpers/processes.js';
import { DEVNET_POW_LIMIT_BITS } from '../../consensus/params.js';
import { LEGACY_GAP_TOLERANCE_BLOCKS } from '../../x402/native/unhonored.js';

/** A devnet genesis for interval mining at one block a second. */
const PACED = { targetSpacing: 1, genesisBits: DEVNET_POW_LIMIT_BITS, powLimitBits: DEVNET_POW_LIMIT_BITS };

const SERVICE = 'native-world-clock';
const WINDOW_S = 6;

let server: TestPostgres;
let url: string;
let cluster: P2PCluster;
let a: P2PProc | undefined;
let b: P2PProc | undefined;

beforeAll(async () => {
  server = await startPostgres();
  url = await server.createDatabase('fleet');
  cluster = createP2PCluster('native-fleet-restore-', ['a', 'b']);
  // Interval mining, a block a second (the genesis --block-time 1 needs): calls settle within the short window.
  writeSharedGenesis(['a', 'b'].map((n) => join(cluster.dir, n)), PACED);
}, 90_000);

afterAll(async () => {
  await cluster?.stop();
  await server?.stop();
});

async function startFleet(): Promise<[P2PProc, P2PProc]> {
  a = await cluster.start('a', ['--mine', '--block-time', '1', '--ledger', url, '--refund-window', String(WINDOW_S)]);
  b = await cluster.start('b', ['--no-mine', '--bootstrap', a.addr, '--ledger', url, '--refund-window', String(WINDOW_S)]);
  const [na, nb] = [a, b];
  await waitUntil(async () => ((await getJson(nb.url, '/api/v1/status')).height as number) >= ((await getJson(na.url, '/api/v1/status')).height as number) - 1, 60_000, 'b to follow a');
  return [na, nb];
}

async function stopFleet(): Promise<void> {
  const [pa, pb] = [a!, b!];
  a = b = undefined;
  await stopProc(pb);
  await stopProc(pa);
}

describe('a fleet ledger restored from a backup', () => {
  test('every node honours the gap: nothing served again at another node, nothing refunded', async () => {
    const key = getDevKeyPair();
    const [first] = await startFleet();
    const backupHeight = (await getJson(first.url, '/api/v1/status')).height as number;
    await stopFleet();
    await server.sql('CREATE DATABASE fleet_backup TEMPLATE fleet');

    // After the backup: a call served at each node, one payment left unsettled.
    let [na, nb] = await startFleet();
    const atA = createAgentClient({ nodeUrl: na.url, key });
    const servedA = await atA.call(SERVICE, 'Europe/Berlin', { timeoutMs: 60_000 });
    const atB = createAgentClient({ nodeUrl: nb.url, key });
    const servedB = await atB.call(SERVICE, 'Asia/Tokyo', { timeoutMs: 60_000 });
    const q = await atA.quote(SERVICE, 'UTC');
    const unsettled = await atA.pay(q);
    await waitUntil(async () => (await getJson(nb.url, `/api/v1/tx/${unsettled}`)).status === 'mined', 60_000, 'the unsettled payment to be mined at b');
    // More blocks after the backup than a ledger without a write count tolerates behind the chain
    // (as on a busy machine): the witness's gap alone must cover them, not a second gap of another cause.
    await waitUntil(async () => ((await getJson(na.url, '/api/v1/status')).height as number) > backupHeight + LEGACY_GAP_TOLERANCE_BLOCKS + 2, 60_000, 'more blocks than the tolerance after the backup');
    await stopFleet();

    // The operator restores the backup.
    await server.sql('DROP DATABASE fleet');
    await server.sql('CREATE DATABASE fleet TEMPLATE fleet_backup');
    [na, nb] = await startFleet();
    const gapsOf = async (n: P2PProc) => (await getJson(n.url, '/api/v1/status')).payments.ledgerGaps as { from: number; to: number; cause: string; resolution?: string }[];
    // Each node whose last write the backup lacks records what it may have forgotten; one gap covering another is not added.
    await waitUntil(async () => (await gapsOf(na)).length > 0 && JSON.stringify((await gapsOf(na)).map((g) => [g.from, g.to])) === JSON.stringify((await gapsOf(nb)).map((g) => [g.from, g.to])), 30_000, 'both nodes to list the same gaps').catch(async (e: Error) => {
      throw new Error(`${e.message}: a lists ${JSON.stringify(await gapsOf(na))}, b ${JSON.stringify(await gapsOf(nb))}; log lines ${JSON.stringify([...na.lines, ...nb.lines].filter((l) => /witness|gap|restor/.test(String(l.msg))).map((l) => l.msg))}`);
    });
    expect((await gapsOf(na)).map((g) => g.cause)).toEqual(['ledger_restored']);
    const clientA = createAgentClient({ nodeUrl: na.url, key });
    const clientB = createAgentClient({ nodeUrl: nb.url, key });
    // Each call served before the restore is refused at the other node (and at its own).
    expect(await settleCode(clientB, SERVICE, 'Europe/Berlin', servedA.txId, servedA.salt!)).toBe('payment_in_ledger_gap');
    expect(await settleCode(clientA, SERVICE, 'Asia/Tokyo', servedB.txId, servedB.salt!)).toBe('payment_in_ledger_gap');
    expect(await settleCode(clientB, SERVICE, 'UTC', unsettled, q.salt!)).toBe('payment_in_ledger_gap');
    expect(await settleCode(clientA, SERVICE, 'UTC', unsettled, q.salt!)).toBe('payment_in_ledger_gap');
    // New calls sell at both; past the window none of the three is refunded.
    expect((await clientB.call(SERVICE, 'Africa/Cairo', { timeoutMs: 60_000 })).receipt.serviceId).toBe(SERVICE);
    await new Promise((r) => setTimeout(r, (WINDOW_S + 3) * 1000));
    for (const n of [na, nb]) expect((await getJson(n.url, '/api/v1/status')).payments.refunded).toBe(0);
    await stopFleet();
  }, 400_000);
});
