/**
 * The service catalog: the 58 services of the spec, listed by import in the spec's table order
 * (no directory globbing), and `createServiceRegistry()` over them. Services whose
 * implementation needs providers or chain features that do not exist yet have no `run`: the
 * registry reports them unavailable (503 `service_unavailable`, health `down`).
 */
import { createRegistryOf, type ServiceRegistry } from './registry.js';
import type { ServiceDefinition } from './types.js';
import { tokenAudit } from './token-audit.js';
import { priceFeed } from './price-feed.js';
import { imageGen } from './image-gen.js';
import { marketSummary } from './market-summary.js';
import { cryptoPrices } from './crypto-prices.js';
import { swapQuote } from './swap-quote.js';
import { walletPortfolio } from './wallet-portfolio.js';
import { llmChat } from './llm-chat.js';
import { addressValidator } from './address-validator.js';
import { geoIp } from './geo-ip.js';
import { worldClock } from './world-clock.js';
import { networkStats } from './network-stats.js';
import { gasTracker } from './gas-tracker.js';
import { stableHealth } from './stable-health.js';
import { supplyAudit } from './supply-audit.js';
import { tokenLaunchCheck } from './token-launch-check.js';
import { poolAnalytics } from './pool-analytics.js';
import { priceHistory } from './price-history.js';
import { arbScan } from './arb-scan.js';
import { marketReport } from './market-report.js';
import { holderStats } from './holder-stats.js';
import { stakingRewards } from './staking-rewards.js';
import { whaleWatch } from './whale-watch.js';
import { txLookup } from './tx-lookup.js';
import { blockInspect } from './block-inspect.js';
import { explorerSummary } from './explorer-summary.js';
import { bridgeStatus } from './bridge-status.js';
import { agentRoster } from './agent-roster.js';
import { serviceSearch } from './service-search.js';
import { webFetch } from './web-fetch.js';
import { urlMeta } from './url-meta.js';
import { webSearch } from './web-search.js';
import { rssRead } from './rss-read.js';
import { domainInfo } from './domain-info.js';
import { weather } from './weather.js';
import { fxRates } from './fx-rates.js';
import { emailValidate } from './email-validate.js';
import { translate } from './translate.js';
import { summarize } from './summarize.js';
import { sentiment } from './sentiment.js';
import { keywords } from './keywords.js';
import { cryptoPrice } from './crypto-price.js';
import { gasPrice } from './gas-price.js';
import { evmBalance } from './evm-balance.js';
import { ensResolve } from './ens-resolve.js';
import { x402Validation } from './x402-validation.js';
import { invoicePdf } from './invoice-pdf.js';
import { invoiceProforma } from './invoice-proforma.js';
import { receiptPayment } from './receipt-payment.js';
import { creditNote } from './credit-note.js';
import { quoteEstimate } from './quote-estimate.js';
import { cryptoPriceFeed } from './crypto-price-feed.js';
import { b2bComplianceReport } from './b2b-compliance-report.js';
import { bridgeRouteCheck } from './bridge-route-check.js';
import { riskScore } from './risk-score.js';
import { cryptoWhaleWatch } from './crypto-whale-watch.js';
import { cryptoPortfolioTracker } from './crypto-portfolio-tracker.js';
import { amlSanctionsScan } from './aml-sanctions-scan.js';

/** Every service of the catalog, in the spec's table order. */
export const CATALOG: readonly ServiceDefinition[] = Object.freeze([
  tokenAudit,
  priceFeed,
  imageGen,
  marketSummary,
  cryptoPrices,
  swapQuote,
  walletPortfolio,
  llmChat,
  addressValidator,
  geoIp,
  worldClock,
  networkStats,
  gasTracker,
  stableHealth,
  supplyAudit,
  tokenLaunchCheck,
  poolAnalytics,
  priceHistory,
  arbScan,
  marketReport,
  holderStats,
  stakingRewards,
  whaleWatch,
  txLookup,
  blockInspect,
  explorerSummary,
  bridgeStatus,
  agentRoster,
  serviceSearch,
  webFetch,
  urlMeta,
  webSearch,
  rssRead,
  domainInfo,
  weather,
  fxRates,
  emailValidate,
  translate,
  summarize,
  sentiment,
  keywords,
  cryptoPrice,
  gasPrice,
  evmBalance,
  ensResolve,
  x402Validation,
  invoicePdf,
  invoiceProforma,
  receiptPayment,
  creditNote,
  quoteEstimate,
  cryptoPriceFeed,
  b2bComplianceReport,
  bridgeRouteCheck,
  riskScore,
  cryptoWhaleWatch,
  cryptoPortfolioTracker,
  amlSanctionsScan,
]);

/**
 * The registry over the catalog (or over `defs`, for tests and tools); throws on duplicate ids or
 * invalid schemas. The catalog's schemas are compiled at first use (a node start need not pay for
 * 58 of them; test/services/registry.test.ts compiles every one).
 */
export function createServiceRegistry(defs?: readonly ServiceDefinition[]): ServiceRegistry {
  return defs ? createRegistryOf(defs) : createRegistryOf(CATALOG, { compileAtCreation: false });
}

export { INVALID_REQUEST, type InputValidation, type InvalidRequest, type ServiceRegistry } from './registry.js';
export { executeService, ServiceExecErrorCode } from './execute.js';
export { NODE_AGENT } from './define.js';
export * from './types.js';
