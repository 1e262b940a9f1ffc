/**
 * Opens the stores of the provider side: the one place that chooses an engine for the inbox and
 * for the payout records. A node on a LevelDB ledger keeps both in its own providers database; a
 * fleet node on a PostgreSQL ledger keeps them in the ledger's database, shared by the fleet (an
 * agent polls any one node; any node owes a payout, the signer lease holder sends it).
 */
import type { Level } from 'level';
import type { SignatureVerifier } from '../../chain/types.js';
import type { SettlementLedger } from '../ledger/ledger.js';
import type { PgLedger } from '../ledger/pgLedger.js';
import type { Inbox, InboxKeys, InboxOptions } from './inbox.js';
import { ProviderInbox } from './levelInbox.js';
import { levelPayoutStore } from './levelPayoutStore.js';
import type { PayoutStore } from './payoutStore.js';
import { PgInbox, type InboxQuery } from './pgInbox.js';
import { pgPayoutStore } from './pgPayoutStore.js';

/** Where the provider side's state lives. */
export interface ProvidersPlace {
  /** The node's providers database (`<data-dir>/providers`). */
  readonly db: Level<string, string>;
  /** The settlement ledger: on PostgreSQL, the fleet's stores are in its database. */
  readonly ledger: SettlementLedger;
}

/** What the inbox authenticates agents with. */
export interface InboxAuthModules {
  readonly verifier: SignatureVerifier;
  readonly keys: InboxKeys;
  readonly hrp: string;
}

/** Statements on a PostgreSQL ledger's database (PgLedger.query). */
const queryOf =
  (ledger: SettlementLedger): InboxQuery =>
  (text, values) =>
    (ledger as PgLedger).query(text, values);

/**
 * The inbox: on a PostgreSQL ledger with a fleet node id, the fleet's (PgInbox; `location` is the
 * ledger's URL, for its own LISTEN connection); otherwise the node's LevelDB inbox. Either way
 * signatures name the ledger's seller id.
 */
export function openInbox(at: ProvidersPlace & { readonly location: string; readonly nodeId?: string }, auth: InboxAuthModules, opts: Partial<InboxOptions> = {}): Inbox {
  const { ledger, nodeId } = at;
  if (ledger.kind === 'postgres' && nodeId) return new PgInbox({ query: queryOf(ledger), url: at.location, nodeId, sellerId: ledger.sellerId, ...auth }, opts);
  return new ProviderInbox(at.db, auth.verifier, auth.keys, auth.hrp, { ...opts, nodeId: ledger.sellerId });
}

/** The payout records: a fleet's in its PostgreSQL ledger, a single node's in its providers database. */
export function openPayoutStore(at: ProvidersPlace): PayoutStore {
  return at.ledger.kind === 'postgres' ? pgPayoutStore(queryOf(at.ledger)) : levelPayoutStore(at.db);
}
