/**
 * Open-Meteo: geocoding (`/v1/search`) and forecast (`/v1/forecast`, current conditions plus a
 * 3-day daily forecast), as documented at open-meteo.com/en/docs and /en/docs/geocoding-api.
 * The free API is for non-commercial use; a commercial node sets the customer URLs and `apiKey`.
 */
import { z } from 'zod';
import type { OutboundClient } from '../outbound/types.js';
import { ServiceError } from '../types.js';
import { ProviderCallErrorCode, providerJson } from './call.js';
import type { WeatherProviderOptions } from './options.js';

const PROVIDER = 'Open-Meteo';

/** A place found by the geocoder. */
export interface Place {
  readonly name: string;
  readonly latitude: number;
  readonly longitude: number;
  readonly country?: string;
  readonly countryCode?: string;
  readonly admin1?: string;
  readonly timezone?: string;
  readonly population?: number;
}

/** The current-conditions variables asked for, in this order. */
export const CURRENT_VARS = ['temperature_2m', 'relative_humidity_2m', 'apparent_temperature', 'precipitation', 'weather_code', 'cloud_cover', 'wind_speed_10m', 'wind_direction_10m', 'is_day'] as const;
/** The daily variables asked for. */
export const DAILY_VARS = ['weather_code', 'temperature_2m_max', 'temperature_2m_min', 'precipitation_sum', 'precipitation_probability_max', 'wind_speed_10m_max', 'sunrise', 'sunset'] as const;
/** Days of forecast (today included). */
export const FORECAST_DAYS = 3;

const num = z.number().finite();
const geocodingSchema = z.object({
  results: z
    .array(
      z.object({
        name: z.string(),
        latitude: num,
        longitude: num,
        country: z.string().optional(),
        country_code: z.string().optional(),
        admin1: z.string().optional(),
        timezone: z.string().optional(),
        population: num.optional(),
      }),
    )
    .optional(),
});

const series = z.array(z.union([num, z.string(), z.null()]));
const forecastSchema = z.object({
  latitude: num,
  longitude: num,
  elevation: num.optional(),
  timezone: z.string(),
  timezone_abbreviation: z.string().optional(),
  utc_offset_seconds: num,
  current_units: z.record(z.string(), z.string()),
  current: z.record(z.string(), z.union([num, z.string(), z.null()])),
  daily_units: z.record(z.string(), z.string()),
  daily: z.record(z.string(), series).refine((d) => Array.isArray(d.time) && d.time.length > 0, 'daily.time is missing'),
});

/** The forecast document as Open-Meteo sends it (checked shape). */
export type Forecast = z.infer<typeof forecastSchema>;

/** The Open-Meteo adapter. */
export interface OpenMeteo {
  /** Best match of a city name (optionally narrowed by a country code or name); `provider_not_found` when none. */
  geocode(name: string, country: string | undefined, signal?: AbortSignal): Promise<Place>;
  /** Current conditions and the 3-day daily forecast at a point, in the point's local time zone. */
  forecast(latitude: number, longitude: number, signal?: AbortSignal): Promise<Forecast>;
  /** Cheap health probe (one geocoding lookup). */
  probe(signal?: AbortSignal): Promise<void>;
}

/** Creates the adapter over the outbound client. */
export function createOpenMeteo(opts: WeatherProviderOptions, outbound: OutboundClient): OpenMeteo {
  const withKey = (u: URL) => {
    if (opts.apiKey) u.searchParams.set('apikey', opts.apiKey);
    return u.toString();
  };
  const search = async (name: string, count: number, countryCode: string | undefined, signal?: AbortSignal) => {
    const u = new URL(opts.geocodingUrl);
    u.searchParams.set('name', name);
    u.searchParams.set('count', String(count));
    u.searchParams.set('language', 'en');
    u.searchParams.set('format', 'json');
    if (countryCode) u.searchParams.set('countryCode', countryCode);
    // Places do not move: a day of cache spares the provider repeated lookups of popular cities.
    const doc = await providerJson(outbound, PROVIDER, { url: withKey(u), signal, cacheTtlMs: 86_400_000, maxBytes: 256 * 1024 }, geocodingSchema);
    return doc.results ?? [];
  };
  return {
    async geocode(name, country, signal) {
      const code = country && /^[A-Za-z]{2}$/.test(country) ? country.toUpperCase() : undefined;
      const results = await search(name, code || !country ? 1 : 10, code, signal);
      const wanted = country?.toLowerCase();
      const hit = code || !wanted ? results[0] : results.find((r) => r.country?.toLowerCase() === wanted || r.admin1?.toLowerCase() === wanted);
      if (!hit) throw new ServiceError(ProviderCallErrorCode.NOT_FOUND, `no place named "${name}"${country ? ` in ${country}` : ''} is known to the geocoder`);
      return { name: hit.name, latitude: hit.latitude, longitude: hit.longitude, country: hit.country, countryCode: hit.country_code, admin1: hit.admin1, timezone: hit.timezone, population: hit.population };
    },
    async forecast(latitude, longitude, signal) {
      const u = new URL(opts.forecastUrl);
      u.searchParams.set('latitude', String(latitude));
      u.searchParams.set('longitude', String(longitude));
      u.searchParams.set('current', CURRENT_VARS.join(','));
      u.searchParams.set('daily', DAILY_VARS.join(','));
      u.searchParams.set('timezone', 'auto');
      u.searchParams.set('forecast_days', String(FORECAST_DAYS));
      // Open-Meteo refreshes current conditions every 15 minutes: a minute of cache is harmless.
      return providerJson(outbound, PROVIDER, { url: withKey(u), signal, cacheTtlMs: 60_000, maxBytes: 256 * 1024 }, forecastSchema);
    },
    async probe(signal) {
      await search('Berlin', 1, undefined, signal);
    },
  };
}

/** WMO weather interpretation codes (the `weather_code` variable) in words. */
export const WMO_CODES: Readonly<Record<number, string>> = Object.freeze({
  0: 'clear sky',
  1: 'mainly clear',
  2: 'partly cloudy',
  3: 'overcast',
  45: 'fog',
  48: 'depositing rime fog',
  51: 'light drizzle',
  53: 'moderate drizzle',
  55: 'dense drizzle',
  56: 'light freezing drizzle',
  57: 'dense freezing drizzle',
  61: 'slight rain',
  63: 'moderate rain',
  65: 'heavy rain',
  66: 'light freezing rain',
  67: 'heavy freezing rain',
  71: 'slight snow fall',
  73: 'moderate snow fall',
  75: 'heavy snow fall',
  77: 'snow grains',
  80: 'slight rain showers',
  81: 'moderate rain showers',
  82: 'violent rain showers',
  85: 'slight snow showers',
  86: 'heavy snow showers',
  95: 'thunderstorm',
  96: 'thunderstorm with slight hail',
  99: 'thunderstorm with heavy hail',
});
