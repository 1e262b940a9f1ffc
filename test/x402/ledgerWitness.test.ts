/**
 * The ledger's witness (x402/ledger/witness.ts) on both ledgers: LevelDB compares its write count, a
 * fleet's PostgreSQL ledger the last record each node wrote. A LevelDB ledger's default witness
 * outside its data directory (the user's state directory) finds a restore of the whole directory;
 * missing while the ledger kept one, it makes the ledger unproven: a gap from its mark holding
 * every block timed before the start; a state directory that cannot be written is said, not fatal. A PostgreSQL ledger restored from a
 * snapshot (a database copied as a template, as pg_dump/pg_restore would leave it) is found by the
 * node whose last write it lost, the gap is recorded once in the shared ledger for every node,
 * and a node that finds it again adds nothing.
 */
import { describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { LevelLedger, openLedger, type SettlementLedger } from '../../x402/ledger/open.js';
import { GAPS_MARK, recordLedgerRestore, type LedgerGap } from '../../x402/native/unhonored.js';
import { defaultOutsideWitness, readWitness, witnessLedgerWrites } from '../../x402/ledger/witness.js';
import { OUTSIDE_WITNESS_MARK } from '../../x402/ledger/restore.js';
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

describe('restores in any order (LevelDB)', () => {
  test('an older copy restored and run, then a newer copy restored: the newer one is still behind the witness', async () => {
    const { cp, rm } = await import('node:fs/promises');
    const dir = await tmpDir();
    const location = join(dir, 'ledger');
    const witnessPath = join(dir, 'ledger-witness.json');
    const snapshot = async (name: string) => cp(location, join(dir, name), { recursive: true });
    const restore = async (name: string) => {
      await rm(location, { recursive: true });
      await cp(join(dir, name), location, { recursive: true });
    };
    let { ledger } = await openWitnessed(location, witnessPath, 'a');
    await ledger.claim(rec('01'.repeat(32)));
    await ledger.close();
    await snapshot('older');
    ({ ledger } = await openWitnessed(location, witnessPath, 'a'));
    await ledger.settle('01'.repeat(32), { ok: 1 }, {});
    await ledger.claim(rec('02'.repeat(32)));
    await ledger.close();
    await snapshot('newer');
    ({ ledger } = await openWitnessed(location, witnessPath, 'a'));
    await ledger.settle('02'.repeat(32), { ok: 2 }, {});
    await ledger.close();
    await restore('older');
    let gap: LedgerGap | undefined;
    ({ ledger, gap } = await openWitnessed(location, witnessPath, 'a'));
    expect(gap).toMatchObject({ cause: 'ledger_restored', claimed: ['01'.repeat(32)] });
    await ledger.claim(rec('03'.repeat(32))); // the restored node runs on
    await ledger.close();
    await restore('newer');
    ({ ledger, gap } = await openWitnessed(location, witnessPath, 'a'));
    expect(gap).toMatchObject({ cause: 'ledger_restored', claimed: ['02'.repeat(32)] });
    await ledger.close();
  });
});

describe('the witness outside the data directory (LevelDB)', () => {
  /** Opens the ledger of data directory `data` as a node does, with the default outside witness under `state`. */
  async function openAt(data: string, state: string, tip = 10) {
    const saved = process.env.XDG_STATE_HOME;
    process.env.XDG_STATE_HOME = state;
    try {
      const ledger = await openLedger(join(data, 'ledger'));
      const found = await recordLedgerRestore(ledger, { inside: join(data, 'ledger-witness.json') }, Date.now(), { tip });
      found.witness.tip = () => tip;
      return { ledger, found };
    } finally {
      process.env.XDG_STATE_HOME = saved;
    }
  }

  test('a whole data directory restored is found behind it; missing, the ledger is unproven; unwritable, it is said', async () => {
    const { cp, rm, writeFile } = await import('node:fs/promises');
    const dir = await tmpDir();
    const [data, state] = [join(dir, 'data'), join(dir, 'state')];
    let { ledger, found } = await openAt(data, state);
    const outside = defaultOutsideWitness(ledger.sellerId, { XDG_STATE_HOME: state });
    expect(found.files.paths).toEqual([join(data, 'ledger-witness.json'), outside]);
    expect(found.gap).toBeUndefined();
    expect(await ledger.getMark(OUTSIDE_WITNESS_MARK)).toBeDefined();
    await ledger.claim(rec('01'.repeat(32)));
    await ledger.close();
    // The snapshot of the whole data directory (its own witness with it), then a call served.
    await cp(data, join(dir, 'snapshot'), { recursive: true });
    ({ ledger, found } = await openAt(data, state));
    await ledger.settle('01'.repeat(32), { ok: 1 }, {});
    await ledger.close();
    await rm(data, { recursive: true });
    await cp(join(dir, 'snapshot'), data, { recursive: true });
    ({ ledger, found } = await openAt(data, state, 12));
    expect(found.gap).toMatchObject({ cause: 'ledger_restored', to: 10, claimed: ['01'.repeat(32)] });
    expect(found.gap?.witnessMissing).toBeUndefined();
    await ledger.close();

    // The same directory on a machine without its outside witness: unproven, a gap from the mark to the tip and back in time.
    await rm(data, { recursive: true });
    await cp(join(dir, 'snapshot'), data, { recursive: true });
    const before = Date.now();
    ({ ledger, found } = await openAt(data, join(dir, 'other-machine'), 14));
    expect(found.gap).toMatchObject({ cause: 'ledger_restored', to: 14, claimed: ['01'.repeat(32)], witnessMissing: defaultOutsideWitness(ledger.sellerId, { XDG_STATE_HOME: join(dir, 'other-machine') }) });
    expect(found.gap!.before).toBeGreaterThanOrEqual(before);
    await ledger.close();
    // Found once: its witness is written now.
    ({ ledger, found } = await openAt(data, join(dir, 'other-machine'), 14));
    expect(found.gap).toBeUndefined();
    expect(await ledger.getMark<LedgerGap[]>(GAPS_MARK)).toHaveLength(1);
    await ledger.close();

    // A new ledger finds no outside witness and kept none: nothing to say. A state directory that cannot be written is said, and the data directory's witness kept.
    await writeFile(join(dir, 'a-file'), '');
    ({ ledger, found } = await openAt(join(dir, 'fresh'), join(dir, 'a-file')));
    expect(found.gap).toBeUndefined();
    expect(found.files).toMatchObject({ paths: [join(dir, 'fresh', 'ledger-witness.json')], unusable: { path: expect.stringContaining(join(dir, 'a-file')) } });
    expect(await ledger.getMark(OUTSIDE_WITNESS_MARK)).toBeUndefined();
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
