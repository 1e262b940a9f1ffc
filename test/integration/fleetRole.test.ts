/**
 * A fleet under the operator's guide's database roles, in a throwaway PostgreSQL: the guide's SQL
 * creates the owner role, the runtime role and the database; `native-node ledger migrate --grant`
 * applies the migrations as the owner and grants the runtime role what the guide lists (the
 * guide's GRANT block is checked against the code's); two devnet node processes then run under
 * the runtime role, which may not create a table: a paid call settles at the node without the
 * signer lease, a refusal there is refunded by the lease holder (its payee nonce slot written by
 * the holder), the heartbeats of both show in `fleet status`, and a provider job is queued at one
 * node, handed out and answered at the other, and its payout sent by the holder. A node started
 * under the role with one grant revoked stops at once with `ledger_privilege_missing`, naming it;
 * a node role on a database not yet migrated gets `ledger_migration_required`.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { encodeAddress, TESTNET_HRP } from '../../consensus/address.js';
import { getDevKeyPair } from '../../consensus/devnet.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import { COIN, DEVNET_POW_LIMIT_BITS, type ChainParams } from '../../consensus/params.js';
import { createAgentTx, createModerationTx, createServiceTx } from '../../consensus/registryTxBuilder.js';
import { toHex } from '../../consensus/hash.js';
import { createTransferTx, type BuiltTx, type EnvelopeOptions } from '../../consensus/txBuilder.js';
import { createAgentClient, isAgentClientError } from '../../sdk/client.js';
import { createMemoryPaymentStore } from '../../sdk/pendingPayments.js';
import { readFleetStatus } from '../../cli/fleetCommand.js';
import { PgLedger } from '../../x402/ledger/pgLedger.js';
import { runtimeGrantStatements } from '../../x402/ledger/pgPrivileges.js';
import { signInboxRequest } from '../../x402/providers/inboxAuth.js';
import { testKey } from '../helpers/keys.js';
import { createGuideRoles, GUIDE_GRANTS_SQL, sqlStatements } from '../helpers/ledgerRoles.js';
import { BIN, childEnv, spawnJsonReady, type NodeProc } from '../helpers/nodeProcess.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { writeSharedGenesis } from '../p2p/helpers/processes.js';

const PROVIDER_SERVICE = 'role-bot-upper';
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

let server: TestPostgres;
let dir: string;
let params: ChainParams;
let ownerUrl: string;
let nodeRoleUrl: string;
const procs: Record<string, NodeProc> = {};
const nodeIds: Record<string, string> = {};
const urlOf = (name: string) => procs[name]!.url;

/** Runs the CLI; resolves with its exit code and output. */
function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: dir, env: childEnv({ HOME: join(dir, 'home') }), timeout: 60_000 }, (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
}

async function query<R extends pg.QueryResultRow>(url: string, text: string, values?: unknown[]): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<R>(text, values)).rows;
  } finally {
    await c.end();
  }
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

function nodeArgs(name: string, extra: string[]): string[] {
  return [BIN, 'start', '--dev', '--data-dir', join(dir, name), '--http-port', '0', '--p2p-host', '127.0.0.1', '--p2p-port', '0', '--no-stratum', '--block-time', '1', '--ledger', nodeRoleUrl, '--refund-window', '4', ...extra];
}

async function startNode(name: string, extra: string[]): Promise<void> {
  procs[name] = await spawnJsonReady(nodeArgs(name, extra), { cwd: dir, env: { HOME: join(dir, 'home') }, timeoutMs: 60_000 });
  nodeIds[name] = readFileSync(join(dir, name, 'node-id'), 'utf8').trim();
}

const p2pOf = (name: string) => (procs[name]!.lines.find((l) => l.msg === 'p2p listening') as { addrs: string[] }).addrs[0]!;

async function envelopes(key: HybridKeyPair, n: number): Promise<EnvelopeOptions[]> {
  const res = await fetch(`${urlOf('a')}/api/v1/account/${encodeAddress(key.address, TESTNET_HRP)}`);
  const acc = (await res.json()) as { pendingNonce: number; publicKeyKnown: boolean };
  return Array.from({ length: n }, (_, i) => ({ key, chainId: params.chainId, nonce: BigInt(acc.pendingNonce + i), includeKey: !acc.publicKeyKnown && i === 0, feeRate: params.minFeeRate }));
}

async function submitMined(tx: BuiltTx): Promise<void> {
  const res = await fetch(`${urlOf('a')}/api/v1/tx`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tx: toHex(tx.bytes) }) });
  expect(res.status).toBeLessThan(300);
  await waitFor(`tx ${tx.id} mined`, async () => ((await (await fetch(`${urlOf('a')}/api/v1/tx/${tx.id}`)).json()) as { status?: string }).status === 'mined');
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-fleet-role-'));
  server = await startPostgres();
  // The guide's roles and database, created as the superuser.
  ({ ownerUrl, nodeUrl: nodeRoleUrl } = await createGuideRoles(server));
  params = writeSharedGenesis([join(dir, 'a'), join(dir, 'b'), join(dir, 'c')], { targetSpacing: 1, genesisBits: DEVNET_POW_LIMIT_BITS, powLimitBits: DEVNET_POW_LIMIT_BITS });
}, 60_000);

afterAll(async () => {
  for (const p of Object.values(procs)) p.child.kill('SIGKILL');
  await Promise.all(Object.values(procs).map((p) => p.exited));
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a fleet under the guide\'s least-privilege database roles', () => {
  test('the guide lists exactly the grants a node checks for', () => {
    expect(GUIDE_GRANTS_SQL).toBeDefined();
    expect(sqlStatements(GUIDE_GRANTS_SQL!).map((s) => `${s};`)).toEqual(runtimeGrantStatements('native_node'));
  });

  test('ledger migrate as the owner, then nodes under the runtime role: paid calls, refunds by the holder, heartbeats, the payee nonce log and the inbox', async () => {
    const migrated = await cli(['ledger', 'migrate', '--ledger', ownerUrl, '--grant', 'native_node']);
    expect(migrated).toMatchObject({ code: 0 });
    expect(migrated.stdout).toContain('migrated from version 0 to 6');
    expect(migrated.stdout).toContain('GRANT SELECT, INSERT, UPDATE, DELETE ON fleet_nodes, payee_txs, inbox_jobs TO native_node;');
    // The runtime role has no DDL.
    await expect(query(nodeRoleUrl, 'CREATE TABLE intruder (x int)')).rejects.toMatchObject({ code: '42501' });

    // b first: it holds the signer lease; a mines and sells without it.
    await startNode('b', ['--no-mine']);
    await startNode('a', ['--mine', '--mine-threads', '1', '--bootstrap', p2pOf('b')]);
    const fleet = await waitFor('both heartbeats and the holder', async () => {
      const v = await readFleetStatus(ownerUrl);
      return v.live === 2 && v.leaseHolder === nodeIds.b && v;
    });
    expect(fleet.nodes.map((n) => n.nodeId).sort()).toEqual([nodeIds.a, nodeIds.b].sort());

    // A paid call at a (no lease): settled.
    const dev = getDevKeyPair();
    const payer = createAgentClient({ nodeUrl: urlOf('a'), key: dev, requestTimeoutMs: 10_000, pendingPayments: createMemoryPaymentStore() });
    const q = await payer.quote('native-world-clock', 'UTC');
    const paid = await payer.settle(q, await payer.pay(q), { timeoutMs: 30_000, waitSeconds: 5 });
    expect(paid.result).toBeDefined();

    // A payment for a service that does not exist, settled at a: refused; a records the refund owed, b (the holder) sends it.
    const bad = { ...q, serviceId: 'native-no-such-service' };
    const badTx = await payer.pay(bad);
    const refused = await payer.settle(bad, badTx, { timeoutMs: 30_000, waitSeconds: 5 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isAgentClientError(refused)).toBe(true);
    const refunded = await waitFor('the refund mined', async () => {
      const rows = await query<{ status: string; refund: string | null }>(ownerUrl, `SELECT status, doc->>'refundTxId' AS refund FROM payments WHERE id = $1`, [badTx]);
      return rows[0]?.status === 'refunded' && rows[0];
    });
    const refundSlot = await query<{ signed_by: string; tx_id: string }>(ownerUrl, `SELECT signed_by, tx_id FROM payee_txs WHERE purpose = $1`, [`refund:${badTx.toLowerCase()}`]);
    expect(refundSlot).toEqual([{ signed_by: nodeIds.b, tx_id: refunded.refund }]);

    // The inbox: a provider agent polls b; the call is paid and settled at a; its payout is sent by b.
    const provider = testKey('fleet-role-provider');
    const providerAddress = encodeAddress(provider.address, TESTNET_HRP);
    const [f] = await envelopes(dev, 1);
    await submitMined(createTransferTx({ ...f!, to: provider.address, amount: COIN }));
    const [e0, e1] = await envelopes(provider, 2);
    await submitMined(createAgentTx(e0!, { name: 'role-bot', description: 'uppercases text', capabilities: ['text'], payout: provider.address, contact: '' }));
    await submitMined(createServiceTx(e1!, { id: PROVIDER_SERVICE, name: 'Upper', description: 'uppercases text', category: 'utility', price: 1_000_000n, tags: ['text'], requestFormat: '', requestRequired: true, inputIsJson: false, inputSchema: JSON.stringify({ type: 'string', maxLength: 64 }), timeoutMs: 8_000 }));
    const [m0] = await envelopes(dev, 1);
    await submitMined(createModerationTx(m0!, { action: 'approve', serviceId: PROVIDER_SERVICE, reason: 'role test' }));
    const base = urlOf('b');
    const seller = (await fetch(`${base}/api/x402/inbox`)).headers.get('x-native-node') ?? '';
    const signedFetch = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
      const text = body === undefined ? '' : JSON.stringify(body);
      const headers = { ...signInboxRequest(provider, { address: providerAddress, nodeId: seller, method, path, body: new TextEncoder().encode(text) }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
      const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : text });
      return { status: res.status, json: (await res.json().catch(() => null)) as { jobs?: { jobId: string; request: string | null }[] } | null };
    };
    let answered = 0;
    let stop = false;
    const worker = (async () => {
      while (!stop) {
        const { status, json } = await signedFetch('GET', `/api/x402/inbox?wait=2&service=${PROVIDER_SERVICE}`);
        if (status !== 200) await sleep(300);
        for (const job of json?.jobs ?? []) {
          const r = await signedFetch('POST', `/api/x402/inbox/${job.jobId}`, { result: (job.request ?? '').toUpperCase() });
          if (r.status === 200) answered++;
        }
      }
    })();
    try {
      // Quoted once the registry has it and its agent polls (the fleet's inbox: a poll at b counts at a).
      const pq = await waitFor('the provider service quoted', () => payer.quote(PROVIDER_SERVICE, 'hello fleet'));
      const providerTx = await payer.pay(pq);
      const served = await payer.settle(pq, providerTx, { timeoutMs: 30_000, waitSeconds: 5 });
      expect(served.result).toBe('HELLO FLEET');
      expect(answered).toBe(1);
      const payout = await waitFor('the payout sent by the holder', async () => {
        const rows = await query<{ signed_by: string }>(ownerUrl, `SELECT signed_by FROM payee_txs WHERE purpose = $1`, [`payout:${providerTx.toLowerCase()}`]);
        return rows[0];
      });
      expect(payout.signed_by).toBe(nodeIds.b);
    } finally {
      stop = true;
      await worker.catch(() => undefined);
    }
    // Nothing in either node's log says a privilege was missing.
    for (const p of Object.values(procs)) expect(p.lines.filter((l) => /permission denied/.test(JSON.stringify(l)))).toEqual([]);
  }, 180_000);

  test('a node under the role without one grant does not start: ledger_privilege_missing names it', async () => {
    await query(ownerUrl, 'REVOKE DELETE ON fleet_nodes FROM native_node');
    try {
      const child = spawn(process.execPath, nodeArgs('c', ['--no-mine']), { cwd: dir, env: childEnv({ HOME: join(dir, 'home') }), stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((r) => child.once('exit', r));
      expect(code).toBe(2);
      expect(stderr).toMatch(/^error ledger_privilege_missing: the ledger database's role "native_node" lacks DELETE on fleet_nodes, which a running node needs; .*GRANT DELETE ON fleet_nodes TO native_node;/m);
    } finally {
      await query(ownerUrl, 'GRANT DELETE ON fleet_nodes TO native_node');
    }
  }, 60_000);

  test('the runtime role on a database not migrated yet: ledger_migration_required, and the owner\'s first start migrates', async () => {
    await query(server.url, 'CREATE DATABASE fresh_ledger OWNER native_owner');
    const fresh = (role: string) => `postgres://${role}@127.0.0.1:${server.port}/fresh_ledger`;
    await expect(PgLedger.open(fresh('native_node'))).rejects.toMatchObject({ code: 'ledger_migration_required', message: expect.stringContaining('native-node ledger migrate') });
    await (await PgLedger.open(fresh('native_owner'))).close();
    // Migrated now, but nothing granted to the runtime role yet.
    await expect(PgLedger.open(fresh('native_node'))).rejects.toMatchObject({ code: 'ledger_privilege_missing', payload: { missing: expect.arrayContaining(['SELECT on ledger_schema', 'DELETE on payee_txs']) } });
  }, 30_000);
});
