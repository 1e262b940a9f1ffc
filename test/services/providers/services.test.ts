/**
 * The HTTP-provider-backed services against the loopback fake of their providers (real wire
 * formats, through the real outbound client): each service's result for real input, its input
 * refused before payment, `down` and a refused precheck when its provider is missing or failing,
 * and provider errors, slow, oversized and malformed answers as coded ServiceErrors.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { silentLogger } from '../../../chain/types.js';
import { createDevnetChainParams } from '../../../consensus/devnet.js';
import { createServiceRegistry } from '../../../services/index.js';
import { createOutboundClient } from '../../../services/outbound/client.js';
import { OutboundError } from '../../../services/outbound/types.js';
import { executeService } from '../../../services/execute.js';
import { freshMajors, MAJORS_MAX_AGE_MS, providersOf } from '../../../services/providers/index.js';
import { readPngInfo } from '../../../services/providers/png.js';
import { ServiceError, type HealthReport, type ServiceContext, type ServiceDefinition } from '../../../services/types.js';
import { createReferencePriceSource } from '../../../x402/core/pricing.js';
import { startProviderFake, type Family, type Mode, type ProviderFake } from './fakeProviders.js';

const params = createDevnetChainParams({ genesisBits: 0x207fffff });
const registry = createServiceRegistry();
const NOW = Date.UTC(2026, 10, 24, 6, 0, 0);
let fake: ProviderFake;

beforeAll(async () => {
  fake = await startProviderFake();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => fake.reset());

/** A service context over a fresh outbound client (fresh provider health) with the fake's settings. */
function contextOf(settings: Record<string, string> = fake.settings()): ServiceContext {
  return {
    chain: {},
    mempool: {},
    params,
    now: () => NOW,
    log: silentLogger,
    registry,
    nativeUsd: createReferencePriceSource(params),
    signal: new AbortController().signal,
    // Above any local answer on a loaded machine, below the fake's slow answer (SLOW_MS, 4 s).
    outbound: createOutboundClient({ timeoutMs: 2_500, connectTimeoutMs: 2_000 }),
    providers: settings,
  } as unknown as ServiceContext;
}

function def(id: string): ServiceDefinition {
  return registry.get(id)!;
}

/** Validates like the paid endpoints, then runs. */
async function call(id: string, request: string | undefined, ctx = contextOf()): Promise<Record<string, unknown>> {
  const d = def(id);
  const v = registry.validateInput(d, request);
  if (!v.ok) throw new Error(`input refused: ${v.error.message}`);
  await d.precheck?.(ctx, v.input);
  return (await executeService(d, ctx, v.input)) as Record<string, unknown>;
}

/** Validates and runs without the precheck: the provider was fine when the call was paid, and fails now. */
async function run(id: string, request: string | undefined, ctx = contextOf()): Promise<Record<string, unknown>> {
  const v = registry.validateInput(def(id), request);
  if (!v.ok) throw new Error(`input refused: ${v.error.message}`);
  return (await executeService(def(id), ctx, v.input)) as Record<string, unknown>;
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ServiceError || e instanceof OutboundError) return e.code;
    throw e;
  }
  return 'no error';
}

/** Switches `family` to each failure mode in turn and checks the code the service's run answers with. */
async function expectFailures(family: Family, id: string, request: string | undefined, cases: readonly (readonly [Mode, string])[]): Promise<void> {
  for (const [mode, code] of cases) {
    fake.set(family, mode);
    expect({ mode, code: await codeOf(run(id, request)) }).toEqual({ mode, code });
  }
}

async function statusOf(id: string, ctx: ServiceContext): Promise<string> {
  const h = (await def(id).health!(ctx)) as HealthReport;
  return h.status;
}

const refused = (id: string, request: string) => expect(registry.validateInput(def(id), request).ok).toBe(false);

describe('native-weather (Open-Meteo)', () => {
  test('a city: geocoded, then current conditions and a 3-day forecast in the place’s time zone', async () => {
    const out = await call('native-weather', 'Berlin');
    expect(out.location).toMatchObject({ name: 'Berlin', country: 'Germany', countryCode: 'DE', timezone: 'Europe/Berlin', latitude: 52.52, longitude: 13.419998 });
    expect(out.current).toMatchObject({ time: '2026-11-24T06:45', temperatureC: 2.4, weatherCode: 3, conditions: 'overcast', isDay: false, windSpeedKmh: 11.9 });
    expect(out.forecast).toHaveLength(3);
    expect((out.forecast as Record<string, unknown>[])[0]).toMatchObject({ date: '2026-11-24', conditions: 'slight rain', temperatureMaxC: 4.1, temperatureMinC: 0.8, precipitationProbabilityPct: 80 });
    const forecastReq = fake.headers.find((h) => h.path.startsWith('/om/'))!;
    expect(forecastReq).toBeDefined();
    expect(fake.hits.get('geo')).toBe(1);
  });

  test('latitude,longitude skips the geocoder; the customer API key is sent when configured', async () => {
    const out = await run('native-weather', '48.85,2.35', contextOf(fake.settings({ weatherApiKey: 'k-123' })));
    expect(out.location).toMatchObject({ name: null, timezone: 'Europe/Berlin' });
    expect(fake.hits.get('geo')).toBeUndefined();
    const q = new URL(fake.headers.find((h) => h.path.startsWith('/om/'))!.url, 'http://x').searchParams;
    expect(Object.fromEntries(['latitude', 'longitude', 'timezone', 'forecast_days', 'apikey'].map((k) => [k, q.get(k)]))).toEqual({ latitude: '48.85', longitude: '2.35', timezone: 'auto', forecast_days: '3', apikey: 'k-123' });
    expect(q.get('current')).toContain('weather_code');
  });

  test('an unknown place is provider_not_found (refunded) and leaves the provider healthy', async () => {
    const ctx = contextOf();
    expect(await codeOf(call('native-weather', 'Nowhereville', ctx))).toBe('provider_not_found');
    expect(await statusOf('native-weather', ctx)).toBe('active');
  });

  test('input checked before payment: a place name or coordinates in range', () => {
    refused('native-weather', '95.1,10');
    refused('native-weather', '<script>');
    expect(registry.validateInput(def('native-weather'), 'Paris, FR').ok).toBe(true);
  });

  test('provider error, slow, oversized and malformed answers are coded; a failure makes the service down and its precheck refuse', async () => {
    const ctx = contextOf();
    fake.set('geo', 'error');
    await expect(run('native-weather', 'Berlin', ctx)).rejects.toMatchObject({ code: 'provider_error', message: expect.stringContaining('Latitude must be in range') });
    expect(await statusOf('native-weather', ctx)).toBe('down');
    expect(await codeOf(def('native-weather').precheck!(ctx, 'Berlin'))).toBe('provider_down');
    await expectFailures('geo', 'native-weather', 'Berlin', [
      ['slow', 'provider_timeout'],
      ['huge', 'provider_response_too_large'],
      ['ok', 'no error'],
    ]);
    await expectFailures('om', 'native-weather', 'Berlin', [
      ['malformed', 'provider_bad_response'],
      ['wrong-shape', 'provider_bad_response'],
      ['error', 'provider_error'],
    ]);
  });
});

describe('native-fx-rates (ECB)', () => {
  test('a conversion: exact decimal cross rate through EUR, half-up, with the ECB date', async () => {
    const out = await call('native-fx-rates', '100 USD to EUR');
    expect(out).toMatchObject({ mode: 'convert', amount: '100', from: 'USD', to: 'EUR', result: '86.490227', rate: '0.86490227', inverseRate: '1.1562', date: '2026-11-23' });
    const cross = await call('native-fx-rates', '250.5 gbp TO jpy');
    expect(cross).toMatchObject({ from: 'GBP', to: 'JPY', result: '51604.881101', rate: '206.00750939', inverseRate: '0.00485419' });
  });

  test('a base code lists the other 29 currencies; empty means USD', async () => {
    const eur = await call('native-fx-rates', 'EUR');
    expect(eur).toMatchObject({ mode: 'rates', base: 'EUR', date: '2026-11-23', count: 29 });
    expect((eur.rates as Record<string, string>).USD).toBe('1.1562');
    const usd = await call('native-fx-rates', undefined);
    expect(usd).toMatchObject({ base: 'USD', count: 29 });
    expect((usd.rates as Record<string, string>).GBP).toBe('0.7601626');
    expect((usd.rates as Record<string, string>).EUR).toBe('0.86490227');
  });

  test('currencies outside the ECB set are refused before payment', () => {
    refused('native-fx-rates', '100 BGN to EUR');
    refused('native-fx-rates', 'XXX');
    refused('native-fx-rates', '-5 USD to EUR');
  });

  test('the rates are cached: two calls, one request', async () => {
    const ctx = contextOf();
    await call('native-fx-rates', 'EUR', ctx);
    await call('native-fx-rates', 'USD', ctx);
    expect(fake.hits.get('ecb')).toBe(1);
  });

  test('an HTML error page, a truncated document or one that is not eurofxref is refused', async () => {
    await expectFailures('ecb', 'native-fx-rates', 'EUR', [
      ['error', 'provider_error'],
      ['malformed', 'provider_bad_response'],
      ['wrong-shape', 'provider_bad_response'],
      ['huge', 'provider_response_too_large'],
    ]);
  });
});

describe('crypto prices (CoinGecko)', () => {
  test('native-crypto-prices: the five majors with 24h change, NATIVE from the node, the global market cap; the majors kept for the descriptor', async () => {
    const ctx = contextOf(fake.settings({ coingeckoApiKey: 'CG-demo-key' }));
    const out = await call('native-crypto-prices', undefined, ctx);
    expect(out.prices).toMatchObject({ BTC: { id: 'bitcoin', usd: 87210.12, change24hPct: 2.4519 }, ETH: { usd: 2954.31 }, SOL: { usd: 139.77 }, BNB: { usd: 912.44 }, LTC: { usd: 84.02 } });
    expect(out.native).toMatchObject({ symbol: 'NATIVE', source: 'chain-parameters reference price', live: false });
    expect(out.global).toMatchObject({ totalMarketCapUsd: 3123402188321.7, btcDominancePct: 55.68, marketCapChange24hPct: 2.0134 });
    expect(providersOf(ctx)!.coins.lastMajors()).toEqual({ at: NOW, usd: { BTC: 87210.12, ETH: 2954.31, SOL: 139.77, BNB: 912.44, LTC: 84.02 } });
    expect(fake.headers.filter((h) => h.path.startsWith('/cg/')).every((h) => h.headers['x-cg-demo-api-key'] === 'CG-demo-key')).toBe(true);
    // The protocol descriptor's priceFeed.majors: the same feed, while fresh.
    expect(freshMajors(ctx, NOW + 1000)).toMatchObject({ source: 'CoinGecko simple/price', usd: { BTC: 87210.12 } });
    expect(freshMajors(ctx, NOW + MAJORS_MAX_AGE_MS + 1)).toBeUndefined();
    expect(freshMajors(contextOf(), NOW)).toBeUndefined();
  });

  test('the health probe is one quote of the majors, which fills the descriptor without any paid call', async () => {
    const ctx = contextOf();
    expect(await statusOf('native-crypto-prices', ctx)).toBe('active');
    expect(freshMajors(ctx, NOW)).toMatchObject({ usd: { ETH: 2954.31, LTC: 84.02 } });
  });

  test('native-crypto-price: one major; NATIVE needs no provider at all', async () => {
    expect(await call('native-crypto-price', 'eth')).toMatchObject({ symbol: 'ETH', id: 'ethereum', usd: 2954.31, change24hPct: 3.1177, updatedAt: new Date(1795934405000).toISOString() });
    expect(await call('native-crypto-price', undefined)).toMatchObject({ symbol: 'BTC' });
    fake.reset();
    fake.set('cg', 'error');
    const native = await call('native-crypto-price', 'NATIVE', contextOf());
    expect(native).toMatchObject({ symbol: 'NATIVE', live: false });
    expect(fake.hits.get('cg')).toBeUndefined();
    refused('native-crypto-price', 'DOGE');
  });

  test('native-crypto-price-feed: any coin id; an unknown one is provider_not_found and the provider stays healthy', async () => {
    expect(await call('native-crypto-price-feed', 'usd-coin')).toMatchObject({ id: 'usd-coin', vsCurrency: 'usd', usd: 0.999912 });
    const ctx = contextOf();
    expect(await codeOf(call('native-crypto-price-feed', 'no-such-coin', ctx))).toBe('provider_not_found');
    expect(await statusOf('native-crypto-price-feed', ctx)).toBe('active');
    refused('native-crypto-price-feed', 'bit coin');
  });

  test('a 429 is provider_error with CoinGecko’s message; malformed and wrong-shape answers are provider_bad_response', async () => {
    fake.set('cg', 'error');
    await expect(run('native-crypto-prices', undefined)).rejects.toMatchObject({ code: 'provider_error', message: expect.stringContaining('429') });
    await expectFailures('cg', 'native-crypto-price-feed', 'bitcoin', [
      ['malformed', 'provider_bad_response'],
      ['wrong-shape', 'provider_bad_response'],
      ['slow', 'provider_timeout'],
      ['huge', 'provider_response_too_large'],
    ]);
  });
});

describe('native-llm-chat (OpenAI-compatible)', () => {
  test('a completion with the model name, bearer key and usage', async () => {
    const out = await call('native-llm-chat', 'Say hello', contextOf(fake.settings({ llmApiKey: 'sk-test' })));
    expect(out).toEqual({ text: 'Echo: Say hello', model: 'test-model', finishReason: 'stop', usage: { promptTokens: 19, completionTokens: 10, totalTokens: 29 } });
    const post = fake.posts.find((p) => p.path === '/oai/v1/chat/completions')!;
    expect(post.body).toMatchObject({ model: 'test-model', messages: [{ role: 'user', content: 'Say hello' }], stream: false });
    expect(fake.headers.find((h) => h.path === '/oai/v1/chat/completions')!.headers.authorization).toBe('Bearer sk-test');
  });

  test('unconfigured: down, precheck refuses (503 before payment), run refuses', async () => {
    const ctx = contextOf({});
    expect(await statusOf('native-llm-chat', ctx)).toBe('down');
    expect(await codeOf(def('native-llm-chat').precheck!(ctx, 'hi'))).toBe('provider_not_configured');
    expect(await codeOf(executeService(def('native-llm-chat'), ctx, 'hi'))).toBe('service_unavailable');
    expect(fake.hits.size).toBe(0);
  });

  test('the health probe lists the models: a model the endpoint does not serve is down', async () => {
    expect(await statusOf('native-llm-chat', contextOf())).toBe('active');
    expect(await statusOf('native-llm-chat', contextOf(fake.settings({ llmModel: 'gpt-nonexistent' })))).toBe('down');
    // Ollama's tags: the bare name is the `latest` tag.
    expect(await statusOf('native-llm-chat', contextOf(fake.settings({ llmModel: 'llama3.2' })))).toBe('active');
  });

  test('an empty request is refused before payment; provider errors are coded', async () => {
    await expect(def('native-llm-chat').precheck!(contextOf(), undefined)).rejects.toMatchObject({ code: 'invalid_request', callerFault: true });
    fake.set('oai', 'error');
    await expect(run('native-llm-chat', 'hi')).rejects.toMatchObject({ code: 'provider_error', message: expect.stringContaining('overloaded') });
    fake.set('oai', 'wrong-shape');
    expect(await codeOf(run('native-llm-chat', 'hi'))).toBe('provider_bad_response');
  });
});

describe('native-translate', () => {
  test('LibreTranslate: the target checked against its languages (zh → zh-Hans), source detected', async () => {
    expect(await call('native-translate', 'de|Hello world')).toMatchObject({ target: 'de', targetLanguage: 'German', translation: 'de: Hello world', detectedSource: 'en', confidence: 90, provider: 'libretranslate' });
    expect(await call('native-translate', 'ZH | Hello')).toMatchObject({ target: 'zh', translation: 'zh-Hans: Hello' });
    expect(await codeOf(call('native-translate', 'ja|Hello'))).toBe('provider_not_found');
  });

  test('OpenAI-compatible: the LLM endpoint translates when no translation URL is set', async () => {
    const out = await call('native-translate', 'pt-br|Good morning', contextOf(fake.settings({ translateProvider: 'openai', translateUrl: '' })));
    expect(out).toMatchObject({ target: 'pt-BR', targetLanguage: 'Brazilian Portuguese', translation: '[translated] Good morning', provider: 'openai', model: 'test-model' });
    const post = fake.posts.find((p) => p.path === '/oai/v1/chat/completions')!;
    expect((post.body.messages as { content: string }[])[0].content).toContain('Brazilian Portuguese');
  });

  test('40+ target languages validated before payment', () => {
    refused('native-translate', 'xx|Hello');
    refused('native-translate', 'de|');
    refused('native-translate', 'Hello');
    expect(registry.validateInput(def('native-translate'), 'uk|Привіт').ok).toBe(true);
  });

  test('unconfigured: down', async () => {
    expect(await statusOf('native-translate', contextOf({}))).toBe('down');
  });
});

describe('native-image-gen', () => {
  test('OpenAI images: b64_json at 1024x1024, checked to be a 1024x1024 PNG', async () => {
    const out = await call('native-image-gen', 'a watercolor lighthouse');
    expect(out).toMatchObject({ mimeType: 'image/png', width: 1024, height: 1024, provider: 'openai', model: 'dall-e-3', revisedPrompt: expect.any(String) });
    expect(readPngInfo(Buffer.from(out.image as string, 'base64'))).toMatchObject({ width: 1024, height: 1024 });
    expect(fake.posts.find((p) => p.path === '/oai/v1/images/generations')!.body).toMatchObject({ prompt: 'a watercolor lighthouse', n: 1, size: '1024x1024', response_format: 'b64_json', model: 'dall-e-3' });
  });

  test('Automatic1111 txt2img at 1024x1024', async () => {
    const out = await call('native-image-gen', 'a lighthouse', contextOf(fake.settings({ imageProvider: 'a1111', imageUrl: `${fake.url}/a1111`, imageModel: '' })));
    expect(out).toMatchObject({ width: 1024, height: 1024, provider: 'a1111', model: 'sd_xl_base_1.0' });
    expect(fake.posts.find((p) => p.path === '/a1111/sdapi/v1/txt2img')!.body).toMatchObject({ prompt: 'a lighthouse', width: 1024, height: 1024 });
  });

  test('an image of the wrong size or bytes that are no PNG are refused (provider_bad_response)', async () => {
    fake.set('oai', 'small-image');
    await expect(run('native-image-gen', 'a lighthouse')).rejects.toMatchObject({ code: 'provider_bad_response', message: expect.stringContaining('512x512') });
    fake.set('oai', 'not-png');
    await expect(run('native-image-gen', 'a lighthouse')).rejects.toMatchObject({ code: 'provider_bad_response', message: expect.stringContaining('not a PNG') });
    fake.set('a1111', 'huge');
    expect(await codeOf(run('native-image-gen', 'a lighthouse', contextOf(fake.settings({ imageProvider: 'a1111', imageUrl: `${fake.url}/a1111` }))))).toBe('provider_response_too_large');
  });

  test('unconfigured: down and refused before payment', async () => {
    const ctx = contextOf({});
    expect(await statusOf('native-image-gen', ctx)).toBe('down');
    expect(await codeOf(def('native-image-gen').precheck!(ctx, 'a lighthouse'))).toBe('provider_not_configured');
  });
});
