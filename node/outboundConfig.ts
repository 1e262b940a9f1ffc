/**
 * Settings of the outbound client (group `outbound`) and of the web services' providers (group
 * `provider`), declared like every other option and spread into `CONFIG_OPTIONS` (node/config.ts).
 * `resolveConfig` collects the `outbound` group into `NodeConfig.outbound` (the client's
 * options) and every `provider` option into `NodeConfig.providers`, which services read as
 * `ctx.providers`. Another provider file adds its options with `group: 'provider'` the same way.
 */
import { defaultOutboundOptions, type OutboundOptions } from '../services/outbound/client.js';
import type { ConfigLayer, ConfigOption } from './configOption.js';
import { NODE_VERSION } from './version.js';

/** User-Agent of outbound requests unless `outboundUserAgent` is set. */
export const DEFAULT_USER_AGENT = `native-node/${NODE_VERSION} (x402 service node)`;

/** Brave Search's web search endpoint (used when `braveSearchKey` is set). */
export const BRAVE_SEARCH_URL = 'https://api.search.brave.com/res/v1/web/search';

const url = { type: 'string', minLength: 8, maxLength: 2048, pattern: '^[hH][tT][tT][pP][sS]?://' };

/** The outbound client's options and the web services' providers. */
export const OUTBOUND_CONFIG_OPTIONS: readonly ConfigOption[] = [
  { key: 'outboundTimeout', flag: 'outbound-timeout', env: 'NATIVE_OUTBOUND_TIMEOUT', kind: 'integer', group: 'outbound', default: defaultOutboundOptions.timeoutMs, schema: { type: 'integer', minimum: 100, maximum: 120_000 }, description: 'default total time of one outbound request (redirects and body included), ms', defaultText: String(defaultOutboundOptions.timeoutMs) },
  { key: 'outboundConnectTimeout', flag: 'outbound-connect-timeout', env: 'NATIVE_OUTBOUND_CONNECT_TIMEOUT', kind: 'integer', group: 'outbound', default: defaultOutboundOptions.connectTimeoutMs, schema: { type: 'integer', minimum: 100, maximum: 60_000 }, description: 'time to resolve and connect to an outbound host, ms', defaultText: String(defaultOutboundOptions.connectTimeoutMs) },
  { key: 'outboundMaxBytes', flag: 'outbound-max-bytes', env: 'NATIVE_OUTBOUND_MAX_BYTES', kind: 'integer', group: 'outbound', default: defaultOutboundOptions.maxBytes, schema: { type: 'integer', minimum: 1024, maximum: 64 * 1024 * 1024 }, description: 'default cap of an outbound response body (decoded), bytes', defaultText: String(defaultOutboundOptions.maxBytes) },
  { key: 'outboundMaxRedirects', flag: 'outbound-max-redirects', env: 'NATIVE_OUTBOUND_MAX_REDIRECTS', kind: 'integer', group: 'outbound', default: defaultOutboundOptions.maxRedirects, schema: { type: 'integer', minimum: 0, maximum: 20 }, description: 'redirects an outbound request follows', defaultText: String(defaultOutboundOptions.maxRedirects) },
  { key: 'outboundHostConcurrency', flag: 'outbound-host-concurrency', env: 'NATIVE_OUTBOUND_HOST_CONCURRENCY', kind: 'integer', group: 'outbound', default: defaultOutboundOptions.hostConcurrency, schema: { type: 'integer', minimum: 1, maximum: 256 }, description: 'outbound requests in flight per host (others wait)', defaultText: String(defaultOutboundOptions.hostConcurrency) },
  { key: 'outboundUserAgent', flag: 'outbound-user-agent', env: 'NATIVE_OUTBOUND_USER_AGENT', kind: 'string', group: 'outbound', schema: { type: 'string', minLength: 1, maxLength: 256, pattern: '^[\\x20-\\x7e]+$' }, description: 'User-Agent of outbound requests (add a contact URL)', defaultText: DEFAULT_USER_AGENT },
  { key: 'searxngUrl', flag: 'searxng-url', env: 'NATIVE_SEARXNG_URL', kind: 'string', group: 'provider', schema: url, description: 'SearXNG instance for native-web-search (its JSON API must be enabled)', defaultText: 'none' },
  { key: 'braveSearchKey', flag: 'brave-search-key', env: 'NATIVE_BRAVE_SEARCH_KEY', kind: 'string', group: 'provider', schema: { type: 'string', minLength: 1, maxLength: 256 }, description: 'Brave Search API key for native-web-search (used when no SearXNG is set)', defaultText: 'none' },
  { key: 'braveSearchUrl', flag: 'brave-search-url', env: 'NATIVE_BRAVE_SEARCH_URL', kind: 'string', group: 'provider', default: BRAVE_SEARCH_URL, schema: url, description: 'Brave Search web endpoint', defaultText: BRAVE_SEARCH_URL },
  { key: 'rdapBootstrapFile', flag: 'rdap-bootstrap-file', env: 'NATIVE_RDAP_BOOTSTRAP_FILE', kind: 'string', group: 'provider', schema: { type: 'string', minLength: 1, maxLength: 4096 }, description: 'IANA RDAP bootstrap registry (dns.json) of native-domain-info', defaultText: 'the snapshot shipped in services/web/rdapBootstrap.json' },
];

/** The outbound client's options from a merged config layer (options of group `outbound`). */
export function outboundOptionsOf(merged: ConfigLayer): OutboundOptions {
  return {
    ...defaultOutboundOptions,
    userAgent: (merged.outboundUserAgent as string | undefined) ?? DEFAULT_USER_AGENT,
    timeoutMs: merged.outboundTimeout as number,
    connectTimeoutMs: merged.outboundConnectTimeout as number,
    maxBytes: merged.outboundMaxBytes as number,
    maxRedirects: merged.outboundMaxRedirects as number,
    hostConcurrency: merged.outboundHostConcurrency as number,
  };
}
