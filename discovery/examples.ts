/**
 * Example calls of the services, shown to people (the marketplace page) and agents
 * (`/services.json`, llms.txt, OpenAPI): a valid example request per service, and copyable
 * curl and CLI lines. A test passes every example through the registry's input check.
 */
import type { ServiceDefinition } from '../services/types.js';
import { BASE_USDC } from '../x402/core/quote.js';

// ---------------------------------------------------------------------------------------------
// Example calls

/** An EVM address that passes every checksum (Base's USDC contract): examples only. */
const SAMPLE_EVM = BASE_USDC.asset;
const SAMPLE_TEXT = 'The node settled my payment in one block and the result was exactly what I needed.';
const sampleItems = [{ description: 'Consulting, one hour', qty: 2, unitPrice: 120 }];

/** Example `request` values: a string, or a function of the node (its payee address is a valid address of its network). */
const EXAMPLES: Readonly<Record<string, string | ((n: { payTo?: string }) => string | undefined)>> = {
  'native-token-audit': 'USDN',
  'native-image-gen': 'a lighthouse at dawn, watercolor',
  'native-swap-quote': '100 NATIVE -> USDN',
  'native-wallet-portfolio': (n) => n.payTo,
  'native-llm-chat': 'Explain proof of work in one sentence.',
  'native-address-validator': (n) => n.payTo ?? SAMPLE_EVM,
  'native-geo-ip': '8.8.8.8',
  'native-world-clock': 'Europe/Berlin',
  'native-supply-audit': 'USDN',
  'native-token-launch-check': 'SILVR|Silver Token|8|21000000',
  'native-pool-analytics': 'NATIVE/USDN',
  'native-holder-stats': 'USDN',
  'native-staking-rewards': '1000',
  'native-whale-watch': '1000',
  'native-block-inspect': '1',
  'native-service-search': 'gas fees',
  'native-web-fetch': 'https://example.com',
  'native-url-meta': 'https://example.com',
  'native-web-search': 'x402 agent payments',
  'native-rss-read': 'https://example.com/feed.xml',
  'native-domain-info': 'example.com',
  'native-weather': 'Berlin',
  'native-fx-rates': '100 EUR to USD',
  'native-email-validate': 'alice@example.com',
  'native-translate': 'de|Hello world',
  'native-summarize': 'Proof of work chains order transactions by accumulated work. Miners race to find a block hash under a target; the network adjusts that target so blocks arrive at a steady pace. Paid services on this node settle in one such block, about three seconds.',
  'native-sentiment': SAMPLE_TEXT,
  'native-keywords': SAMPLE_TEXT,
  'native-crypto-price': 'BTC',
  'native-gas-price': 'base',
  'native-evm-balance': SAMPLE_EVM,
  'native-ens-resolve': 'vitalik.eth',
  'native-x402-validation': 'https://example.com',
  'native-invoice-pdf': JSON.stringify({ invoiceNumber: 'INV-1001', buyer: { name: 'Acme GmbH', address: 'Hauptstr. 1, Berlin' }, items: sampleItems, vatRate: 19 }),
  'native-invoice-proforma': JSON.stringify({ proformaNumber: 'PF-1001', buyer: { name: 'Acme GmbH', address: 'Hauptstr. 1, Berlin' }, items: sampleItems, vatRate: 19, validUntil: '2030-12-31', currency: 'EUR' }),
  'native-receipt-payment': JSON.stringify({ receiptNumber: 'RC-1001', buyer: { name: 'Acme GmbH' }, items: sampleItems, payment: { method: 'card', reference: 'ch_123', paidOn: '2025-01-15' }, vatRate: 19 }),
  'native-credit-note': JSON.stringify({ creditNoteNumber: 'CN-1001', buyer: { name: 'Acme GmbH' }, originalInvoice: 'INV-1001', items: [{ description: 'Refund, one hour', qty: 1, unitPrice: -120 }], vatRate: 19 }),
  'native-quote-estimate': JSON.stringify({ quoteNumber: 'Q-1001', buyer: { name: 'Acme GmbH', address: 'Hauptstr. 1, Berlin' }, items: sampleItems, vatRate: 19, validUntil: '2030-12-31' }),
  'native-crypto-price-feed': 'bitcoin',
  'native-b2b-compliance-report': JSON.stringify({ txs: [{ id: 'tx-1', amount: 2500, counterparty: 'Acme GmbH', country: 'DE' }] }),
  'native-bridge-route-check': 'ethereum-native-100',
  'native-risk-score': SAMPLE_EVM,
  'native-crypto-whale-watch': (n) => n.payTo,
  'native-crypto-portfolio-tracker': (n) => (n.payTo ? `portfolio:${n.payTo}` : undefined),
  'native-aml-sanctions-scan': JSON.stringify({ entity: 'Acme Trading Ltd', lists: ['OFAC', 'EU', 'UN'] }),
};

/** Placeholder shown where an example needs a value only the caller has (a transaction id). */
export const TX_ID_PLACEHOLDER = '<txId>';
/** Stands for the payer's secret salt (64 hex characters) in the example settle. */
export const SALT_PLACEHOLDER = '<salt>';

/**
 * An example `request` for a service: a valid input, undefined for services that take none; for
 * native-tx-lookup a transaction mined on this node's chain (`sampleTxId`), or `<txId>` while
 * the node knows none.
 */
export function exampleRequest(def: ServiceDefinition, node: { payTo?: string; sampleTxId?: string }): string | undefined {
  if (def.id === 'native-tx-lookup') return node.sampleTxId ?? TX_ID_PLACEHOLDER;
  const e = EXAMPLES[def.id];
  const v = typeof e === 'function' ? e(node) : e;
  return v === undefined || v === '' ? undefined : v;
}

/** Single-quotes a word for a POSIX shell. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Copyable example calls of a service: the unpaid quote and the paid retry with curl, and the one-line CLI call. */
export function exampleCalls(def: ServiceDefinition, baseUrl: string, node: { payTo?: string; sampleTxId?: string; defaultNodeUrl?: string }): { request?: string; curlQuote: string; curlPaid: string; cli: string } {
  const request = exampleRequest(def, node);
  const url = `${baseUrl}/api/x402/${def.id}`;
  const body = request === undefined ? {} : { request };
  const paidBody = { ...body, payment: { txId: TX_ID_PLACEHOLDER, salt: SALT_PLACEHOLDER } };
  const curl = (u: string, b: unknown) => `curl -s -X POST ${shellQuote(u)} -H 'content-type: application/json' -d ${shellQuote(JSON.stringify(b))}`;
  const nodeFlag = node.defaultNodeUrl !== undefined && baseUrl === node.defaultNodeUrl ? '' : ` --node ${shellQuote(baseUrl)}`;
  return {
    ...(request === undefined ? {} : { request }),
    curlQuote: curl(url, body),
    curlPaid: curl(`${url}?wait=30`, paidBody),
    cli: `npx native-node call${nodeFlag} ${def.id}${request === undefined ? '' : ` ${request.startsWith('-') ? '-- ' : ''}${shellQuote(request)}`}`,
  };
}
