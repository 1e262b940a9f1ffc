/**
 * Provider answers in each provider's real wire format, written from the providers' published
 * documentation (Open-Meteo forecast and geocoding API docs, the ECB's eurofxref-daily.xml,
 * CoinGecko API v3 reference, OpenAI API reference, LibreTranslate API docs, the Automatic1111
 * web UI API). Values are test data; field names, nesting and types are the providers'.
 */
import { crc32, deflateSync } from 'node:zlib';

/** `GET /v1/search?name=Berlin&count=1&language=en&format=json` (Open-Meteo geocoding). */
export const GEOCODING_BERLIN = {
  results: [
    {
      id: 2950159,
      name: 'Berlin',
      latitude: 52.52437,
      longitude: 13.41053,
      elevation: 74.0,
      feature_code: 'PPLC',
      country_code: 'DE',
      admin1_id: 2950157,
      timezone: 'Europe/Berlin',
      population: 3426354,
      postcodes: ['10967', '13347'],
      country_id: 2921044,
      country: 'Germany',
      admin1: 'Land Berlin',
    },
  ],
  generationtime_ms: 0.9219,
};

/** Geocoding with no match: Open-Meteo leaves `results` out. */
export const GEOCODING_NONE = { generationtime_ms: 0.4 };

/** `GET /v1/forecast?…&current=…&daily=…&timezone=auto&forecast_days=3` (Open-Meteo). */
export const FORECAST_BERLIN = {
  latitude: 52.52,
  longitude: 13.419998,
  generationtime_ms: 0.0809,
  utc_offset_seconds: 3600,
  timezone: 'Europe/Berlin',
  timezone_abbreviation: 'GMT+1',
  elevation: 38.0,
  current_units: { time: 'iso8601', interval: 'seconds', temperature_2m: '°C', relative_humidity_2m: '%', apparent_temperature: '°C', precipitation: 'mm', weather_code: 'wmo code', cloud_cover: '%', wind_speed_10m: 'km/h', wind_direction_10m: '°', is_day: '' },
  current: { time: '2026-11-24T06:45', interval: 900, temperature_2m: 2.4, relative_humidity_2m: 91, apparent_temperature: -1.2, precipitation: 0.0, weather_code: 3, cloud_cover: 100, wind_speed_10m: 11.9, wind_direction_10m: 245, is_day: 0 },
  daily_units: { time: 'iso8601', weather_code: 'wmo code', temperature_2m_max: '°C', temperature_2m_min: '°C', precipitation_sum: 'mm', precipitation_probability_max: '%', wind_speed_10m_max: 'km/h', sunrise: 'iso8601', sunset: 'iso8601' },
  daily: {
    time: ['2026-11-24', '2026-11-25', '2026-11-26'],
    weather_code: [61, 3, 71],
    temperature_2m_max: [4.1, 3.2, 1.0],
    temperature_2m_min: [0.8, -0.5, -2.3],
    precipitation_sum: [2.1, 0.0, 1.4],
    precipitation_probability_max: [80, 15, 65],
    wind_speed_10m_max: [18.4, 12.0, 21.5],
    sunrise: ['2026-11-24T07:44', '2026-11-25T07:46', '2026-11-26T07:47'],
    sunset: ['2026-11-24T16:00', '2026-11-25T15:59', '2026-11-26T15:58'],
  },
};

/** Open-Meteo's error answer (HTTP 400). */
export const OPEN_METEO_ERROR = { error: true, reason: 'Latitude must be in range of -90 to 90°. Given: 100.0.' };

/** `eurofxref-daily.xml` as the ECB publishes it (EUR base; 29 currencies since BGN left in 2026). */
export const ECB_DAILY_XML = `<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
\t<gesmes:subject>Reference rates</gesmes:subject>
\t<gesmes:Sender>
\t\t<gesmes:name>European Central Bank</gesmes:name>
\t</gesmes:Sender>
\t<Cube>
\t\t<Cube time='2026-11-23'>
\t\t\t<Cube currency='USD' rate='1.1562'/>
\t\t\t<Cube currency='JPY' rate='181.06'/>
\t\t\t<Cube currency='CZK' rate='24.195'/>
\t\t\t<Cube currency='DKK' rate='7.4690'/>
\t\t\t<Cube currency='GBP' rate='0.87890'/>
\t\t\t<Cube currency='HUF' rate='383.35'/>
\t\t\t<Cube currency='PLN' rate='4.2350'/>
\t\t\t<Cube currency='RON' rate='5.0890'/>
\t\t\t<Cube currency='SEK' rate='10.9525'/>
\t\t\t<Cube currency='CHF' rate='0.9312'/>
\t\t\t<Cube currency='ISK' rate='147.60'/>
\t\t\t<Cube currency='NOK' rate='11.7105'/>
\t\t\t<Cube currency='TRY' rate='49.0312'/>
\t\t\t<Cube currency='AUD' rate='1.7801'/>
\t\t\t<Cube currency='BRL' rate='6.1874'/>
\t\t\t<Cube currency='CAD' rate='1.6270'/>
\t\t\t<Cube currency='CNY' rate='8.2190'/>
\t\t\t<Cube currency='HKD' rate='9.0018'/>
\t\t\t<Cube currency='IDR' rate='19283.41'/>
\t\t\t<Cube currency='ILS' rate='3.7780'/>
\t\t\t<Cube currency='INR' rate='102.5360'/>
\t\t\t<Cube currency='KRW' rate='1698.04'/>
\t\t\t<Cube currency='MXN' rate='21.2650'/>
\t\t\t<Cube currency='MYR' rate='4.8010'/>
\t\t\t<Cube currency='NZD' rate='2.0460'/>
\t\t\t<Cube currency='PHP' rate='68.215'/>
\t\t\t<Cube currency='SGD' rate='1.5090'/>
\t\t\t<Cube currency='THB' rate='37.420'/>
\t\t\t<Cube currency='ZAR' rate='20.1250'/>
\t\t</Cube>
\t</Cube>
</gesmes:Envelope>
`;

/** `GET /simple/price?ids=binancecoin,bitcoin,ethereum,litecoin,solana&vs_currencies=usd&include_market_cap=true&include_24hr_vol=true&include_24hr_change=true&include_last_updated_at=true`. */
export const COINGECKO_SIMPLE_PRICE = {
  binancecoin: { usd: 912.44, usd_market_cap: 127090118276.2, usd_24h_vol: 1903449128.6, usd_24h_change: -1.2033, last_updated_at: 1795934400 },
  bitcoin: { usd: 87210.12, usd_market_cap: 1739228371120.5, usd_24h_vol: 41022847561.1, usd_24h_change: 2.4519, last_updated_at: 1795934410 },
  ethereum: { usd: 2954.31, usd_market_cap: 356633920011.9, usd_24h_vol: 19402133984.3, usd_24h_change: 3.1177, last_updated_at: 1795934405 },
  litecoin: { usd: 84.02, usd_market_cap: 6431092211.4, usd_24h_vol: 512093771.8, usd_24h_change: 0.8812, last_updated_at: 1795934390 },
  solana: { usd: 139.77, usd_market_cap: 77410228871.7, usd_24h_vol: 4100238811.2, usd_24h_change: 4.9021, last_updated_at: 1795934402 },
  'usd-coin': { usd: 0.999912, usd_market_cap: 75902113220.1, usd_24h_vol: 9012239012.8, usd_24h_change: 0.0021, last_updated_at: 1795934399 },
};

/** `GET /global`. */
export const COINGECKO_GLOBAL = {
  data: {
    active_cryptocurrencies: 18422,
    upcoming_icos: 0,
    ongoing_icos: 49,
    ended_icos: 3376,
    markets: 1297,
    total_market_cap: { btc: 35812331.4, eth: 1057311290.2, usd: 3123402188321.7, eur: 2701402188321.1 },
    total_volume: { btc: 1312033.1, eth: 38722910.8, usd: 114402310882.2, eur: 98942310882.9 },
    market_cap_percentage: { btc: 55.68, eth: 11.41, usdt: 5.92 },
    market_cap_change_percentage_24h_usd: 2.0134,
    updated_at: 1795934400,
  },
};

/** `GET /ping`. */
export const COINGECKO_PING = { gecko_says: '(V3) To the Moon!' };

/** CoinGecko's rate-limit answer (HTTP 429). */
export const COINGECKO_429 = { status: { error_code: 429, error_message: "You've exceeded the Rate Limit. Please visit https://www.coingecko.com/en/api/pricing to subscribe to our API plans for higher rate limits." } };

/** `POST /v1/chat/completions` (OpenAI). */
export function chatCompletion(content: string, model = 'test-model') {
  return {
    id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
    object: 'chat.completion',
    created: 1795934400,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 19, completion_tokens: 10, total_tokens: 29 },
    system_fingerprint: 'fp_test',
  };
}

/** `GET /v1/models` (OpenAI). */
export function modelList(...ids: string[]) {
  return { object: 'list', data: ids.map((id) => ({ id, object: 'model', created: 1686935002, owned_by: 'organization-owner' })) };
}

/** OpenAI's error answer. */
export const OPENAI_ERROR = { error: { message: 'The server is overloaded. Please try again later.', type: 'server_error', param: null, code: null } };

/** `POST /v1/images/generations` with `response_format: b64_json` (OpenAI). */
export function imagesAnswer(b64: string) {
  return { created: 1795934400, data: [{ b64_json: b64, revised_prompt: 'A watercolor lighthouse at dusk, soft light.' }] };
}

/** `GET /languages` (LibreTranslate). */
export const LIBRE_LANGUAGES = [
  { code: 'en', name: 'English', targets: ['de', 'es', 'fr', 'zh-Hans'] },
  { code: 'de', name: 'German', targets: ['en', 'es', 'fr', 'zh-Hans'] },
  { code: 'es', name: 'Spanish', targets: ['de', 'en', 'fr', 'zh-Hans'] },
  { code: 'fr', name: 'French', targets: ['de', 'en', 'es', 'zh-Hans'] },
  { code: 'zh-Hans', name: 'Chinese', targets: ['de', 'en', 'es', 'fr'] },
];

/** `POST /translate` with `source: auto` (LibreTranslate). */
export function libreTranslation(text: string) {
  return { translatedText: text, detectedLanguage: { confidence: 90.0, language: 'en' } };
}

/** `POST /sdapi/v1/txt2img` (Automatic1111 web UI API). */
export function txt2imgAnswer(b64: string) {
  return {
    images: [b64],
    parameters: { prompt: 'a lighthouse', width: 1024, height: 1024, steps: 25, batch_size: 1, n_iter: 1 },
    info: JSON.stringify({ prompt: 'a lighthouse', all_prompts: ['a lighthouse'], seed: 1234567, width: 1024, height: 1024, sd_model_name: 'sd_xl_base_1.0', sd_model_hash: '31e35c80fc' }),
  };
}

/** `GET /sdapi/v1/sd-models`. */
export const A1111_MODELS = [{ title: 'sd_xl_base_1.0.safetensors [31e35c80fc]', model_name: 'sd_xl_base_1.0', hash: '31e35c80fc', filename: '/models/Stable-diffusion/sd_xl_base_1.0.safetensors' }];

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** A real PNG of `width`×`height` (8-bit grayscale, a gradient), built with zlib. */
export function makePng(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // grayscale
  const raw = Buffer.alloc((width + 1) * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) raw[y * (width + 1) + 1 + x] = (x + y) & 0xff;
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', new Uint8Array())]);
}
