/**
 * The set-up shared by the USDC transport tests (HTTP routes, MCP): a test facilitator on
 * 127.0.0.1, a real settlement ledger in a temp dir, two stub services that count their runs
 * (`native-echo`, `native-broken`), and paid-call cores over the real USDC settlement, with the
 * rail on or off. The native rail is a stub that only names the payee: no native payment is made.
 */
import { join } from 'node:path';
import { encodeAddress } from '../../consensus/address.js';
import { createDevnetChainParams, getDevPayeeKeyPair } from '../../consensus/devnet.js';
import { silentLogger } from '../../chain/types.js';
import { ServiceError, type ServiceDefinition } from '../../services/types.js';
import { openLedger, type SettlementLedger } from '../../x402/ledger/open.js';
import { createPaidCallCore, type PaidCallCore } from '../../x402/core/paidCall.js';
import type { NativeRail, ServiceCatalog, ServiceRunContext } from '../../x402/core/ports.js';
import { createReferencePriceSource } from '../../x402/core/pricing.js';
import { createFacilitator, type FacilitatorClientOptions } from '../../x402/usdc/facilitator.js';
import { createUsdcSettlement } from '../../x402/usdc/settle.js';
import { startTestFacilitator, type TestFacilitator } from './facilitator.js';
import { NODE_PAY_TO } from './facilitatorPayments.js';
import { stubService } from './stubService.js';
import { cleanupTmp, tmpDir } from './tmp.js';

/** The set-up (see module comment). */
export interface UsdcCalls {
  readonly params: ReturnType<typeof createDevnetChainParams>;
  readonly facilitator: TestFacilitator;
  readonly ledger: SettlementLedger;
  readonly services: ReadonlyMap<string, ServiceDefinition>;
  readonly catalog: ServiceCatalog;
  /** Runs of the stub services since the last `reset`. */
  readonly runs: () => number;
  /** Toggles the node's syncing state. */
  syncing: boolean;
  /** A core over the real USDC settlement (`usdc: false`: the rail off). */
  core(o: { usdc: boolean }): PaidCallCore;
  /** Before each test: the facilitator's modes and counters, the run count, syncing off. */
  reset(): void;
  stop(): Promise<void>;
}

/** Starts the set-up; `facilitator` options tune the client's timeouts. */
export async function startUsdcCalls(facilitator: Partial<Omit<FacilitatorClientOptions, 'url'>> = {}): Promise<UsdcCalls> {
  const params = createDevnetChainParams({ genesisBits: 0x207fffff });
  const f = await startTestFacilitator();
  const ledger = await openLedger(join(await tmpDir(), 'ledger'));
  let runs = 0;
  const services = new Map<string, ServiceDefinition>([
    ['native-echo', stubService('native-echo', async (_ctx, input) => (runs++, { echo: input }))],
    [
      'native-broken',
      stubService('native-broken', async () => {
        runs++;
        throw new ServiceError('service_failed', 'upstream is down');
      }),
    ],
  ]);
  const catalog: ServiceCatalog = {
    get: (id) => services.get(id),
    validateInput: (_def, request) => (request === 'bad' ? { ok: false, error: { code: 'invalid_request', message: 'bad input' } } : { ok: true, input: request }),
    isAvailable: () => true,
  };
  const native: NativeRail = {
    payTo: encodeAddress(getDevPayeeKeyPair().address, params.hrp),
    sellerId: '0123456789abcdef',
    requiredConfirmations: 1,
    settle: () => Promise.reject(new Error('no native payment is made in the USDC tests')),
  };
  const context = { log: silentLogger, now: Date.now } as unknown as ServiceRunContext;
  const usdc = createUsdcSettlement(ledger, context, { payTo: NODE_PAY_TO, facilitator: createFacilitator({ url: f.url, ...facilitator }) });
  const calls: UsdcCalls = {
    params,
    facilitator: f,
    ledger,
    services,
    catalog,
    runs: () => runs,
    syncing: false,
    core: (o) => createPaidCallCore({ catalog, native, usdc: o.usdc ? usdc : undefined, params, nativeUsd: createReferencePriceSource(params), isSyncing: () => calls.syncing, requestBudgetMs: 10_000 }),
    reset() {
      f.reset();
      runs = 0;
      calls.syncing = false;
    },
    async stop() {
      await f.stop();
      await ledger.close();
      await cleanupTmp();
    },
  };
  return calls;
}
