/**
 * What a service is: one paid operation of the catalog. Each `services/<id-without-prefix>.ts`
 * exports one `ServiceDefinition`; `services/index.ts` lists them by import.
 *
 * A service sees only a `ServiceContext` (chain and mempool readers, parameters, clock, logger,
 * the registry for search, the USD price source, an abort signal for its timeout), never koa's
 * context or payment data.
 */
import type { ChainReader, Logger, MempoolReader, SignatureVerifier } from '../chain/types.js';
import type { ChainParams } from '../consensus/params.js';
import type { OutboundClient, ProviderSettings } from './outbound/types.js';

/** The spec's service categories. */
export type ServiceCategory =
  | 'audit' | 'compute' | 'pricing' | 'market-data' | 'portfolio' | 'utility' | 'oracle' | 'compliance' | 'analytics'
  | 'trading' | 'reports' | 'staking-calculator' | 'whale-watch' | 'explorer' | 'bridge' | 'search' | 'risk';

/** Health of a service as the prober last saw it. */
export type HealthStatus = 'active' | 'degraded' | 'down' | 'unknown';

/**
 * Why a service is `down` or `degraded`, as the catalog publishes it (`healthReason`): a stable
 * `code` (e.g. `provider_not_configured`, `provider_down`, `data_not_installed`) and a sentence
 * for people (e.g. "CoinGecko failed its last call").
 */
export interface HealthReason {
  readonly code: string;
  readonly message: string;
}

/** A health check's answer with the latency of the real call it is based on (ms), when that differs from the check's own duration, and why it is not `active`. */
export interface HealthReport {
  readonly status: HealthStatus;
  readonly latencyMs?: number;
  /** Why the status is `down` or `degraded` (the prober gives a generic one when a check says nothing). */
  readonly reason?: HealthReason;
}

/**
 * A service's health as it stands right now, read without IO from the outcome of the last real
 * call behind it (a provider-backed service's last provider call or probe): what the catalog
 * shows and what the pre-payment check decides by, between two rounds of the prober.
 */
export interface LiveHealth extends HealthReport {
  readonly latencyMs: number;
  /** Unix ms of the outcome it is read from. */
  readonly lastVerifiedAt: number;
}

/**
 * A service's health check. `current`, when present, answers at once from the state the check
 * keeps (undefined: nothing known yet, the prober's last answer stands); the prober shows it in
 * place of its own last answer, so the catalog changes the moment a real call changes it.
 */
export type HealthCheck = ((ctx: ServiceContext) => Promise<HealthStatus | HealthReport>) & {
  readonly current?: (ctx: Omit<ServiceContext, 'signal'>) => LiveHealth | undefined;
};

/** USD price source of one NATIVE (decimal string, exact), fed by the reference price until the on-chain pool exists. */
export interface NativeUsdSource {
  /** USD per NATIVE as micro-USD integer (1 USD = 1_000_000n), and where it came from. */
  get(): { microUsd: bigint; source: string; live: boolean; change24h?: number | null; pool?: string };
}

/** Read access to the registry (for search-type services and discovery). */
export interface ServiceRegistryReader {
  list(): readonly ServiceDefinition[];
  get(id: string): ServiceDefinition | undefined;
}

/** Settled calls and volume of a service (from the x402 settlement ledger). */
export interface ServiceUsage {
  volume(serviceId: string): { calls: number; callsUsdc: number; volumeBase: bigint; volumeUsdcAtomic: bigint };
}

/** The seller block of the business documents (node config `sellerName`, `sellerAddress`, `sellerVatId`). */
export interface SellerInfo {
  readonly name: string;
  readonly address: string;
  readonly vatId: string;
}

/** What a running service may use. */
export interface ServiceContext {
  readonly chain: ChainReader;
  readonly mempool: MempoolReader;
  readonly params: ChainParams;
  /** Unix ms. */
  now(): number;
  readonly log: Logger;
  readonly registry: ServiceRegistryReader;
  readonly nativeUsd: NativeUsdSource;
  /** Aborted when the service's timeout expires or the node stops. */
  readonly signal: AbortSignal;
  /** Signature checks off the event loop (the node's worker pool); absent in pure tools. */
  readonly verifier?: SignatureVerifier;
  /** Settled calls and volume per service; absent where no ledger runs. */
  readonly usage?: ServiceUsage;
  /** The outbound client (services/outbound/): every request outside the node goes through it; absent where none runs. */
  readonly outbound?: OutboundClient;
  /** The providers' settings from the node's config (URLs, keys); absent where none are configured. */
  readonly providers?: ProviderSettings;
  /** Seller shown on invoices, receipts, credit notes and quotes; absent: the devnet defaults. */
  readonly seller?: SellerInfo;
  /** Moderation labels of addresses on chain (`mixer`, `exploit`, …), for risk scoring; absent in pure tools. */
  readonly addressLabels?: AddressLabelReader;
  /** The health the node's prober last saw of each service (what the catalog shows); absent where no prober runs. */
  readonly health?: ServiceHealthReader;
}

/** Read side of the node's health prober (services/prober.ts), for the services that list other services. */
export interface ServiceHealthReader {
  /** Last known health of a service (`unknown` before its first check). */
  get(serviceId: string): { readonly status: HealthStatus; readonly lastVerifiedAt: number; readonly reason?: HealthReason };
}

/** Reads the moderation labels of addresses (20-byte account ids) at the tip, in one state read. */
export interface AddressLabelReader {
  getMany(ids: readonly Uint8Array[]): Promise<({ readonly label: string; readonly reason: string; readonly height: number } | undefined)[]>;
}

/** The failure a service reports when it cannot produce a result (the caller gets a refund). */
export class ServiceError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'ServiceError';
    this.code = code;
  }
}

/** One service of the catalog. */
export interface ServiceDefinition {
  /** `native-…` id; also the last path segment of its endpoint. */
  readonly id: string;
  readonly name: string;
  readonly category: ServiceCategory;
  /** Exact price in NATIVE base units (1 NATIVE = 100_000_000). */
  readonly priceBase: bigint;
  readonly description: string;
  readonly tags: readonly string[];
  /** Text describing the expected value of `request` (may be empty). */
  readonly requestFormat: string;
  /**
   * Whether the spec's governing list requires `request`. The catalog's published `requestRequired`
   * flag is `requestIsRequired(def)`: this or `needsInput`, what the validation does.
   */
  readonly requestRequired: boolean;
  /**
   * JSON Schema of the input. For plain-text inputs it describes the `request` string itself;
   * for JSON inputs (`inputIsJson`) it describes the value parsed from the `request` string.
   * Validated with ajv before any quote; the same schema feeds MCP and OpenAPI.
   */
  readonly inputSchema: Record<string, unknown>;
  /** `request` is a JSON document (parsed, then validated against `inputSchema`). */
  readonly inputIsJson?: boolean;
  /**
   * The spec lists `request` as optional for this service but it has nothing to work on without
   * one: an empty request is refused with 400 `invalid_request` before any quote, like a bad one.
   */
  readonly needsInput?: boolean;
  /** Provider agent name (the node itself for node-operated services). */
  readonly providerAgent: string;
  readonly nodeOperated: boolean;
  /** Execution timeout, ms. */
  readonly timeoutMs: number;
  /**
   * The operation. Absent while the implementation is not there: the service then answers 503
   * `service_unavailable` before any quote and reports `down`, never a fake result.
   * Receives the validated input (the string, or the parsed JSON value). Throws ServiceError on failure.
   */
  readonly run?: (ctx: ServiceContext, input: unknown) => Promise<unknown>;
  /**
   * Cheap health probe; absent means "active when implemented". A `HealthReport` carries the
   * latency of the real call behind it; a check with `current` also tells its state between probes.
   */
  readonly health?: HealthCheck;
  /**
   * Checks of the validated input that need IO, run before any quote (e.g. that a caller's URL
   * resolves to a public address). Throws an `OutboundError` with `callerFault` (→ a coded 400)
   * or a `ServiceError` (→ 503); anything else it throws is ignored here and met again by `run`.
   */
  readonly precheck?: (ctx: ServiceContext, input: unknown) => Promise<void>;
}

/**
 * Whether the registry's `validateInput` refuses an absent or empty `request` of `def`: the spec's governing
 * list (`requestRequired`) or a service that cannot answer without one (`needsInput`). This is
 * the `requestRequired` flag every discovery document publishes, so the flag says what the
 * validation does.
 */
export function requestIsRequired(def: Pick<ServiceDefinition, 'requestRequired' | 'needsInput'>): boolean {
  return def.requestRequired || def.needsInput === true;
}
