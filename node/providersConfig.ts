/**
 * Settings of the market-data, EVM and AI providers (group `provider`), declared like every
 * other option and spread into `CONFIG_OPTIONS` (node/config.ts); services read them as
 * `ctx.providers` and type them with `providersOptionsOf` (services/providers/options.ts),
 * whose defaults are the ones shown here.
 */
import { defaultProvidersOptions as d } from '../services/providers/options.js';
import type { ConfigOption } from './configOption.js';

const url = { type: 'string', minLength: 8, maxLength: 2048, pattern: '^[hH][tT][tT][pP][sS]?://' };
const secret = { type: 'string', minLength: 1, maxLength: 4096 };
const model = { type: 'string', minLength: 1, maxLength: 256 };

/** One provider option: flag and environment variable follow from the key. */
function option(key: string, flag: string, schema: Record<string, unknown>, description: string, dflt?: string): ConfigOption {
  return { key, flag, env: `NATIVE_${flag.toUpperCase().replace(/-/g, '_')}`, kind: 'string', group: 'provider', schema, description, defaultText: dflt ?? 'none', ...(dflt === undefined ? {} : { default: dflt }) };
}

/** The providers of weather, fx-rates, the crypto prices, the EVM reads, llm-chat, translate and image-gen. */
export const PROVIDER_CONFIG_OPTIONS: readonly ConfigOption[] = [
  option('weatherGeocodingUrl', 'weather-geocoding-url', url, 'Open-Meteo geocoding endpoint of native-weather', d.weather.geocodingUrl),
  option('weatherForecastUrl', 'weather-forecast-url', url, 'Open-Meteo forecast endpoint of native-weather (commercial use: the customer-api URL with a key)', d.weather.forecastUrl),
  option('weatherApiKey', 'weather-api-key', secret, 'Open-Meteo customer API key (sent as apikey)'),
  option('fxUrl', 'fx-url', url, 'ECB daily reference rates (eurofxref-daily.xml) of native-fx-rates', d.fx.url),
  option('coingeckoUrl', 'coingecko-url', url, 'CoinGecko API v3 base of the crypto price services (pro plan: https://pro-api.coingecko.com/api/v3)', d.coins.url),
  option('coingeckoApiKey', 'coingecko-api-key', secret, 'CoinGecko API key (optional; prefer the environment variable)'),
  option('coingeckoApiKeyHeader', 'coingecko-api-key-header', { type: 'string', pattern: '^[A-Za-z0-9-]{1,64}$' }, 'header carrying the CoinGecko key: x-cg-demo-api-key or x-cg-pro-api-key', d.coins.apiKeyHeader),
  option('baseRpcUrl', 'base-rpc-url', { ...url, minLength: 4, pattern: '^([hH][tT][tT][pP][sS]?://|none$)' }, 'JSON-RPC endpoint of Base (chain 8453) for native-gas-price, native-evm-balance and the reconciliation of ambiguous USDC settlements; "none": no Base reads', d.evm.baseRpcUrl),
  option('ethereumRpcUrl', 'ethereum-rpc-url', url, 'JSON-RPC endpoint of Ethereum (chain 1) for native-gas-price and native-ens-resolve', d.evm.ethereumRpcUrl),
  option('llmUrl', 'llm-url', url, 'OpenAI-compatible API base ending in /v1 (OpenAI, Ollama, llama.cpp server, vLLM) of native-llm-chat'),
  option('llmApiKey', 'llm-api-key', secret, 'bearer key of the LLM endpoint'),
  option('llmModel', 'llm-model', model, 'model name sent to the LLM endpoint'),
  option('translateProvider', 'translate-provider', { enum: ['openai', 'libretranslate'] }, 'openai (a chat model; the LLM endpoint unless --translate-url is set) or libretranslate', d.translate.kind),
  option('translateUrl', 'translate-url', url, 'LibreTranslate server, or an OpenAI-compatible /v1 base other than the LLM one'),
  option('translateApiKey', 'translate-api-key', secret, 'key of the translation endpoint (LibreTranslate api_key, or a bearer key)'),
  option('translateModel', 'translate-model', model, 'chat model used for translation (default: --llm-model)'),
  option('imageProvider', 'image-provider', { enum: ['openai', 'a1111'] }, 'openai (POST /images/generations) or a1111 (Automatic1111 /sdapi/v1/txt2img)', d.image.kind),
  option('imageUrl', 'image-url', url, 'OpenAI-compatible /v1 base, or the Automatic1111 web UI root, of native-image-gen'),
  option('imageApiKey', 'image-api-key', secret, 'bearer key of the image endpoint'),
  option('imageModel', 'image-model', model, 'image model (OpenAI-compatible) or checkpoint title (Automatic1111)'),
];
