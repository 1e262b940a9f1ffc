/**
 * native-web-search: top web results (title, URL, snippet, host, date) from the provider the
 * operator configured: a SearXNG instance (`searxngUrl`) or the Brave Search API
 * (`braveSearchKey`). With neither, or while the provider fails, the service is `down` and
 * answers 503 before any payment; a provider failure after payment refunds the caller.
 */
import { defineService, EXTERNAL_TIMEOUT_MS } from './define.js';
import { textInput } from './inputs.js';
import { refuseInput } from './outbound/index.js';
import { ServiceError, type HealthReport, type LiveHealth, type ServiceContext } from './types.js';
import { asServiceError, outboundOf } from './web/readable.js';
import { searchProviderOf } from './web/search.js';

const NOT_CONFIGURED = { status: 'down', latencyMs: 0, reason: { code: 'provider_not_configured', message: 'no web search provider is configured on this node' } } as const;

/** native-web-search. */
export const webSearch = defineService({
  id: 'native-web-search',
  name: 'Web Search',
  category: 'search',
  priceBase: 800_000n,
  description: 'top web results with title, URL, snippet, host, date',
  tags: ['web', 'search', 'results', 'query', 'internet'],
  requestFormat: 'search query (up to 300 characters)',
  requestRequired: false,
  needsInput: true,
  inputSchema: textInput('Search query.', 300),
  timeoutMs: EXTERNAL_TIMEOUT_MS,
  precheck: async (ctx, input) => {
    if (typeof input !== 'string') throw refuseInput('invalid_request', 'a search query is required');
    const provider = searchProviderOf(ctx);
    if (!provider) throw new ServiceError('provider_not_configured', 'no web search provider is configured on this node');
    provider.monitor.assertAvailable(ctx);
  },
  health: Object.assign(async (ctx: ServiceContext): Promise<HealthReport> => searchProviderOf(ctx)?.monitor.health(ctx) ?? NOT_CONFIGURED, {
    current: (ctx: Omit<ServiceContext, 'signal'>): LiveHealth | undefined => {
      const provider = searchProviderOf(ctx);
      return provider ? provider.monitor.current(ctx) : { ...NOT_CONFIGURED, lastVerifiedAt: ctx.now() };
    },
  }),
  run: async (ctx, input) => {
    const provider = searchProviderOf(ctx);
    if (!provider) throw new ServiceError('provider_not_configured', 'no web search provider is configured on this node');
    const query = input as string;
    const outbound = outboundOf(ctx);
    const results = await provider.monitor.track(ctx, () => provider.search(outbound, query, ctx.signal)).catch(asServiceError);
    return { query, provider: provider.name, results };
  },
});
