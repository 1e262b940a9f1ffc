/**
 * The provider inbox's two implementations for one shared test suite (`describe.each(inboxBackends(…))`):
 * the LevelDB inbox in a temporary directory, and the PostgreSQL inbox on a fresh database of the
 * file's test server (usePostgres), with its own ledger pool as a node has. A "place" is where an
 * inbox's state lives, so a test can reopen it as a node restart does (`stop`) or after a crash
 * (`crash`: nothing written on the way out). Each place has its own node id (`inbox.nodeId`, the
 * ledger's seller id for PostgreSQL), which inbox signatures name.
 */
import { Level } from 'level';
import { sha256, toHex } from '../../consensus/hash.js';
import type { SignatureVerifier } from '../../chain/types.js';
import type { Inbox, InboxKeys, InboxOptions } from '../../x402/providers/inbox.js';
import { ProviderInbox } from '../../x402/providers/levelInbox.js';
import { PgInbox, type PgInboxOptions } from '../../x402/providers/pgInbox.js';
import { PgLedger } from '../../x402/ledger/pgLedger.js';
import type { UsedPostgres } from './usePostgres.js';
import { tmpDir } from './tmp.js';

/** An opened inbox (started) and how it ends. */
export interface OpenInbox {
  readonly inbox: Inbox;
  /** A clean stop (`inbox.stop()`), then its store closed. */
  stop(): Promise<void>;
  /** The process dies: the store closed without the inbox's stop. */
  crash(): Promise<void>;
}

/** What an inbox is opened with. */
export interface InboxDeps {
  readonly verifier: SignatureVerifier;
  readonly keys: InboxKeys;
  readonly hrp: string;
  readonly opts?: Partial<InboxOptions & PgInboxOptions>;
}

/** The node id of a LevelDB place: what its ledger's seller id would be (16 hex, one per place). */
function nodeIdOfPlace(place: string): string {
  return toHex(sha256(new TextEncoder().encode(place))).slice(0, 16);
}

/** One implementation: a fresh place, and an inbox opened on a place. */
export interface InboxBackend {
  readonly name: string;
  place(): Promise<string>;
  open(place: string, deps: InboxDeps): Promise<OpenInbox>;
}

let databases = 0;

/** Stores still open (closed by `closeOpenInboxes`): a test that fails midway must not leave a ledger polling a stopped server into the next test file of its worker. */
const openStores = new Set<() => Promise<void>>();

/** Closes what a failed test left open (call it in afterEach or afterAll, before the server stops). */
export async function closeOpenInboxes(): Promise<void> {
  for (const close of [...openStores]) await close().catch(() => undefined);
  openStores.clear();
}

/** Registers `o`'s store until it is stopped or crashed. */
function tracked(o: OpenInbox, close: () => Promise<void>): OpenInbox {
  openStores.add(close);
  const done = <T>(p: Promise<T>) => p.finally(() => openStores.delete(close));
  return { inbox: o.inbox, stop: () => done(o.stop()), crash: () => done(o.crash()) };
}

/** The LevelDB and the PostgreSQL backends (the latter on `postgres`'s server, a database per place). */
export function inboxBackends(postgres: UsedPostgres): readonly [string, InboxBackend][] {
  const level: InboxBackend = {
    name: 'leveldb',
    place: () => tmpDir('native-inbox-'),
    async open(dir, d) {
      const db = new Level<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
      await db.open();
      const inbox = new ProviderInbox(db, d.verifier, d.keys, d.hrp, { ...d.opts, nodeId: nodeIdOfPlace(dir) });
      await inbox.start();
      const o: OpenInbox = {
        inbox,
        async stop() {
          await inbox.stop();
          await db.close();
        },
        crash: () => db.close(),
      };
      return tracked(o, () => db.close());
    },
  };
  const postgresBackend: InboxBackend = {
    name: 'postgres',
    place: () => postgres.server.createDatabase(`inbox${process.pid}_${++databases}`),
    async open(url, d) {
      const ledger = await PgLedger.open(url, { nodeId: 'n-test' });
      const inbox = new PgInbox({ query: (t, v) => ledger.query(t, v), url, nodeId: 'n-test', sellerId: ledger.sellerId, verifier: d.verifier, keys: d.keys, hrp: d.hrp }, d.opts);
      await inbox.start();
      const crash = async () => {
        await inbox.close();
        await ledger.close();
      };
      const o: OpenInbox = {
        inbox,
        async stop() {
          await inbox.stop();
          await ledger.close();
        },
        crash,
      };
      return tracked(o, crash);
    },
  };
  return [
    ['leveldb', level],
    ['postgres', postgresBackend],
  ];
}
