/**
 * Paid calls end to end for the outbound services' tests: a real devnet chain (LevelDB in a temp
 * dir, trivial difficulty), mempool, settlement ledger, refunds and native settlement, the
 * service registry of the catalog, the paid-call core and the `/api/x402` routes on a koa
 * server on 127.0.0.1:0.
 * The services' context carries an outbound client built with the test-only resolver and
 * address policy (only test code constructs it) and the given provider settings.
 *
 * `paidCall` does what an agent does: POST unpaid → 402 quote; sign an `agent_invoke` for the
 * quoted amount, its requestHash the commitment to the quote's seller, the service, the request and
 * a fresh salt (x402/core/wire.ts requestCommitment); mine it; POST again with `payment: {txId, salt}`.
 */
import { join } from 'node:path';
import { openChain, type Chain } from '../../chain/chain.js';
import { createMempool, type Mempool } from '../../chain/mempool.js';
import { silentLogger } from '../../chain/types.js';
import { encodeAddress } from '../../consensus/address.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { fromHex, toHex } from '../../consensus/hash.js';
import { COIN } from '../../consensus/params.js';
import { encodeTx, signTx, txId, TxType, TX_VERSION } from '../../consensus/tx.js';
import { agentInvoke } from '../../consensus/txTypes/agentInvoke.js';
import { createHttpServer, type HttpServer } from '../../node/api/http.js';
import { createX402Router } from '../../node/api/x402Routes.js';
import { createServiceRegistry } from '../../services/index.js';
import { createOutboundClient, type Outbound, type Resolver } from '../../services/outbound/client.js';
import type { ProviderSettings } from '../../services/outbound/types.js';
import type { ServiceContext, ServiceDefinition } from '../../services/types.js';
import { PAYMENT_HTTP_STATUS } from '../../x402/core/errors.js';
import { openLedger, type SettlementLedger } from '../../x402/ledger/open.js';
import { createPaidCallCore, type PaidCallCore } from '../../x402/core/paidCall.js';
import { createReferencePriceSource } from '../../x402/core/pricing.js';
import { RefundManager } from '../../x402/native/refunds.js';
import { NativeSettlement } from '../../x402/native/settle.js';
import { requestCommitment, SALT_BYTES } from '../../x402/core/wire.js';
import { randomBytes } from 'node:crypto';
import { testKey } from '../helpers/keys.js';
import { mineFromPool } from '../helpers/mine.js';
import { tmpDir } from '../helpers/tmp.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { testPolicy } from './outboundFakes.js';

const agent = getDevKeyPair();
const payee = testKey('payee');
const miner = testKey('miner');
const params = createDevnetChainParams({ genesisBits: 0x207fffff, allocations: [{ address: encodeAddress(payee.address, 'tnative'), amount: 10n * COIN }] });

/** A running paid node surface. */
export interface PaidHarness {
  readonly server: HttpServer;
  readonly chain: Chain;
  readonly pool: Mempool;
  readonly ledger: SettlementLedger;
  readonly refunds: RefundManager;
  readonly outbound: Outbound;
  readonly context: Omit<ServiceContext, 'signal'>;
  /** The paid-call core behind the routes (MCP tests call it directly). */
  readonly core: PaidCallCore;
  /** Mutable provider settings (tests switch providers on and off). */
  readonly providers: Record<string, string | number | boolean | undefined>;
  post(path: string, body: unknown): Promise<{ status: number; body: Record<string, any> }>;
  /**
   * Quote, pay (mined), settle; returns the settle answer, the invoke's id and the salt its commitment hides (what settles it again).
   * A JSON value as `request` is sent as such and the payment commits to its `JSON.stringify` (x402/core/paidCall.ts requestTextOf).
   */
  paidCall(serviceId: string, request: string | object | undefined): Promise<{ status: number; body: Record<string, any>; txId: string; salt: string }>;
  /** Mines what the mempool holds (refunds). */
  mine(): Promise<void>;
  agentBalance(): Promise<bigint>;
  close(): Promise<void>;
}

/** Starts the harness with a resolver for the fakes' names and the given providers. */
export async function startPaidHarness(opts: { resolver: Resolver; providers?: ProviderSettings; defs?: readonly ServiceDefinition[] }): Promise<PaidHarness> {
  const dir = await tmpDir('native-web-');
  const verifier = new CountingVerifier();
  // The devnet genesis of these parameters lies ahead of the wall clock: the chain gets a clock well after it.
  const chain = await openChain({ dataDir: join(dir, 'chain'), params, verifier, now: () => params.genesis.time + 1_000_000 });
  const pool = createMempool(chain, verifier, params);
  pool.start();
  const ledger = await openLedger(join(dir, 'ledger'));
  const refunds = new RefundManager(chain, pool, ledger, payee, params, { retryMs: 60_000 });
  await refunds.start();
  const registry = createServiceRegistry(opts.defs);
  const outbound = createOutboundClient({ userAgent: 'native-node/test', timeoutMs: 5000, connectTimeoutMs: 2000 }, { resolver: opts.resolver, addressPolicy: testPolicy });
  const providers: Record<string, string | number | boolean | undefined> = { ...(opts.providers ?? {}) };
  const context: Omit<ServiceContext, 'signal'> = { chain, mempool: pool, params, now: Date.now, log: silentLogger, registry, nativeUsd: createReferencePriceSource(params), usage: ledger, outbound, providers };
  const settlement = new NativeSettlement(chain, pool, ledger, refunds, payee, params, context);
  const core = createPaidCallCore({ catalog: registry, native: settlement, params, nativeUsd: context.nativeUsd, requestBudgetMs: 60_000, context });
  const server = createHttpServer({ host: '127.0.0.1', port: 0, bodyLimit: 256 * 1024, timeoutMs: 60_000, version: 'test' }, { chain, mempool: pool, params, routers: [createX402Router(core)], errorStatuses: PAYMENT_HTTP_STATUS });
  await server.start();
  let nonce = 0n;

  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const mine = async () => {
    await mineFromPool(chain, pool, miner.address);
    await refunds.idle();
  };

  return {
    server,
    chain,
    pool,
    ledger,
    refunds,
    outbound,
    context,
    core,
    providers,
    post,
    mine,
    async paidCall(serviceId, request) {
      const quote = await post(`/api/x402/${serviceId}`, request === undefined ? {} : { request });
      if (quote.status !== 402) throw new Error(`expected a 402 quote, got ${quote.status}: ${JSON.stringify(quote.body)}`);
      const option = quote.body.accepts.find((a: { scheme: string }) => a.scheme === 'native-x402');
      const salt = randomBytes(SALT_BYTES).toString('hex');
      const payload = agentInvoke.encodePayload({
        serviceId,
        payTo: payee.address,
        amount: BigInt(option.maxAmountRequired),
        requestHash: fromHex(requestCommitment({ sellerId: option.extra.sellerId, serviceId, request: typeof request === 'object' ? JSON.stringify(request) : request, salt })),
      });
      const tx = signTx({ version: TX_VERSION, chainId: params.chainId, type: TxType.agent_invoke, nonce, fee: 30_000n, payload, publicKey: nonce === 0n ? agent.publicKey : undefined }, agent);
      nonce++;
      await pool.add(encodeTx(tx));
      await mineFromPool(chain, pool, miner.address);
      const id = toHex(txId(tx));
      const out = await post(`/api/x402/${serviceId}?wait=0`, { ...(request === undefined ? {} : { request }), payment: { txId: id, salt } });
      return { ...out, txId: id, salt };
    },
    agentBalance: async () => (await chain.getAccount(agent.address)).balance,
    async close() {
      await server.stop();
      refunds.stop();
      await refunds.idle();
      await ledger.close();
      pool.stop();
      await chain.close();
    },
  };
}
