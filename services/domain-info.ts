/** native-domain-info: RDAP lookup: registrar, dates, nameservers, status. Not runnable yet: it needs an RDAP client (the node answers 503 service_unavailable). */
import { defineService } from './define.js';

/** native-domain-info. */
export const domainInfo = defineService({
  id: 'native-domain-info',
  name: 'Domain Info',
  category: 'reports',
  priceBase: 400_000n,
  description: 'RDAP lookup: registrar, dates, nameservers, status',
  tags: ['domain', 'rdap', 'whois', 'registrar', 'nameservers', 'dns'],
  requestFormat: 'domain name, e.g. example.com',
  requestRequired: false,
  inputSchema: { type: 'string', maxLength: 253, pattern: '^(?=.{1,253}$)([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+([A-Za-z]{2,63}|[Xx][Nn]--[A-Za-z0-9-]{1,59})\\.?$', description: 'Domain name, e.g. example.com.' },
});
