/**
 * The paid side of the node, wired: the service registry, the settlement ledger, the payee key,
 * refunds, native settlement and the `/api/x402` routes.
 *
 *   registry + price source  (what is sold, at which USD price)
 *   ledger                   (one record per payment: LevelDB in `<dataDir>/ledger`, or PostgreSQL
 *                             with --ledger postgres://…, shared by a fleet; unreachable, the
 *                             paid calls answer 503 ledger_unavailable)
 *   payee key                (receives payments, signs refunds)
 *     → refunds              (needs chain, mempool, ledger, payee)
 *     → payment watcher      (needs chain, ledger, registry, the payee and its refunds: refunds
 *                             every payment the node will not honour; x402/native/unhonored.ts)
 *     → native settlement    (needs chain, mempool, ledger, refunds, payee, the services' context)
 *     → USDC settlement      (needs ledger, facilitator, the services' context), when configured
 *     → paid-call core       (needs registry, both settlements, prices, sync state)
 *     → routes, discovery    (adapters of the core: HTTP, MCP)
 */
import { providersOptionsOf } from '../services/providers/options.js';
import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import Router from '@koa/router';
import { Level } from 'level';
import { getDevPayeeKeyPair } from '../consensus/devnet.js';
import { NodeError } from '../consensus/errors.js';
import { bytesEqual } from '../consensus/hash.js';
import { decodeTx, TxType } from '../consensus/tx.js';
import { agentInvoke } from '../consensus/txTypes/agentInvoke.js';
import { sellerOfCommitment } from '../x402/core/wire.js';
import type { HybridKeyPair } from '../consensus/keys.js';
import type { ChainParams } from '../consensus/params.js';
import type { Chain } from '../chain/chain.js';
import type { Mempool } from '../chain/mempool.js';
import type { Logger, SignatureVerifier } from '../chain/types.js';
import { createServiceRegistry } from '../services/index.js';
import { chainAddressLabels, createLiveRegistry, type LiveRegistry } from '../services/providerRegistry.js';
import { INBOX_HTTP_STATUS, type Inbox } from '../x402/providers/inbox.js';
import { openInbox, openPayoutStore } from '../x402/providers/open.js';
import { PayoutManager, withProviderPayouts } from '../x402/providers/payouts.js';
import { PayeeNonces } from '../x402/native/payeeNonces.js';
import { openPayeeTxLog } from '../x402/native/open.js';
import { beginPayeeSigning } from '../x402/native/payeeSigner.js';
import { Boards, BOARD_HTTP_STATUS } from './boards.js';
import { createProviderRouter } from './api/providerRoutes.js';
import { createOutboundClient } from '../services/outbound/client.js';
import type { NativeUsdSource, SellerInfo, ServiceContext, ServiceHealthReader } from '../services/types.js';
import { defaultSellerInfo } from '../services/documents/document.js';
import { PAYMENT_HTTP_STATUS } from '../x402/core/errors.js';
import { useSanctionsDir } from '../services/sanctions/screen.js';
import { sanctionsDirOf } from './sanctions.js';
import { isPostgresLocation, LedgerErrorCode, LevelLedger, openLedger, type SettlementLedger } from '../x402/ledger/open.js';
import { WITNESS_FILE, witnessLedgerWrites, type WitnessPlaces } from '../x402/ledger/witness.js';
import { createChainPriceSource } from '../x402/core/pricing.js';
import { RefundManager } from '../x402/native/refunds.js';
import type { PgLedger } from '../x402/ledger/pgLedger.js';
import { SIGNER_LEASE_KEY, SignerLease } from '../x402/fleet/signerLease.js';
import { FLEET_GONE_MS, FleetHeartbeat, fleetNodeId } from '../x402/fleet/fleet.js';
import { FAR_BEHIND_BLOCKS } from '../p2p/types.js';
import { createPaidCallCore, decorateCall, type PaidCallCore, type PaidCallRecord } from '../x402/core/paidCall.js';
import type { PaidCallOutcome } from '../x402/core/outcome.js';
import { NativeSettlement } from '../x402/native/settle.js';
import { createUnhonoredPayments, recordLedgerRestore, type UnhonoredPayments } from '../x402/native/unhonored.js';
import { createFacilitator } from '../x402/usdc/facilitator.js';
import type { NodeConfig } from './config.js';
import { createX402Router } from './api/x402Routes.js';
import { QuoteAnswers } from './api/quoteAnswers.js';
import { createDidRouter, loadRetiredKeys } from './api/didRoutes.js';
import { createOfferSigner, createSellerIdentity, type SellerIdentity } from '../x402/core/offers.js';
import { createReceiptIssuer, type ReceiptIssuer } from '../x402/core/receipts.js';
import { createFastSigner } from '../consensus/fastSign.js';
import { PaymentAuth } from './api/paymentDialects.js';
import { loadChallengeKeys } from '../x402/core/challengeKeys.js';
import { SiwxChallenges } from '../x402/usdc/siwx.js';
import { createDiscovery, type Discovery } from './api/discovery.js';
import { NODE_VERSION } from './version.js';
import { DEFAULT_NODE_URL } from './client.js';
import { openWallet, createPassphraseSource } from './wallet.js';

/** Codes of the node's own policy on submitted payments (`admitTx`). */
export const AdmissionErrorCode = {
  COMMITMENT_MISSING: 'invoke_commitment_missing',
  WRONG_SELLER: 'invoke_wrong_seller',
} as const;

/** Name of the ledger database directory inside the data directory. */
export const LEDGER_DIR = 'ledger';
/** Name of the provider agents' database (inbox jobs and stats, payouts, boards) inside the data directory. */
export const PROVIDERS_DIR = 'providers';

/** Where the node's settlement ledger lives: `--ledger` (a PostgreSQL URL or a directory), else `<dataDir>/ledger`. */
export function ledgerLocationOf(config: Pick<NodeConfig, 'dataDir' | 'ledger'>): string {
  return config.ledger ?? join(config.dataDir, LEDGER_DIR);
}

/**
 * The ledger's witness files (x402/ledger/witness.ts): `<data-dir>/ledger-witness.json`, and one outside the data
 * directory: `--ledger-witness`, else (LevelDB) the default under the user's state directory.
 */
export function witnessPathsOf(config: Pick<NodeConfig, 'dataDir' | 'ledgerWitness'>): WitnessPlaces {
  return { inside: join(config.dataDir, WITNESS_FILE), ...(config.ledgerWitness ? { outside: config.ledgerWitness } : {}) };
}

/**
 * The paid-call core behind a ledger that may go away (PostgreSQL): while it cannot be reached,
 * no quote and no settle (503 `ledger_unavailable`: a payment made now could not be claimed);
 * a settle whose ledger write fails on the way answers the same (its claim, if any, stays in the
 * ledger without a result and is refunded by the recovery; nothing was served).
 */
function withLedgerAvailability(core: PaidCallCore, ledger: SettlementLedger): PaidCallCore {
  const unavailable = (): PaidCallOutcome => ({
    kind: 'rejected',
    status: 503,
    error: { code: LedgerErrorCode.UNAVAILABLE, message: 'the payment ledger cannot be reached: this node sells nothing until it is back; retry shortly or use another node' },
  });
  return decorateCall(core, async (c) => {
    if (!ledger.available()) return unavailable();
    try {
      return await core.call(c);
    } catch (e) {
      if ((e as { code?: unknown }).code === LedgerErrorCode.UNAVAILABLE) return unavailable();
      throw e;
    }
  });
}

/**
 * Refunds in a fleet: only the signer lease's holder signs them, once it re-sent what is stored
 * (its payee nonces open); another node records the refund as owed (refund_pending without a
 * refund tx, the caller told `refund: pending`) and the holder sends it (its sweep of `unsentRefunds`).
 */
class FleetRefunds extends RefundManager {
  constructor(
    private readonly signs: () => boolean,
    private readonly fleetLedger: SettlementLedger,
    ...args: ConstructorParameters<typeof RefundManager>
  ) {
    super(...args);
  }

  override refund(id: string, error: { code: string; message: string }): ReturnType<RefundManager['refund']> {
    return this.signs() ? super.refund(id, error) : this.fleetLedger.refundPending(id, error);
  }
}

/** How often the lease holder looks for refunds other nodes recorded, ms. */
const FLEET_SWEEP_MS = 2000;

/** The running paid side. */
export interface Payments {
  /** The node's services and the approved provider services of the chain. */
  readonly registry: LiveRegistry;
  /** The provider inbox: the node's LevelDB, or on a PostgreSQL ledger the fleet's (an agent polls any one node). */
  readonly inbox: Inbox;
  /** Undefined without a payee key. */
  readonly payouts: PayoutManager | undefined;
  readonly boards: Boards;
  readonly ledger: SettlementLedger;
  readonly nativeUsd: NativeUsdSource;
  /** Undefined when the node has no payee key (mainnet without --payee-wallet). */
  readonly settlement: NativeSettlement | undefined;
  readonly refunds: RefundManager | undefined;
  /** The paid-call core behind the HTTP routes and MCP. */
  readonly paidCalls: PaidCallCore;
  /** The payment watcher (undefined without a payee key). */
  readonly unhonored: UnhonoredPayments | undefined;
  /** The fleet's heartbeat (PostgreSQL ledger only): this node's row, the fleet's view, its lag (x402/fleet/fleet.ts). */
  readonly fleet: FleetHeartbeat | undefined;
  readonly router: Router;
  /** The kept 402 answers of the paid endpoints (node/api/quoteAnswers.ts). */
  readonly quoteAnswers: QuoteAnswers;
  /** HTTP statuses of the payment error codes, for the app's error middleware. */
  readonly errorStatuses: Readonly<Record<string, number>>;
  /** The free discovery surfaces, the MCP endpoint and the health prober (node/api/discovery.ts). */
  readonly discovery: Discovery;
  /** The seller's signing identity (payee key and offer key, x402/core/offers.ts); undefined without a payee key. */
  readonly seller: SellerIdentity | undefined;
  /** Hybrid receipt signatures made and the receipts they covered (batches, x402/core/receipts.ts); undefined without a payee key. */
  readonly receiptStats: ReceiptIssuer['stats'] | undefined;
  /**
   * The node's policy on transactions submitted to it: an agent_invoke paying this node's payee
   * must carry a commitment to this node's ledger (x402/core/wire.ts), or no settle could ever claim
   * it (`invoke_commitment_missing`, `invoke_wrong_seller`, both 422). Throws to refuse.
   */
  admitTx(bytes: Uint8Array): void;
  /** The `payments` field of `GET /api/v1/status`: settled calls and refunds still to be mined. */
  statusExtra(): Record<string, unknown>;
  /** Whether the payee holds less than one refund's fee at the cap (x402/native/payeeFunds.ts): a warning of `/ready` and the status. */
  payeeFloatLow(): boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The payee key: the configured wallet, else the public dev payee key on the devnet. */
async function loadPayee(config: NodeConfig, params: ChainParams, env: Record<string, string | undefined>): Promise<HybridKeyPair | undefined> {
  if (config.payeeWallet) {
    const passphrase = createPassphraseSource({ env: { NATIVE_WALLET_PASSPHRASE: env.NATIVE_PAYEE_PASSPHRASE } });
    return (await openWallet(config.payeeWallet, passphrase, params.hrp)).keyPair;
  }
  return params.network === 'native-devnet' ? getDevPayeeKeyPair() : undefined;
}

/** The documents' seller block from the config, each unset field from the devnet placeholders. */
function sellerOf(config: NodeConfig): SellerInfo {
  return { name: config.sellerName ?? defaultSellerInfo.name, address: config.sellerAddress ?? defaultSellerInfo.address, vatId: config.sellerVatId ?? defaultSellerInfo.vatId };
}

/** Builds the paid side (opens the ledger and the payee wallet); call `start()` after the mempool started. */
export async function createPayments(
  config: NodeConfig,
  params: ChainParams,
  modules: { chain: Chain; mempool: Mempool; verifier: SignatureVerifier; logger: Logger & { child(b: object): Logger }; isSyncing?: () => boolean; observePaidCall?: (r: PaidCallRecord) => void; baseUrl?: () => string },
  env: Record<string, string | undefined> = process.env,
): Promise<Payments> {
  const log = modules.logger;
  const { chain, mempool } = modules;
  const providersDir = join(config.dataDir, PROVIDERS_DIR);
  await mkdir(providersDir, { recursive: true });
  const providersDb = new Level<string, string>(providersDir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  await providersDb.open();
  // On a PostgreSQL ledger the node is named by its data directory (x402/fleet/fleet.ts): its claims, heartbeats and inbox jobs carry the name.
  const nodeId = isPostgresLocation(ledgerLocationOf(config)) ? fleetNodeId(config.dataDir) : undefined;
  const opened = await openLedger(ledgerLocationOf(config), nodeId ? { nodeId } : {});
  // The ledger is compared with this node's witness files before anything reads it: one behind them was restored
  // (x402/ledger/witness.ts). LevelDB mirrors its own write count; a fleet's PostgreSQL ledger, this node's last record write.
  const legacyLedger = !(opened instanceof LevelLedger) || opened.sequence() === undefined;
  const found = await recordLedgerRestore(opened, witnessPathsOf(config), Date.now(), { tip: chain.tip.height });
  found.witness.tip = () => chain.tip.height;
  const unusable = found.files.unusable;
  if (unusable) log.warn({ path: unusable.path, why: unusable.why }, `the ledger witness cannot be kept outside the data directory (${unusable.why}): a restore of the whole data directory would not be found; set --ledger-witness to a file outside it`);
  const ledger = opened instanceof LevelLedger ? opened : witnessLedgerWrites(opened, found.witness, found.seen?.seq ?? 0);
  if (found.gap?.witnessMissing) {
    const g = found.gap;
    log.error(
      { from: g.from, to: g.to, witness: g.witnessMissing, claimed: g.claimed?.length },
      `the ledger's witness outside the data directory (${g.witnessMissing}) is missing, though this ledger kept one: the data directory was moved or restored onto this machine, or the state directory was wiped, and nothing proves the ledger current. The payments it has no end for from height ${g.from} up, in every block timed before this start, are neither served nor refunded until you choose: stop the node and run \`npx native-node ledger gap --refund\` or \`--forget\` (moving a node, copy that file along, or set --ledger-witness, before its first start there)`,
    );
  } else if (found.gap) {
    const g = found.gap;
    const behind = ledger.kind === 'leveldb' ? `${g.witnessSeq! - g.ledgerSeq!} write(s) behind its witness` : `missing this node's last write (${found.seen?.last?.id})`;
    log.warn(
      { from: g.from, to: g.to, ledgerSeq: g.ledgerSeq, witnessSeq: g.witnessSeq, claimed: g.claimed?.length },
      `the payment ledger is ${behind} (restored from a backup?): the payments of heights ${g.from}-${g.to} it has no end for are neither served nor refunded until you choose: stop the node and run \`npx native-node ledger gap --refund\` or \`--forget\``,
    );
  }
  if (ledger.kind === 'postgres') log.info({ sellerId: ledger.sellerId }, 'settlement ledger in PostgreSQL');
  // The inbox authenticates agents by the key they published on chain and their registration;
  // signatures name the ledger's seller id (one per fleet), so one made for another node is refused.
  let live: LiveRegistry | undefined;
  const inboxKeys = { publicKeyOf: async (id: Uint8Array) => (await chain.getAccount(id)).publicKey, isAgent: (id: Uint8Array) => live?.agentOf(Buffer.from(id).toString('hex')) !== undefined };
  const inboxOpts = { maxWaitMs: Math.max(1000, Math.min(25_000, config.httpTimeout - 5_000)) };
  // A fleet's inbox is its ledger's database: jobs queued at one node are taken and answered at any.
  const inbox = openInbox({ db: providersDb, ledger, location: ledgerLocationOf(config), nodeId }, { verifier: modules.verifier, keys: inboxKeys, hrp: params.hrp }, inboxOpts);
  const registry = createLiveRegistry(createServiceRegistry(), chain, inbox, params.hrp, log.child({ module: 'registry' }));
  live = registry;
  const boards = new Boards(providersDb);
  // Lists refreshed by `native-node sanctions update` win over the shipped ones when newer.
  useSanctionsDir(sanctionsDirOf(config));
  const nativeUsd = createChainPriceSource(modules.chain, params, (e) => log.warn({ err: (e as Error).message }, 'NATIVE/USD price refresh failed'));
  const payee = await loadPayee(config, params, env);
  const serviceLog = log.child({ module: 'services' });
  // Every request a service makes outside the node goes through this one client (SSRF checks, limits, per-host concurrency).
  const outbound = createOutboundClient(config.outbound);
  // The prober is built with discovery, after the context it probes with: the services that list
  // others (roster, search) read its answers through this late binding.
  let healthOf: ServiceHealthReader['get'] | undefined;
  const health: ServiceHealthReader = { get: (id) => healthOf?.(id) ?? { status: 'unknown', lastVerifiedAt: 0 } };
  const context: Omit<ServiceContext, 'signal'> = { chain, mempool, params, now: Date.now, log: serviceLog, registry, nativeUsd, verifier: modules.verifier, usage: ledger, outbound, providers: config.providers, seller: sellerOf(config), addressLabels: chainAddressLabels(chain), health };
  // A PostgreSQL ledger may be shared by a fleet: payee transactions are signed by the lease holder only.
  const lease = payee && ledger.kind === 'postgres' ? new SignerLease(ledgerLocationOf(config), { name: nodeId }) : undefined;
  // Every node of a fleet writes its heartbeat and reads the others'; one far behind the fleet's best tip stops selling.
  const fleet =
    ledger.kind === 'postgres' && nodeId
      ? new FleetHeartbeat((text, values) => (ledger as PgLedger).query(text, values), nodeId, () => ({ version: NODE_VERSION, network: params.network, height: chain.tip.height, tip: chain.tip.hashHex, leaseHolder: lease?.isHolder() ?? false }), {
          leaseKey: SIGNER_LEASE_KEY,
          farBehindBlocks: FAR_BEHIND_BLOCKS,
          logger: log.child({ module: 'fleet' }),
          // The witness keeps each heartbeat: a restored database that lost this node's later ones is found at start.
          onBeat: (at) => void found.witness.fleetSeen(at).catch(() => undefined),
        })
      : undefined;
  // One nonce allocator for every payee transaction, refunds and payouts (x402/native/payeeNonces.ts): a nonce is claimed with the signed
  // bytes in the ledger before the transaction leaves; in a fleet only while this node's lease session holds the lease (the fence).
  // Closed until this node is the signer and re-sent what is stored (beginSigning).
  const nonces = payee
    ? new PayeeNonces(openPayeeTxLog({ db: providersDb, ledger }, { nodeId, fence: lease && { leaseKey: SIGNER_LEASE_KEY, sessionName: lease.sessionName() } }), { state: 'closed' })
    : undefined;
  const signs = () => (lease?.isHolder() ?? true) && (nonces?.isOpen() ?? false);
  // In a fleet, claims are refunded as interrupted only when their node is gone (the sweep below), not all at a lease change.
  // Claims a restored ledger holds from before its restore are the operator's to decide (`ledger gap`), not refunded at start.
  const refundOpts = { logger: log.child({ module: 'refunds' }), recoverClaims: !lease, holdsClaim: (id: string): boolean => unhonored?.holdsClaim(id) ?? false, nonces };
  const refunds = payee ? (lease ? new FleetRefunds(signs, ledger, chain, mempool, ledger, payee, params, refundOpts) : new RefundManager(chain, mempool, ledger, payee, params, refundOpts)) : undefined;
  const unhonored =
    payee && refunds
      ? createUnhonoredPayments({ chain, ledger, catalog: registry, payees: [{ address: payee.address, refunds }], params, mempool, legacyLedger }, { windowMs: config.refundWindow * 1000, logger: log.child({ module: 'unhonored' }) })
      : undefined;
  await unhonored?.load();
  // A fleet's ledger gaps are fleet state: found by any node, kept in the shared ledger, honoured by every node
  // (every 2 s a node without the signer lease reads them again, the holder takes in the ones it lacks).
  let gapReload: NodeJS.Timeout | undefined;
  // The payee signs offers and receipts too (one identity for every node holding the payee wallet: a fleet signs alike).
  let usdcPayTo: string | undefined;
  const seller = payee ? createSellerIdentity({ payee, hrp: params.hrp, chainId: params.chainId, sellerId: ledger.sellerId, usdcPayTo: () => usdcPayTo, retired: await loadRetiredKeys(config.retiredKeys, params.hrp) }) : undefined;
  // Receipts are signed per settled call: ML-DSA-87 through liboqs (about 0.6 ms, not @noble's ~13 ms).
  const receipts = seller && createReceiptIssuer(seller, Date.now, await createFastSigner(), log.child({ module: 'receipts' }));
  const settlement = payee && refunds ? new NativeSettlement(chain, mempool, ledger, refunds, payee, params, context, { logger: log.child({ module: 'x402' }), unhonored, confirmations: config.confirmations, receipts }) : undefined;
  if (!payee) log.warn({}, 'no payee key (--payee-wallet): paid calls answer 503 until one is configured');
  // The USDC rail needs both the payee address and a facilitator; with one of them only it stays off.
  // Loaded only then: it brings viem (about 0.3 s of start-up).
  const usdcOn = Boolean(config.usdcPayTo && config.facilitatorUrl);
  // Ambiguous settlements (/settle timed out or failed) are reconciled from Base over the same
  // RPC endpoint as the EVM-reading services (`baseRpcUrl`; `none` turns it off).
  const baseRpcUrl = config.providers.baseRpcUrl === 'none' ? undefined : providersOptionsOf(config.providers).evm.baseRpcUrl;
  const reconciler =
    usdcOn && baseRpcUrl
      ? await (async () => {
          const r = await import('../x402/usdc/reconcile.js');
          // A provider's call found settled on Base after the call owes the provider its payout then, not at the next start.
          return r.createUsdcReconciler(ledger, r.createBaseAuthorizationChain(baseRpcUrl, outbound), { logger: log.child({ module: 'usdc-reconcile' }), onSettled: async (rec) => payouts?.oweSettled(rec), receipts });
        })()
      : undefined;
  const usdcSettlement =
    usdcOn
      ? (await import('../x402/usdc/settle.js')).createUsdcSettlement(ledger, context, {
          reconciler,
          payTo: config.usdcPayTo!,
          sharedPayTo: config.usdcPayToShared,
          facilitator: createFacilitator({ url: config.facilitatorUrl!, authHeader: config.facilitatorAuthHeader, verifyTimeoutMs: config.facilitatorTimeout, settleTimeoutMs: config.facilitatorTimeout }),
          logger: log.child({ module: 'usdc' }),
          receipts,
        })
      : undefined;
  usdcPayTo = usdcSettlement?.payTo;
  if ((config.usdcPayTo === undefined) !== (config.facilitatorUrl === undefined)) log.warn({}, 'the USDC rail needs both --usdc-pay-to and --facilitator-url: it stays off');
  // One paid-call core for every transport: the HTTP routes and MCP are adapters of it.
  const core = createPaidCallCore({
    catalog: registry,
    native: settlement,
    usdc: usdcSettlement,
    params,
    nativeUsd,
    isSyncing: modules.isSyncing,
    behindFleet: fleet && (() => fleet.behind()),
    requestBudgetMs: config.httpTimeout,
    context,
    observe: modules.observePaidCall,
    refundCover: refunds && (() => refunds.cover()),
    offers: seller && createOfferSigner(seller),
  });
  // Provider services are paid to the payee (escrow) on either rail; a delivered call owes the provider its NATIVE share.
  // A fleet shares its payout records in the ledger's database: any node owes, the lease holder sends (x402/providers/pgPayoutStore.ts).
  const payoutStore = openPayoutStore({ db: providersDb, ledger });
  const payouts = payee
    ? new PayoutManager(providersDb, chain, mempool, ledger, payee, params, { payoutAddressOf: (id) => registry.providerService(id)?.agent?.payoutAddress, priceBaseOf: (id) => registry.providerService(id)?.record.price }, { logger: log.child({ module: 'payouts' }), store: payoutStore, nonces })
    : undefined;
  // In a fleet a node that does not sign (no lease, or still re-sending what is stored) records what a call it served owes; the holder sends it (its sweep adopts it).
  const payoutsOwed = payouts && { owe: (...a: Parameters<PayoutManager['owe']>) => (lease && !signs() ? payouts.oweLater(...a) : payouts.owe(...a)) };
  const paidCalls = withLedgerAvailability(payoutsOwed ? withProviderPayouts(core, payoutsOwed, (id) => registry.providerService(id) !== undefined, log) : core, ledger);
  // The signer's roles: refunds, payouts, the payment watcher, USDC recovery and reconciliation. One node runs them: this one, or in a fleet the lease holder.
  let signerQueue: Promise<void> = Promise.resolve();
  let sweep: NodeJS.Timeout | undefined;
  const signerLog = log.child({ module: 'fleet' });
  const beginSigning = async () => {
    // Stored transactions first: a fleet's new signer (a restarted node too) re-sends every payee transaction its
    // predecessors signed (their nonces' slots, then the refund and payout records) and signs nothing new before.
    if (payee && nonces) await beginPayeeSigning({ chain, mempool, payee, nonces, refunds, payouts, logger: signerLog });
    await unhonored?.start();
    if (!lease) await usdcSettlement?.recover();
    await reconciler?.start();
  };
  const endSigning = async () => {
    nonces?.close();
    unhonored?.stop();
    await unhonored?.idle();
    refunds?.stop();
    payouts?.stop();
    await refunds?.idle();
    await payouts?.idle();
    await reconciler?.stop();
  };
  const sweepRefunds = async () => {
    if (!lease?.isHolder() || !refunds) return;
    // Provider jobs of nodes gone: no longer answerable (their claims are refunded below).
    await inbox.expireOrphaned?.(FLEET_GONE_MS);
    // Claims whose node died or restarted mid-call: refunded (native) or failed (USDC) once, as a
    // restarted single node does with its own. A late result of such a claim is refused (ledger_conflict).
    for (const rec of await (ledger as PgLedger).orphanedClaims(FLEET_GONE_MS)) {
      if (!lease.isHolder()) return;
      // A claim a restored ledger holds from before its restore: the operator decides (`ledger gap`).
      if (rec.rail === 'native' && unhonored?.holdsClaim(rec.id)) continue;
      try {
        if (rec.rail === 'native') await refunds.refund(rec.id, { code: 'node_restarted', message: 'the node serving this call stopped; the payment is refunded' });
        else await usdcSettlement?.failInterrupted(rec);
        signerLog.warn({ id: rec.id, rail: rec.rail, serviceId: rec.serviceId }, 'a claim of a node gone from the fleet: ended');
      } catch (e) {
        // Finished by its node in the meantime (ledger_conflict): nothing to do.
        if ((e as { code?: string }).code !== LedgerErrorCode.CONFLICT) throw e;
      }
    }
    // USDC results written ahead of a /settle call whose node is gone: Base decides (the holder's reconciler).
    if (reconciler) for (const rec of await (ledger as PgLedger).orphanedClaims(FLEET_GONE_MS, 200, 'settle_pending')) reconciler.track(rec.id);
    const pending = new Set(refunds.pendingIds());
    for (const rec of await (ledger as PgLedger).unsentRefunds()) {
      if (!lease.isHolder()) return;
      if (!pending.has(rec.id)) await refunds.refund(rec.id, rec.error ?? { code: 'service_failed', message: 'refund' });
    }
    // Payouts other nodes owed since.
    if (lease.isHolder()) await payouts?.adoptOwed();
  };
  if (lease) {
    lease.on('acquired', () => {
      signerLog.info({ sellerId: ledger.sellerId }, 'signer lease acquired: this node signs refunds and payouts and runs the payment watcher');
      signerQueue = signerQueue.then(beginSigning).catch((e) => signerLog.error({ err: (e as Error).message }, 'signer roles failed to start'));
      void fleet?.beat();
    });
    lease.on('lost', () => {
      // At once, not after the queued work: nothing more is signed from here.
      nonces?.close();
      signerLog.warn({}, 'signer lease lost: this node stops signing');
      signerQueue = signerQueue.then(endSigning).catch((e) => signerLog.error({ err: (e as Error).message }, 'signer roles failed to stop'));
      void fleet?.beat();
    });
  }
  // The provider surface comes first: `POST /api/x402/requests` is not a service call.
  const router = new Router();
  router.use(createProviderRouter({ inbox, boards, registry, params, maxWaitMs: Math.max(1000, Math.min(25_000, config.httpTimeout - 5_000)) }).routes());
  // Quotes, documents and MCP name the node's public base URL (node/api/publicUrl.ts), never the request's Host.
  // The Payment dialect's and sign-in's challenge keys come from the ledger: every node sharing it checks the others' challenges.
  const challengeKeys = await loadChallengeKeys(ledger);
  const paymentAuth = new PaymentAuth(challengeKeys.paymentAuth);
  const siwx = new SiwxChallenges(challengeKeys.siwx);
  // The 402s of plain quotes are rendered once and served again while their quote holds (node/api/quoteAnswers.ts).
  const quoteAnswers = new QuoteAnswers(paymentAuth, siwx);
  router.use(createX402Router(paidCalls, paymentAuth, siwx, modules.baseUrl, { answers: quoteAnswers }).routes());
  if (seller) router.use(createDidRouter(seller, modules.baseUrl).routes());
  // Discovery needs the registry, the ledger's totals, the price, the core (payees, MCP) and the services' context (health checks).
  const discovery = createDiscovery(
    { version: NODE_VERSION, defaultNodeUrl: DEFAULT_NODE_URL, facilitatorUrl: config.facilitatorUrl, usdcAuthVerified: usdcSettlement !== undefined, baseUrl: modules.baseUrl, mcpMaxBatch: config.mcpMaxBatch },
    { registry, usage: ledger, nativeUsd, paidCalls, params, context, logger: log.child({ module: 'discovery' }) },
  );
  // What the catalog shows: a provider agent's live state first, else the prober's last check.
  healthOf = (id) => registry.liveHealth(id) ?? discovery.prober.get(id);
  return {
    registry,
    inbox,
    payouts,
    boards,
    ledger,
    nativeUsd,
    settlement,
    refunds,
    paidCalls,
    seller,
    receiptStats: receipts ? receipts.stats : undefined,
    unhonored,
    fleet,
    router,
    quoteAnswers,
    errorStatuses: { ...PAYMENT_HTTP_STATUS, ...INBOX_HTTP_STATUS, ...BOARD_HTTP_STATUS, [AdmissionErrorCode.COMMITMENT_MISSING]: 422, [AdmissionErrorCode.WRONG_SELLER]: 422, [LedgerErrorCode.UNAVAILABLE]: 503, [LedgerErrorCode.CONFLICT]: 409 },
    admitTx(bytes) {
      if (!payee) return;
      let tx;
      try {
        tx = decodeTx(bytes);
      } catch {
        return; // the mempool refuses it with its own code
      }
      if (tx.type !== TxType.agent_invoke) return;
      let p;
      try {
        p = agentInvoke.decodePayload(tx.payload);
      } catch {
        return;
      }
      if (!bytesEqual(p.payTo, payee.address)) return;
      if (!p.requestHash) {
        throw new NodeError(AdmissionErrorCode.COMMITMENT_MISSING, 'this payment to the node\'s payee carries no request commitment (requestHash): no settle could claim it and it would be refunded; build it as the quote\'s extra.commitment describes');
      }
      if (sellerOfCommitment(p.requestHash) !== ledger.sellerId) {
        throw new NodeError(AdmissionErrorCode.WRONG_SELLER, `this payment commits to seller ${sellerOfCommitment(p.requestHash)}, not to this node's ledger (${ledger.sellerId}); broadcast it to the node that quoted it`);
      }
    },
    discovery,
    payeeFloatLow() {
      const f = refunds?.payeeFunds();
      return f !== undefined && f.spendableBase < f.refundFeeMaxBase;
    },
    statusExtra() {
      let settled = 0;
      let settledUsdc = 0;
      for (const def of registry.list()) {
        const v = ledger.volume(def.id);
        settled += v.calls;
        settledUsdc += v.callsUsdc;
      }
      const counts = ledger.counts();
      const stuck = refunds?.stuck() ?? { count: 0, amountBase: 0n };
      const funds = refunds?.payeeFunds();
      return {
        payments: {
          settled,
          settledUsdc,
          refundsPending: refunds?.pendingIds().length ?? 0,
          // Refunds owed that the payee cannot pay: while any, services it could not refund are not quoted (x402/core/paidCall.ts payeeRefusal).
          refundsStuck: stuck.count,
          refundsStuckBase: stuck.amountBase.toString(),
          // What the payee holds against a refund's cost (x402/native/payeeFunds.ts); floatLow: less than one refund's fee at the cap.
          payee: funds ? { balanceBase: funds.balanceBase.toString(), spendableBase: funds.spendableBase.toString(), refundFeeBase: funds.refundFeeBase.toString(), refundFeeMaxBase: funds.refundFeeMaxBase.toString(), floatLow: funds.spendableBase < funds.refundFeeMaxBase } : null,
          sellerId: ledger.sellerId,
          confirmations: config.confirmations,
          // Stretches of chain the ledger never judged (x402/native/unhonored.ts): payments there wait for `native-node ledger gap`.
          ledgerGaps: unhonored?.gapList() ?? [],
          // Served, then lost to a reorganization deeper than --confirmations (x402/native/unhonored.ts): how many, and the latest.
          servedThenLost: unhonored?.servedLostList() ?? { total: 0, recent: [] },
          // Refunded payments (service failures and refusals), refusals alone, and valid payments mined and awaiting their settle.
          refunded: counts.refunded,
          refused: counts.refused,
          awaitingSettle: unhonored?.awaitingCount ?? 0,
          refundWindowSeconds: config.refundWindow,
          payTo: settlement?.payTo ?? null,
          // USDC rail: settled (also counted in settledUsdc), being reconciled from Base, expired unused, failed.
          usdc: { settled: settledUsdc, settlePending: counts.settle_pending, expiredUnsettled: counts.expired_unsettled, failed: counts.failed, reconciling: reconciler !== undefined },
        },
        // The fleet on a PostgreSQL ledger (x402/fleet/fleet.ts): its live nodes, tips and lags, the lease holder, the ledger's size.
        ...(fleet ? { fleet: fleet.status() } : {}),
      };
    },
    async start() {
      await inbox.start();
      await boards.start();
      await registry.start();
      if (lease) {
        const startedAt = Date.now();
        await lease.start();
        await signerQueue;
        // Payouts a node stopping between a settlement and its payout record left out: a new signer owes them at its
        // start (payouts.start), a node that does not sign records them for the holder.
        if (payouts && !lease.isHolder()) {
          void payouts.recordLeftOut(startedAt).catch((e) => signerLog.warn({ err: (e as Error).message }, 'could not look for provider payouts left out (looked again at the next start)'));
        }
        sweep = setInterval(() => void sweepRefunds().catch((e) => signerLog.warn({ err: (e as Error).message }, 'refund sweep failed')), FLEET_SWEEP_MS);
        sweep.unref();
      } else {
        await beginSigning();
      }
      await fleet?.start();
      if (lease && unhonored) {
        gapReload = setInterval(() => void (lease.isHolder() ? unhonored.adoptGaps() : unhonored.load()).catch(() => undefined), 2_000);
        gapReload.unref();
      }
      if (usdcSettlement && !reconciler) log.warn({}, 'no Base RPC URL (--base-rpc-url none): ambiguous USDC settlements (facilitator /settle timed out or failed) cannot be reconciled automatically; their results are withheld');
      discovery.start();
    },
    async stop() {
      await discovery.stop();
      clearInterval(sweep);
      clearInterval(gapReload);
      await fleet?.stop();
      if (lease) {
        await lease.stop();
        await signerQueue;
      } else {
        await endSigning();
      }
      registry.stop();
      await inbox.stop();
      await ledger.close();
      await providersDb.close();
    },
  };
}
