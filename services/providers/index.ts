/**
 * The providers of the provider-backed services, built from the node's settings (`ctx.providers`)
 * over its outbound client (`ctx.outbound`), and one health monitor per provider
 * (services/outbound/providerHealth.ts): a service's `health` is its providers' worst state, its
 * `precheck` refuses (503, before any quote) while one of them is unconfigured or down, and its
 * real calls go through `callProvider`, which records their latency and outcome.
 *
 * The set is kept per outbound client (one per node) and rebuilt when a setting changes, so
 * nodes and tests never share state (CoinGecko's last majors, for the descriptor).
 */
import { OutboundError, type OutboundClient } from '../outbound/types.js';
import { createProviderMonitor, type ProviderMonitor } from '../outbound/providerHealth.js';
import { ServiceError, type HealthCheck, type HealthReason, type HealthReport, type HealthStatus, type LiveHealth, type ServiceContext } from '../types.js';
import { createA1111 } from './a1111.js';
import { ProviderCallErrorCode } from './call.js';
import { createCoinGecko, type CoinGecko } from './coinGecko.js';
import { createEcb, type Ecb } from './ecb.js';
import { createEvmReaders, type EvmNetwork, type EvmReader } from './evm.js';
import { createChatProvider, createOpenAiImages, type ChatProvider, type ImageProvider } from './openAi.js';
import { createOpenMeteo, type OpenMeteo } from './openMeteo.js';
import { providersOptionsOf, type ProvidersOptions } from './options.js';
import { createChatTranslator, createLibreTranslate, type Translator } from './translator.js';

/** The adapters of one node; the optional ones are undefined until the operator configures them. */
export interface ProviderSet {
  readonly options: ProvidersOptions;
  readonly weather: OpenMeteo;
  readonly fx: Ecb;
  readonly coins: CoinGecko;
  readonly evm: Readonly<Record<EvmNetwork, EvmReader>>;
  readonly llm?: ChatProvider;
  readonly translate?: Translator;
  readonly image?: ImageProvider;
}

/** Builds the adapters of `options` over `outbound`. */
export function createProviderSet(options: ProvidersOptions, outbound: OutboundClient, now: () => number = Date.now): ProviderSet {
  const { llm, translate, image } = options;
  const withUrl = <T extends { url?: string }>(o: T): (T & { url: string }) | undefined => (o.url ? (o as T & { url: string }) : undefined);
  const llmOpts = withUrl(llm);
  const translateOpts = withUrl(translate);
  const imageOpts = withUrl(image);
  return {
    options,
    weather: createOpenMeteo(options.weather, outbound),
    fx: createEcb(options.fx, outbound),
    coins: createCoinGecko(options.coins, outbound, now),
    evm: createEvmReaders(options.evm, outbound),
    llm: llmOpts && createChatProvider(llmOpts, outbound, 'LLM provider'),
    translate: translateOpts && (translate.kind === 'libretranslate' ? createLibreTranslate(translateOpts, outbound) : createChatTranslator(createChatProvider(translateOpts, outbound, 'translation provider'))),
    image: imageOpts && (image.kind === 'a1111' ? createA1111(imageOpts, outbound) : createOpenAiImages(imageOpts, outbound)),
  };
}

const sets = new WeakMap<OutboundClient, { readonly key: string; readonly set: ProviderSet }>();

/** The provider set of the node running `ctx` (undefined without an outbound client: nothing can be called); rebuilt when a setting changes. */
export function providersOf(ctx: Pick<ServiceContext, 'outbound' | 'providers' | 'now'>): ProviderSet | undefined {
  const outbound = ctx.outbound;
  if (!outbound) return undefined;
  // A score of short strings: comparing them costs microseconds, and catches settings changed in place.
  const key = JSON.stringify(ctx.providers ?? {});
  const known = sets.get(outbound);
  if (known && known.key === key) return known.set;
  const set = createProviderSet(providersOptionsOf(ctx.providers), outbound, () => ctx.now());
  sets.set(outbound, { key, set });
  return set;
}

/** The provider set, or `service_unavailable` (refunded after payment; the precheck refuses earlier). */
function need(ctx: ServiceContext): ProviderSet {
  const set = providersOf(ctx);
  if (!set) throw new ServiceError(ProviderCallErrorCode.UNCONFIGURED, 'this node makes no outbound calls');
  return set;
}

/** A provider's adapter, or `service_unavailable` when it is not configured. */
function adapter<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new ServiceError(ProviderCallErrorCode.UNCONFIGURED, `no ${what} is configured on this node`);
  return value;
}

/** One monitor per provider, shared by the services that use it. */
export const providerMonitors = {
  weather: createProviderMonitor({ name: 'Open-Meteo', configured: (ctx) => providersOf(ctx) !== undefined, probe: (ctx) => need(ctx).weather.probe(ctx.signal) }),
  fx: createProviderMonitor({ name: 'ECB reference rates', configured: (ctx) => providersOf(ctx) !== undefined, probe: (ctx) => need(ctx).fx.probe(ctx.signal) }),
  coins: createProviderMonitor({ name: 'CoinGecko', configured: (ctx) => providersOf(ctx) !== undefined, probe: (ctx) => need(ctx).coins.probe(ctx.signal) }),
  evmBase: createProviderMonitor({ name: 'base RPC', configured: (ctx) => providersOf(ctx) !== undefined, probe: (ctx) => need(ctx).evm.base.probe(ctx.signal) }),
  evmEthereum: createProviderMonitor({ name: 'ethereum RPC', configured: (ctx) => providersOf(ctx) !== undefined, probe: (ctx) => need(ctx).evm.ethereum.probe(ctx.signal) }),
  llm: createProviderMonitor({ name: 'LLM provider', configured: (ctx) => providersOf(ctx)?.llm !== undefined, probe: (ctx) => adapter(need(ctx).llm, 'LLM provider').probe(ctx.signal) }),
  translate: createProviderMonitor({ name: 'translation provider', configured: (ctx) => providersOf(ctx)?.translate !== undefined, probe: (ctx) => adapter(need(ctx).translate, 'translation provider').probe(ctx.signal) }),
  image: createProviderMonitor({ name: 'image provider', configured: (ctx) => providersOf(ctx)?.image !== undefined, probe: (ctx) => adapter(need(ctx).image, 'image provider').probe(ctx.signal) }),
} as const;

/** The name of a provider monitor. */
export type ProviderKey = keyof typeof providerMonitors;

const RANK: Readonly<Record<HealthStatus, number>> = { active: 0, unknown: 1, degraded: 2, down: 3 };

/** The worst of `reports` (with that one's reason), with the slowest latency among them. */
function worst<R extends HealthReport>(reports: readonly R[]): { status: HealthStatus; latencyMs: number; reason?: HealthReason } {
  let status: HealthStatus = 'active';
  let reason: HealthReason | undefined;
  let latencyMs = 0;
  for (const r of reports) {
    if (RANK[r.status] > RANK[status]) {
      status = r.status;
      reason = r.reason;
    }
    latencyMs = Math.max(latencyMs, r.latencyMs ?? 0);
  }
  return reason ? { status, latencyMs, reason } : { status, latencyMs };
}

/**
 * A service's health: the worst of its providers' (with that provider's reason), with the
 * slowest latency among them. Its `current` is `down` as soon as one provider is, and otherwise
 * known once every provider has answered a call or probe.
 */
export function providersHealth(...keys: readonly ProviderKey[]): HealthCheck {
  const current = (ctx: Omit<ServiceContext, 'signal'>): LiveHealth | undefined => {
    const now = keys.map((k) => providerMonitors[k].current(ctx));
    const known = now.filter((r): r is LiveHealth => r !== undefined);
    const down = known.filter((r) => r.status === 'down');
    if (down.length === 0 && known.length < keys.length) return undefined;
    const w = worst(down.length ? down : known);
    return { ...w, lastVerifiedAt: Math.max(...(down.length ? down : known).map((r) => r.lastVerifiedAt)) };
  };
  return Object.assign(async (ctx: ServiceContext) => worst(await Promise.all(keys.map((k) => providerMonitors[k].health(ctx)))), { current });
}

/** A service's pre-quote check: every provider configured and its last call not a recent failure (`provider_not_configured`, `provider_down`: a 503 before any payment). */
export function providersReady(...keys: readonly ProviderKey[]): (ctx: ServiceContext) => Promise<void> {
  return async (ctx) => {
    for (const k of keys) providerMonitors[k].assertAvailable(ctx);
  };
}

/**
 * The precheck of a service whose input the spec lists as optional but which cannot run without
 * one: an empty request is a coded 400 (`invalid_request`, the caller's fault) before any quote,
 * then `providersReady`.
 */
export function inputAndProvidersReady(expected: string, ...keys: readonly ProviderKey[]): (ctx: ServiceContext, input: unknown) => Promise<void> {
  const ready = providersReady(...keys);
  return async (ctx, input) => {
    if (input === undefined) throw new OutboundError('invalid_request', `request is required: ${expected}`, true);
    await ready(ctx);
  };
}

/**
 * Runs one real call of provider `key` with the node's adapters, recording its latency and
 * outcome; a `provider_not_found` answer (an unknown city or coin: the caller's input) is
 * recorded as the success of the provider it is.
 */
export async function callProvider<T>(ctx: ServiceContext, key: ProviderKey, fn: (set: ProviderSet) => Promise<T>): Promise<T> {
  const set = need(ctx);
  const out = await providerMonitors[key].track(ctx, async () => {
    try {
      return { value: await fn(set) };
    } catch (e) {
      if (e instanceof ServiceError && e.code === ProviderCallErrorCode.NOT_FOUND) return { notFound: e };
      throw e;
    }
  });
  if ('notFound' in out) throw out.notFound;
  return out.value;
}

/** The configured adapter of an optional provider (`service_unavailable` when none). */
export function configured<K extends 'llm' | 'translate' | 'image'>(set: ProviderSet, key: K, what: string): NonNullable<ProviderSet[K]> {
  return adapter(set[key], what) as NonNullable<ProviderSet[K]>;
}

/** Age past which the majors' last prices are no longer shown (the descriptor then says null), ms. */
export const MAJORS_MAX_AGE_MS = 10 * 60_000;

/** The majors' USD prices from the market-data provider's last answer on this node, if younger than `MAJORS_MAX_AGE_MS`. */
export function freshMajors(ctx: Pick<ServiceContext, 'outbound' | 'providers' | 'now'>, now: number): { at: number; source: string; usd: Readonly<Record<string, number | null>> } | undefined {
  const last = providersOf(ctx)?.coins.lastMajors();
  if (!last || now - last.at > MAJORS_MAX_AGE_MS || now < last.at) return undefined;
  return { at: last.at, source: 'CoinGecko simple/price', usd: last.usd };
}
