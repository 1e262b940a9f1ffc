/**
 * native-domain-info: RDAP lookup of a domain (registrar, creation/update/expiry dates,
 * nameservers, status, DNSSEC) at its registry's RDAP server, found through the IANA bootstrap
 * registry kept in the repository (services/web/rdapBootstrap.json, refreshed with
 * `native-node rdap-bootstrap`; `rdapBootstrapFile` points at another copy). A TLD without an
 * RDAP server is refused before payment; an unregistered domain is a result (`registered:
 * false`, the registry's 404); a failing registry refunds the caller.
 */
import { defineService, EXTERNAL_TIMEOUT_MS } from './define.js';
import { createProviderMonitor } from './outbound/providerHealth.js';
import { refuseInput } from './outbound/index.js';
import { ServiceError, type ServiceContext } from './types.js';
import { asServiceError, outboundOf } from './web/readable.js';
import { loadBootstrap, lookupDomain, normaliseDomain, type RdapBootstrap } from './web/rdap.js';

function bootstrapOf(ctx: Pick<ServiceContext, 'providers'>): RdapBootstrap {
  const file = ctx.providers?.rdapBootstrapFile;
  try {
    return loadBootstrap(typeof file === 'string' && file ? file : undefined);
  } catch (e) {
    throw new ServiceError('provider_not_configured', `the RDAP bootstrap registry cannot be read: ${(e as Error).message}`);
  }
}

const rdapMonitor = createProviderMonitor({
  name: 'RDAP',
  configured: (ctx) => {
    try {
      bootstrapOf(ctx);
      return true;
    } catch {
      return false;
    }
  },
  // RFC 9082 §3.1.6: every RDAP server answers `help`; no domain is looked up by a probe.
  probe: async (ctx) => {
    const res = await ctx.outbound!.fetchProvider({ url: new URL('help', bootstrapOf(ctx).probeServer).href, signal: ctx.signal, headers: { accept: 'application/rdap+json' }, maxBytes: 256 * 1024, timeoutMs: 5000 });
    if (res.status < 200 || res.status >= 300) throw new ServiceError('provider_error', `RDAP help answered HTTP ${res.status}`);
  },
});

/** The domain and its RDAP server, or the refusal of an input that cannot be looked up. */
function target(ctx: ServiceContext, input: unknown): { domain: string; server: string } {
  const domain = typeof input === 'string' ? normaliseDomain(input) : undefined;
  if (!domain) throw refuseInput('invalid_request', 'a domain name is required, e.g. example.com');
  const server = bootstrapOf(ctx).serverFor(domain);
  if (!server) throw refuseInput('tld_not_supported', `.${domain.split('.').pop()} has no RDAP server in the IANA bootstrap registry`);
  return { domain, server };
}

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
  needsInput: true,
  inputSchema: { type: 'string', maxLength: 253, pattern: '^(?=.{1,253}$)([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+([A-Za-z]{2,63}|[Xx][Nn]--[A-Za-z0-9-]{1,59})\\.?$', description: 'Domain name, e.g. example.com.' },
  timeoutMs: EXTERNAL_TIMEOUT_MS,
  precheck: async (ctx, input) => {
    target(ctx, input);
    rdapMonitor.assertAvailable(ctx);
  },
  health: rdapMonitor.check,
  run: async (ctx, input) => {
    const { domain, server } = target(ctx, input);
    const outbound = outboundOf(ctx);
    const info = await rdapMonitor.track(ctx, () => lookupDomain(outbound, server, domain, ctx.signal)).catch(asServiceError);
    return { ...info, bootstrapPublication: bootstrapOf(ctx).publication };
  },
});
