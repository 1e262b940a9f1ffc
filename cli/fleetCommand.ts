/**
 * `native-node fleet status`: the nodes of a fleet sharing one PostgreSQL ledger, read
 * from the database itself — its heartbeat table (x402/fleet/fleet.ts), the signer lease's advisory
 * lock and the ledger's size — so it answers whether or not any node is up. It reads only: no
 * migration, no write.
 *
 *   native-node fleet status --ledger postgres://user:pass@host:5432/db [--json]
 *
 * The ledger is `--ledger`, else `NATIVE_LEDGER`, else the config file's `ledger`.
 * Errors: `fleet_ledger_required` (no PostgreSQL ledger named), `invalid_ledger_url`,
 * `ledger_unavailable` (the database cannot be reached or refuses the login), `fleet_no_ledger`
 * (no node has ever opened this database), `fleet_no_heartbeats` (its nodes predate the table).
 */
import { NodeError } from '../consensus/errors.js';
import { CliErrorCode, context, parse, type CliEnv, type Out } from './cliKit.js';
import { FLEET_BEAT_MS, FLEET_GONE_MS, readFleet, readLedgerSize, type FleetView } from '../x402/fleet/fleet.js';

/** Error codes of the fleet command. */
export const FleetCommandErrorCode = {
  LEDGER_REQUIRED: 'fleet_ledger_required',
  INVALID_URL: 'invalid_ledger_url',
  NO_LEDGER: 'fleet_no_ledger',
  NO_HEARTBEATS: 'fleet_no_heartbeats',
} as const;

/** One option of the fleet command: what it parses and what its help says. */
export interface FleetOption {
  readonly flag: string;
  readonly value?: string;
  readonly description: string;
}

/** The options of `fleet status` (the parser and the help both read this table). */
export const FLEET_OPTIONS: readonly FleetOption[] = [
  { flag: 'ledger', value: 'postgres://…', description: 'the fleet\'s ledger (else NATIVE_LEDGER, else the config file\'s "ledger")' },
  { flag: 'json', description: 'the view as one JSON object' },
];

const mb = (n: number) => (n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${(n / 1024).toFixed(0)} kB`);
const short = (h: string | null) => (h ? `${h.slice(0, 16)}…` : '-');

/** The human form of the view. */
export function fleetText(v: FleetView & { sellerId: string | null; schemaVersion: number }): string {
  const lines = [
    `fleet      ${v.live} node(s) live${v.bestHeight !== null ? `, best tip ${v.bestHeight} ${short(v.bestTip)}` : ''} (heartbeat every ${v.heartbeatSeconds} s, gone after ${v.goneAfterSeconds} s)`,
    `seller     ${v.sellerId ?? '-'} (ledger schema ${v.schemaVersion})`,
    `lease      ${v.leaseHolder ?? 'nobody holds the signer lease'}${v.leaseHolder ? ` holds the signer lease (from the ${v.leaseSource === 'lock' ? 'advisory lock' : 'heartbeats'})` : ''}`,
  ];
  if (v.ledger) {
    const t = v.ledger.tables;
    lines.push(`ledger     ${t.payments?.rows ?? 0} payment(s), ${mb(v.ledger.bytes)} in its tables (${Object.entries(t).map(([k, s]) => `${k} ${s.rows} rows ${mb(s.bytes)}`).join(', ')}); database ${mb(v.ledger.databaseBytes)}`);
  }
  if (v.nodes.length) {
    const rows = v.nodes.map((n) => [n.nodeId, n.url ?? '-', n.version, String(n.height), String(n.lag), n.leaseHolder ? 'holder' : '', `${n.ageSeconds} s ago`]);
    const head = ['node', 'url', 'version', 'height', 'lag', 'lease', 'seen'];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    const fmt = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
    lines.push('', fmt(head), ...rows.map(fmt));
    const behind = v.nodes.filter((n) => n.lag > v.farBehindBlocks);
    if (behind.length) lines.push(`behind     ${behind.map((n) => n.nodeId).join(', ')}: more than ${v.farBehindBlocks} blocks behind, not selling (503 node_syncing)`);
  }
  for (const g of v.gone) lines.push(`gone       ${g.nodeId} ${g.url ?? ''} at height ${g.height}, ${g.reason === 'stopped' ? 'stopped' : 'silent'} since ${g.seenAt} (${g.ageSeconds} s ago)`);
  return lines.join('\n');
}

/** Reads the fleet from the database at `url` (read-only; see module comment). */
export async function readFleetStatus(url: string): Promise<FleetView & { sellerId: string | null; schemaVersion: number }> {
  try {
    new URL(url);
  } catch {
    throw new NodeError(FleetCommandErrorCode.INVALID_URL, `the ledger URL is not a URL: ${url.replace(/\/\/[^@/]*@/, '//…@')}`);
  }
  const [{ default: pg }, { SIGNER_LEASE_KEY }, { LedgerErrorCode }] = await Promise.all([import('pg'), import('../x402/fleet/signerLease.js'), import('../x402/ledger/open.js')]);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000, query_timeout: 15_000, application_name: 'native-node fleet status' });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (e) {
    throw new NodeError(LedgerErrorCode.UNAVAILABLE, `the ledger database cannot be reached: ${(e as Error).message}`);
  }
  try {
    const q = <R extends Record<string, unknown>>(text: string, values?: unknown[]) => client.query<R>(text, values);
    const present = await q<{ schema: string | null; fleet: string | null }>(`SELECT to_regclass('ledger_schema')::text AS schema, to_regclass('fleet_nodes')::text AS fleet`);
    if (!present.rows[0]!.schema) throw new NodeError(FleetCommandErrorCode.NO_LEDGER, 'this database holds no native-node ledger: no node has started with --ledger pointing at it');
    const version = Number((await q<{ v: number | null }>('SELECT max(version) AS v FROM ledger_schema')).rows[0]!.v ?? 0);
    if (!present.rows[0]!.fleet) throw new NodeError(FleetCommandErrorCode.NO_HEARTBEATS, `the ledger's schema is version ${version}: its nodes predate the fleet's heartbeat table; upgrade them`);
    const seller = await q<{ s: string | null }>(`SELECT value->>'sellerId' AS s FROM ledger_marks WHERE name = 'seller'`);
    const size = await readLedgerSize(q);
    const { FAR_BEHIND_BLOCKS } = await import('../p2p/types.js');
    const view = await readFleet(q, { leaseKey: SIGNER_LEASE_KEY, goneMs: FLEET_GONE_MS, beatMs: FLEET_BEAT_MS, farBehindBlocks: FAR_BEHIND_BLOCKS, size });
    return { ...view, sellerId: seller.rows[0]?.s ?? null, schemaVersion: version };
  } catch (e) {
    if (e instanceof NodeError) throw e;
    const { isUnavailable } = await import('../x402/ledger/pgLedger.js');
    if (isUnavailable(e)) throw new NodeError(LedgerErrorCode.UNAVAILABLE, `the ledger database cannot be reached: ${(e as Error).message}`);
    throw e;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** `native-node fleet <sub> …` */
export async function runFleetCommand(args: string[], out: Out, cenv: CliEnv): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'status') throw new NodeError(CliErrorCode.USAGE, `unknown fleet command ${sub ?? '(none)'}; try: fleet status --ledger postgres://…`);
  // The table's options (--json is common to every command); --ledger is the node's own option, read into the config like `start`'s.
  const extra = Object.fromEntries(FLEET_OPTIONS.filter((o) => o.flag !== 'json').map((o) => [o.flag, { type: o.value ? ('string' as const) : ('boolean' as const) }]));
  const { values } = parse(rest, extra, 0);
  const ctx = context(values, out, cenv);
  const url = ctx.config.ledger;
  if (!url || !/^postgres(ql)?:\/\//i.test(url)) {
    throw new NodeError(FleetCommandErrorCode.LEDGER_REQUIRED, url ? `the ledger ${url} is a LevelDB directory: a fleet shares a PostgreSQL ledger (--ledger postgres://…)` : 'name the fleet\'s ledger: --ledger postgres://user:pass@host:5432/db (or NATIVE_LEDGER, or "ledger" in the config file)');
  }
  const view = await readFleetStatus(url);
  out.print(fleetText(view), view);
  return 0;
}
