/** native-weather: current weather plus a 3-day forecast from Open-Meteo, for a city name or latitude,longitude. */
import { defineService, EXTERNAL_TIMEOUT_MS } from './define.js';
import { callProvider, providersHealth, providersReady } from './providers/index.js';
import { FORECAST_DAYS, WMO_CODES, type Forecast, type Place } from './providers/openMeteo.js';
import type { ServiceContext } from './types.js';

/** Place used when the request is empty. */
export const DEFAULT_PLACE = 'Berlin';

const COORDS = /^([-+]?\d{1,2}(?:\.\d+)?)\s*,\s*([-+]?\d{1,3}(?:\.\d+)?)$/;

const numOrNull = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const strOrNull = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const conditions = (code: number | null) => (code === null ? null : (WMO_CODES[code] ?? `weather code ${code}`));

function current(f: Forecast) {
  const c = f.current;
  const code = numOrNull(c.weather_code);
  return {
    time: strOrNull(c.time),
    temperatureC: numOrNull(c.temperature_2m),
    apparentTemperatureC: numOrNull(c.apparent_temperature),
    relativeHumidityPct: numOrNull(c.relative_humidity_2m),
    precipitationMm: numOrNull(c.precipitation),
    cloudCoverPct: numOrNull(c.cloud_cover),
    windSpeedKmh: numOrNull(c.wind_speed_10m),
    windDirectionDeg: numOrNull(c.wind_direction_10m),
    isDay: c.is_day === undefined || c.is_day === null ? null : c.is_day === 1,
    weatherCode: code,
    conditions: conditions(code),
  };
}

function daily(f: Forecast) {
  const d = f.daily;
  const at = (k: string, i: number) => d[k]?.[i];
  return (d.time ?? []).slice(0, FORECAST_DAYS).map((date, i) => {
    const code = numOrNull(at('weather_code', i));
    return {
      date: strOrNull(date),
      weatherCode: code,
      conditions: conditions(code),
      temperatureMaxC: numOrNull(at('temperature_2m_max', i)),
      temperatureMinC: numOrNull(at('temperature_2m_min', i)),
      precipitationMm: numOrNull(at('precipitation_sum', i)),
      precipitationProbabilityPct: numOrNull(at('precipitation_probability_max', i)),
      windSpeedMaxKmh: numOrNull(at('wind_speed_10m_max', i)),
      sunrise: strOrNull(at('sunrise', i)),
      sunset: strOrNull(at('sunset', i)),
    };
  });
}

async function run(ctx: ServiceContext, input: unknown) {
  const text = typeof input === 'string' && input !== '' ? input : DEFAULT_PLACE;
  const coords = COORDS.exec(text);
  return callProvider(ctx, 'weather', async (p) => {
    let place: Place | undefined;
    let lat: number;
    let lon: number;
    if (coords) {
      lat = Number(coords[1]);
      lon = Number(coords[2]);
    } else {
      const [name, country] = text.split(',').map((s) => s.trim());
      place = await p.weather.geocode(name, country || undefined, ctx.signal);
      lat = place.latitude;
      lon = place.longitude;
    }
    const f = await p.weather.forecast(lat, lon, ctx.signal);
    return {
      query: text,
      location: {
        name: place?.name ?? null,
        admin1: place?.admin1 ?? null,
        country: place?.country ?? null,
        countryCode: place?.countryCode ?? null,
        latitude: f.latitude,
        longitude: f.longitude,
        elevationM: f.elevation ?? null,
        timezone: f.timezone,
        timezoneAbbreviation: f.timezone_abbreviation ?? null,
        utcOffsetSeconds: f.utc_offset_seconds,
      },
      current: current(f),
      forecast: daily(f),
      units: { temperature: '°C', precipitation: 'mm', windSpeed: 'km/h', windDirection: '°', humidity: '%' },
      source: { provider: 'Open-Meteo', url: 'https://open-meteo.com', licence: 'CC BY 4.0 (weather data by Open-Meteo.com)' },
    };
  });
}

/** native-weather. */
export const weather = defineService({
  id: 'native-weather',
  name: 'Weather',
  category: 'reports',
  priceBase: 300_000n,
  description: 'current weather plus 3-day forecast',
  tags: ['weather', 'forecast', 'temperature', 'city', 'climate'],
  requestFormat: `city name (e.g. Berlin or "Paris, FR") or latitude,longitude (e.g. 52.52,13.40); empty: ${DEFAULT_PLACE}`,
  requestRequired: false,
  inputSchema: { type: 'string', maxLength: 100, pattern: '^([-+]?(90(\\.0+)?|[0-8]?[0-9](\\.[0-9]+)?)\\s*,\\s*[-+]?(180(\\.0+)?|(1[0-7][0-9]|[0-9]?[0-9])(\\.[0-9]+)?)|\\p{L}[\\p{L}\\p{M} .\'’-]{0,79}(,\\s*\\p{L}[\\p{L}\\p{M} .\'’-]{0,40})?)$', description: 'City name or latitude,longitude.' },
  timeoutMs: EXTERNAL_TIMEOUT_MS,
  run,
  health: providersHealth('weather'),
  precheck: providersReady('weather'),
});
