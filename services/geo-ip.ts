/** native-geo-ip: country, city, latitude/longitude, ASN, organization, timezone. Not runnable yet: it needs a geolocation provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';

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
  inputSchema: { type: 'string', maxLength: 45, pattern: '^[0-9A-Fa-f:.]+$', 'x-ip': true, description: 'IPv4 or IPv6 address.' },
});
