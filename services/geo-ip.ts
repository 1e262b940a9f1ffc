/**
 * native-geo-ip: country (code and name), region, city, latitude/longitude, time zone, ASN and
 * organization of a public IPv4 or IPv6 address from the geo-IP data pack
 * (services/identity/geoip.ts, loaded at the first lookup of each family); private and other
 * special-purpose addresses are answered as what they are. Without the pack the service is
 * `down` and refuses calls before any quote (503 `service_unavailable`, reason
 * `geoip_data_missing`, saying how to install it).
 */
import { defineService } from './define.js';
import { GEOIP_DATA_MISSING_CODE, GEOIP_MISSING, geoIpDataInstalled, locateIp } from './identity/geoip.js';
import { ServiceError } from './types.js';

/** native-geo-ip. */
export const geoIp = defineService({
  id: 'native-geo-ip',
  name: 'Geo IP',
  category: 'compute',
  priceBase: 300_000n,
  description: 'country, city, latitude/longitude, ASN, organization, timezone',
  tags: ['geoip', 'ip', 'geolocation', 'country', 'city', 'asn', 'timezone'],
  requestFormat: 'IPv4 or IPv6 address',
  requestRequired: false,
  needsInput: true,
  inputSchema: { type: 'string', maxLength: 45, pattern: '^[0-9A-Fa-f:.]+$', 'x-ip': true, description: 'IPv4 or IPv6 address.' },
  // The first lookup of a family reads its data (about 1 s on a loaded machine).
  timeoutMs: 15_000,
  precheck: async () => {
    if (!geoIpDataInstalled()) throw new ServiceError(GEOIP_DATA_MISSING_CODE, GEOIP_MISSING);
  },
  run: async (_ctx, input) => locateIp(input as string),
  health: async () => (geoIpDataInstalled() ? 'active' : { status: 'down', reason: { code: GEOIP_DATA_MISSING_CODE, message: GEOIP_MISSING } }),
});
