/**
 * The ledger's witness (x402/ledger/witness.ts) on both ledgers: LevelDB compares its write count, a
 * fleet's PostgreSQL ledger the last record each node wrote. A PostgreSQL ledger restored from a
 * snapshot (a database copied as a template, as pg_dump/pg_restore would leave it) is found by the
 * node whose last write it lost, the gap is recorded once in the shared ledger for every node,
 * and a node that finds it again adds nothing.
 */
import { describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { LevelLedger, openLedger, type SettlementLedger } from '../../x402/ledger/open.js';
import { GAPS_MARK, recordLedgerRestore, type LedgerGap } from '../../x402/native/unhonored.js';
import { readWitness, witnessLedgerWrites } from '../../x402/ledger/witness.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { usePostgres } from '../helpers/usePostgres.js';
import { afterAll } from '@jest/globals';

const pgServer = usePostgres();
afterAll(cleanupTmp);

const rec = (id: string) => ({ id, rail: 'native' as const, serviceId: 'native-echo', requestHash: 'ab'.repeat(32), caller: 'tnative1caller', amount: '200000' });

/** Opens `location` as a node does: compared with its witness, then (PostgreSQL) mirrored to it. */
async function openWitnessed(location: string, witnessPath: string, nodeId: string, tip = 10): Promise<{ ledger: SettlementLedger; gap?: LedgerGap }> {
  const opened = await openLedger(location, { nodeId });
  const found = await recordLedgerRestore(opened, [witnessPath]);
  found.witness.tip = () => tip;
  const ledger = opened instanceof LevelLedger ? opened : witnessLedgerWrites(opened, found.witness, found.seen?.seq ?? 0);
  return found.gap ? { ledger, gap: found.gap } : { ledger };
}

describe('a LevelDB ledger', () => {
  test('one write behind its witness is a restored one; the witness follows the ledger after', async () => {
    const dir = await tmpDir();
    const location = join(dir, 'ledger');
    const witnessPath = join(dir, 'ledger-witness.json');
    let { ledger, gap } = await openWitnessed(location, witnessPath, 'a');
    expect(gap).toBeUndefined();
    await ledger.claim(rec('01'.repeat(32)));
    const atBackup = (await readWitness(witnessPath))!.seq;
    await ledger.close();
    const { cp, rm } = await import('node:fs/promises');
    await cp(location, join(dir, 'backup'), { recursive: true });
    ({ ledger } = await openWitnessed(location, witnessPath, 'a'));
    await ledger.settle('01'.repeat(32), { ok: 1 }, {});
    expect((await readWitness(witnessPath))!.seq).toBe(atBackup + 1);
    await ledger.close();
    await rm(location, { recursive: true });
    await cp(join(dir, 'backup'), location, { recursive: true });
    ({ ledger, gap } = await openWitnessed(location, witnessPath, 'a'));
    expect(gap).toMatchObject({ cause: 'ledger_restored', ledgerSeq: atBackup, witnessSeq: atBackup + 1, to: 10, claimed: ['01'.repeat(32)] });
    expect(await ledger.getMark(GAPS_MARK)).toEqual([gap]);
    await ledger.close();
    // Found once: the gap is in the ledger, the witness now follows it.
    ({ ledger, gap } = await openWitnessed(location, witnessPath, 'a'));
    expect(gap).toBeUndefined();
    expect(await ledger.getMark<LedgerGap[]>(GAPS_MARK)).toHaveLength(1);
    await ledger.close();
  });
});

describe('a PostgreSQL ledger shared by two nodes', () => {
  test('restored from a snapshot: found by the node whose last write it lost, recorded once for the fleet', async () => {
    const url = await pgServer.server.createDatabase('witnessed');
    const dir = await tmpDir();
    const witnessA = join(dir, 'a', 'ledger-witness.json');
    const witnessB = join(dir, 'b', 'ledger-witness.json');
    let a = await openWitnessed(url, witnessA, 'a');
    let b = await openWitnessed(url, witnessB, 'b');
    await b.ledger.claim(rec('0b'.repeat(32)));
    await b.ledger.settle('0b'.repeat(32), { ok: 'b' }, {});
    await a.ledger.claim(rec('0a'.repeat(32)));
    await Promise.all([a.ledger.close(), b.ledger.close()]);
    // The operator's snapshot of the database, then node a serves the claimed call.
    await pgServer.server.sql('CREATE DATABASE witnessed_snapshot TEMPLATE witnessed');
    a = await openWitnessed(url, witnessA, 'a');
    expect(a.gap).toBeUndefined();
    await a.ledger.settle('0a'.repeat(32), { ok: 'a' }, {});
    expect((await readWitness(witnessA))!.last).toEqual({ id: '0a'.repeat(32), status: 'settled' });
    await a.ledger.close();
    // Restored: the snapshot holds a's claim but not its result.
    await pgServer.server.sql('DROP DATABASE witnessed');
    await pgServer.server.sql('CREATE DATABASE witnessed TEMPLATE witnessed_snapshot');
    b = await openWitnessed(url, witnessB, 'b');
    expect(b.gap).toBeUndefined(); // b's last write is there as it left it
    a = await openWitnessed(url, witnessA, 'a');
    expect(a.gap).toMatchObject({ cause: 'ledger_restored', claimed: ['0a'.repeat(32)] });
    // Every node reads the one gap from the shared ledger; a's claim is not refunded as "interrupted" by anyone.
    expect(await b.ledger.getMark<LedgerGap[]>(GAPS_MARK)).toEqual([expect.objectContaining({ cause: 'ledger_restored', claimed: ['0a'.repeat(32)] })]);
    expect((await b.ledger.get('0a'.repeat(32)))?.status).toBe('claimed');
    await Promise.all([a.ledger.close(), b.ledger.close()]);
  });
});
