/**
 * The operator's providers: which external API each provider-backed service calls, with its key
 * and model. Defaults are the real public no-key endpoints where one exists (Open-Meteo, the ECB
 * daily reference rates, CoinGecko's keyless API, the chains' public RPCs); the LLM, translation
 * and image providers have none, so those services stay `down` until the operator names one.
 * The node's config declares one option per field (node/providersConfig.ts, group `provider`);
 * services read them flat as `ctx.providers` and type them with `providersOptionsOf`.
 */

/** Open-Meteo (weather): geocoding + forecast. The free API is non-commercial; a paid node sets `apiKey` and the customer URLs. */
export interface WeatherProviderOptions {
  /** Geocoding search endpoint (`…/v1/search`). */
  readonly geocodingUrl: string;
  /** Forecast endpoint (`…/v1/forecast`). */
  readonly forecastUrl: string;
  /** Customer API key (sent as `apikey`), for commercial use with the customer-api URLs. */
  readonly apiKey?: string;
}

/** ECB euro foreign exchange reference rates (daily XML, EUR base). */
export interface FxProviderOptions {
  /** `eurofxref-daily.xml` or a mirror serving the same document. */
  readonly url: string;
}

/** CoinGecko (coin prices, global market cap). */
export interface CoinsProviderOptions {
  /** API base, without a trailing slash (`…/api/v3`). */
  readonly url: string;
  /** Optional API key, sent in `apiKeyHeader`. */
  readonly apiKey?: string;
  /** `x-cg-demo-api-key` (demo plan, public URL) or `x-cg-pro-api-key` (pro URL). */
  readonly apiKeyHeader: string;
}

/** JSON-RPC endpoints of the EVM chains read by gas-price, evm-balance and ens-resolve. */
export interface EvmProviderOptions {
  /** Base mainnet (chain id 8453). */
  readonly baseRpcUrl: string;
  /** Ethereum mainnet (chain id 1); also the ENS chain. */
  readonly ethereumRpcUrl: string;
}

/** An OpenAI-compatible endpoint (OpenAI, Ollama, llama.cpp server, vLLM…): the base URL ending in `/v1`. */
export interface OpenAiCompatibleOptions {
  readonly url?: string;
  /** Sent as `Authorization: Bearer …` when set. */
  readonly apiKey?: string;
  readonly model?: string;
}

/** Chat completions for native-llm-chat. */
export type LlmProviderOptions = OpenAiCompatibleOptions;

/** Translation: an OpenAI-compatible chat model, or a LibreTranslate server. */
export interface TranslateProviderOptions extends OpenAiCompatibleOptions {
  readonly kind: 'openai' | 'libretranslate';
}

/** Image generation: an OpenAI-compatible images endpoint, or an Automatic1111 web UI API. */
export interface ImageProviderOptions extends OpenAiCompatibleOptions {
  readonly kind: 'openai' | 'a1111';
}

/** Every provider of the node. */
export interface ProvidersOptions {
  readonly weather: WeatherProviderOptions;
  readonly fx: FxProviderOptions;
  readonly coins: CoinsProviderOptions;
  readonly evm: EvmProviderOptions;
  readonly llm: LlmProviderOptions;
  readonly translate: TranslateProviderOptions;
  readonly image: ImageProviderOptions;
}

/** The defaults: public no-key endpoints; LLM, translation and images unconfigured. */
export const defaultProvidersOptions: ProvidersOptions = Object.freeze({
  weather: { geocodingUrl: 'https://geocoding-api.open-meteo.com/v1/search', forecastUrl: 'https://api.open-meteo.com/v1/forecast' },
  fx: { url: 'https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml' },
  coins: { url: 'https://api.coingecko.com/api/v3', apiKeyHeader: 'x-cg-demo-api-key' },
  evm: { baseRpcUrl: 'https://mainnet.base.org', ethereumRpcUrl: 'https://eth.merkle.io' },
  llm: {},
  translate: { kind: 'openai' as const },
  image: { kind: 'openai' as const },
});

/** Settings as the node's config hands them to services (`ctx.providers`: the `provider` group of options, keyed like the config file). */
export type FlatProviderSettings = Readonly<Record<string, string | number | boolean | undefined>>;

/**
 * The typed providers from the flat settings (keys of node/providersConfig.ts), each missing key
 * at its default. Translation by an OpenAI-compatible model uses the LLM endpoint unless
 * `translateUrl` names another one.
 */
export function providersOptionsOf(settings: FlatProviderSettings | undefined): ProvidersOptions {
  const s = settings ?? {};
  const str = (k: string): string | undefined => (typeof s[k] === 'string' && s[k] !== '' ? (s[k] as string) : undefined);
  const d = defaultProvidersOptions;
  const llm: LlmProviderOptions = { url: str('llmUrl'), apiKey: str('llmApiKey'), model: str('llmModel') };
  const translateKind = str('translateProvider') === 'libretranslate' ? 'libretranslate' : 'openai';
  const translateUrl = str('translateUrl');
  return {
    weather: { geocodingUrl: str('weatherGeocodingUrl') ?? d.weather.geocodingUrl, forecastUrl: str('weatherForecastUrl') ?? d.weather.forecastUrl, apiKey: str('weatherApiKey') },
    fx: { url: str('fxUrl') ?? d.fx.url },
    coins: { url: str('coingeckoUrl') ?? d.coins.url, apiKey: str('coingeckoApiKey'), apiKeyHeader: str('coingeckoApiKeyHeader') ?? d.coins.apiKeyHeader },
    evm: { baseRpcUrl: str('baseRpcUrl') ?? d.evm.baseRpcUrl, ethereumRpcUrl: str('ethereumRpcUrl') ?? d.evm.ethereumRpcUrl },
    llm,
    translate:
      translateKind === 'openai' && !translateUrl
        ? { kind: 'openai', ...llm, model: str('translateModel') ?? llm.model }
        : { kind: translateKind, url: translateUrl, apiKey: str('translateApiKey'), model: str('translateModel') },
    image: { kind: str('imageProvider') === 'a1111' ? 'a1111' : 'openai', url: str('imageUrl'), apiKey: str('imageApiKey'), model: str('imageModel') },
  };
}
