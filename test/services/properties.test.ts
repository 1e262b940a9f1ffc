/**
 * Inputs the quote accepts always run, as property tests with fast-check: for every
 * service of the catalog, inputs are generated from its own input schema (the object the
 * registry validates with; patterns through fc.stringMatching, the custom keywords from their
 * domains: time zones, dates, countries, IPs, URLs, addresses), biased towards names that exist on
 * the chain (its tokens, pools, accounts, blocks and transactions) so the chain-data services run
 * on something. Each input goes through what the paid-call core does before a quote — the
 * registry's validation, then the service's pre-payment check — and every input that would be
 * quoted is run in process (executeService, the run a settled payment gets) on a devnet chain with
 * the economy (test/services/economyFixture.ts). None may end in a `ServiceError`: that is a
 * refund (or `service_failed`), and the only refund allowed after a quote is an upstream
 * provider's failure. This context has no outbound client and no providers, so the services that
 * need one are refused before any quote (503), which the test checks instead.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { encodeAddress } from '../../consensus/address.js';
import { toHex } from '../../consensus/hash.js';
import { encodeTx, txId } from '../../consensus/tx.js';
import { BRIDGE_NETWORK_NAMES } from '../../consensus/params.js';
import { createServiceRegistry, executeService, type ServiceContext } from '../../services/index.js';
import { ServiceError, type ServiceDefinition } from '../../services/types.js';
import { PROJECT_ROOT } from '../../services/projectRoot.js';
import { precheckRefusal } from '../../x402/core/paidCall.js';
import { cleanupTmp } from '../helpers/tmp.js';
import { createEconomyFixture, eaddr, ealice, ebob, ecarol, economyContext, eparams, type EconomyFixture } from './economyFixture.js';

/** Runs per service (the whole file stays around 30 s on 2 cores); fewer for the ones that render a PDF or summarise a long text (~150 ms a run). */
const RUNS = 25;
const HEAVY_RUNS = 10;
const HEAVY = new Set(['native-invoice-pdf', 'native-invoice-proforma', 'native-receipt-payment', 'native-credit-note', 'native-quote-estimate', 'native-summarize']);
/** Codes of a provider's or an upstream's failure: the one refund allowed after a quote (docs/decisions.md). */
const UPSTREAM = /^(provider_|upstream_|outbound_|dns_)/;

const registry = createServiceRegistry();
let f: EconomyFixture;
let ctx: ServiceContext;
/** Names that exist on the fixture chain. */
const known = { txIds: [] as string[], blockHashes: [] as string[], tip: 0 };

beforeAll(async () => {
  f = await createEconomyFixture({ tokenPool: true, labels: true });
  ctx = economyContext(f, registry);
  known.tip = f.chain.tip.height;
  for (let h = 0; h <= known.tip; h++) {
    const entry = f.chain.getEntryByHeight(h)!;
    known.blockHashes.push(entry.hashHex);
    for (const tx of (await f.chain.getBlock(entry.hashHex))!.txs) known.txIds.push(toHex(txId(encodeTx(tx))));
  }
}, 30_000);

afterAll(async () => {
  await f?.close();
  await cleanupTmp();
});

// ---------------------------------------------------------------------------------------------
// Inputs from a JSON Schema

/** A pattern without its lookahead groups (fast-check cannot generate them; the registry's validation filters what they exclude). */
function withoutLookaheads(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '\\') {
      out += pattern.slice(i, i + 2);
      i++;
    } else if (pattern.startsWith('(?=', i) || pattern.startsWith('(?!', i)) {
      let depth = 0;
      for (; i < pattern.length; i++) {
        if (pattern[i] === '\\') i++;
        else if (pattern[i] === '(') depth++;
        else if (pattern[i] === ')' && --depth === 0) break;
      }
    } else out += pattern[i];
  }
  return out;
}

const zones = Intl.supportedValuesOf('timeZone');
const countries = (JSON.parse(readFileSync(resolve(PROJECT_ROOT, 'services', 'data', 'compliance', 'iso3166-alpha2.json'), 'utf8')) as { codes: string[] }).codes;
/** ISO 4217 codes as the documents accept them (the shipped list). */
const currencies = (JSON.parse(readFileSync(resolve(PROJECT_ROOT, 'services', 'data', 'compliance', 'iso4217.json'), 'utf8')) as { codes: string[] }).codes;
const anyCase = (s: string) => fc.constantFrom(s, s.toLowerCase(), s.toUpperCase(), s[0] + s.slice(1).toLowerCase());
const bytes20 = fc.uint8Array({ minLength: 20, maxLength: 20 });
const nativeAddress = fc.oneof(bytes20.map((b) => encodeAddress(b, eparams.hrp)), fc.constantFrom(...[ealice, ebob, ecarol].map(eaddr)));
const evmAddress = bytes20.map((b) => `0x${toHex(b)}`);

type Schema = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Values of `schema` (strings, numbers, booleans, arrays, objects, anyOf, enum and the registry's custom keywords). */
function arbitraryOf(schema: Schema): fc.Arbitrary<unknown> {
  if (schema.anyOf) return fc.oneof(...(schema.anyOf as Schema[]).map(arbitraryOf));
  if (schema.enum) return fc.constantFrom(...(schema.enum as unknown[]));
  const types: string[] = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.length > 1) return fc.oneof(...types.map((type) => arbitraryOf({ ...schema, type })));
  switch (types[0]) {
    case 'string':
      return stringOf(schema);
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6 });
    case 'number': {
      const min = schema.minimum ?? schema.exclusiveMinimum ?? -1e6;
      const max = schema.maximum ?? 1e6;
      // Mostly everyday figures (cents), now and then any double of the range.
      const cents = fc.integer({ min: Math.ceil(min * 100), max: Math.floor(Math.min(max, 1e7) * 100) }).map((c) => c / 100);
      return fc.oneof({ arbitrary: cents, weight: 4 }, { arbitrary: fc.double({ min, max, noNaN: true, noDefaultInfinity: true }), weight: 1 }).filter((x) => schema.exclusiveMinimum === undefined || x > schema.exclusiveMinimum);
    }
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const opts = { minLength: schema.minItems ?? 0, maxLength: Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? 4, 4)) };
      return schema.uniqueItems ? fc.uniqueArray(arbitraryOf(schema.items), opts) : fc.array(arbitraryOf(schema.items), opts);
    }
    case 'object': {
      const props = Object.fromEntries(Object.entries((schema.properties ?? {}) as Record<string, Schema>).map(([k, s]) => [k, arbitraryOf(s)]));
      return fc.record(props, { requiredKeys: schema.required ?? [] });
    }
    default:
      throw new Error(`no arbitrary for ${JSON.stringify(schema).slice(0, 80)}`);
  }
}

function stringOf(schema: Schema): fc.Arbitrary<string> {
  const max = schema.maxLength ?? 200;
  const fits = (s: string) => s.length <= max && s.length >= (schema.minLength ?? 0);
  if (schema['x-timezone']) return fc.constantFrom(...zones).chain((z) => fc.constantFrom(z, z.toLowerCase()));
  if (schema['x-date']) {
    // A date the field can take: a payment date not after today, a validity not before it (the documents' own rules), else any.
    const today = Date.parse(new Date().toISOString().slice(0, 10));
    const day = 86_400_000;
    const text = String(schema.description ?? '');
    const [min, max] = text.includes('not after the issue date') ? [Date.parse('1990-01-01'), today] : text.includes('not before the issue date') ? [today, today + 3650 * day] : [Date.parse('1990-01-01'), Date.parse('2099-12-31')];
    return fc.integer({ min: min / day, max: max / day }).map((d) => new Date(d * day).toISOString().slice(0, 10));
  }
  if (schema['x-currency']) return fc.constantFrom(...currencies);
  if (schema['x-country']) return fc.constantFrom(...countries).chain(anyCase);
  if (schema['x-ip']) return fc.oneof(fc.ipV4(), fc.ipV6());
  if (schema['x-url']) return fc.webUrl({ withQueryParameters: true }).filter(fits);
  if (schema['x-address'] === 'native') return nativeAddress;
  if (schema['x-address'] === 'evm') return evmAddress;
  if (schema['x-address'] === 'any') return fc.oneof(nativeAddress, evmAddress);
  if (schema['x-text-or-url']) return english(schema['x-text-or-url'] as number, max);
  // One character class repeated (`^[0-9A-Za-z]+$`): its characters at the schema's lengths (a filter on length would reject nearly all).
  const cls = /^\^(\[[^\]]+\])[+*]\$$/.exec(schema.pattern ?? '');
  if (cls) return fc.string({ unit: fc.stringMatching(new RegExp(`^${cls[1]}$`)), minLength: schema.minLength ?? 0, maxLength: Math.min(max, 120) });
  if (schema.pattern) return fc.stringMatching(new RegExp(withoutLookaheads(schema.pattern as string), 'u')).filter(fits);
  return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(max, 120), unit: 'grapheme' });
}

const WORDS = ['the', 'team', 'shipped', 'a', 'new', 'release', 'today', 'and', 'customers', 'love', 'it', 'but', 'support', 'was', 'slow', 'not', 'good', 'great', 'price', 'fell', 'sharply', 'after', 'report', 'market', 'city', 'council', 'approved', 'budget', 'for', 'schools', 'bad', 'happy', 'terrible', 'service'];
/** English-looking text of at least `min` characters: sentences of common words. */
function english(min: number, max: number): fc.Arbitrary<string> {
  const sentence = fc.array(fc.constantFrom(...WORDS), { minLength: 4, maxLength: 14 }).map((w) => `${w[0][0].toUpperCase()}${w.join(' ').slice(1)}.`);
  return fc.array(sentence, { minLength: 1, maxLength: 8 }).map((s) => s.join(' ')).filter((t) => t.length >= min && t.length <= max);
}

// ---------------------------------------------------------------------------------------------
// Inputs that name what exists on the chain (so the chain-data services run, not only refuse)

const symbols = fc.constantFrom('GOLD', 'USDN', 'NATIVE').chain(anyCase);
const pools = fc.constantFrom(['NATIVE', 'USDN'], ['GOLD', 'NATIVE'], ['GOLD', 'USDN']).chain(([a, b]) => fc.constantFrom(`${a}/${b}`, `${b}/${a}`.toLowerCase()));
const nativeAmount = fc.tuple(fc.integer({ min: 0, max: 99_999 }), fc.integer({ min: 0, max: 99_999_999 }), fc.boolean(), fc.constantFrom('', ' NATIVE', 'native'))
  .map(([i, frac, dec, unit]) => `${i}${dec ? `.${String(frac).padStart(8, '0').replace(/0+$/, '') || '0'}` : ''}${unit}`);
const BIAS: Record<string, () => fc.Arbitrary<string>> = {
  'native-token-audit': () => symbols,
  'native-supply-audit': () => fc.oneof(symbols, pools, fc.constant('')),
  'native-holder-stats': () => fc.oneof(symbols, pools, fc.constant('')),
  'native-pool-analytics': () => fc.oneof(symbols, pools),
  'native-swap-quote': () => fc.tuple(fc.integer({ min: 1, max: 5000 }), fc.constantFrom('', '.5', '.01'), symbols, fc.constantFrom('->', '=>', '→', '>'), symbols).map(([n, d, a, arrow, b]) => `${n}${d} ${a} ${arrow} ${b}`),
  'native-wallet-portfolio': () => nativeAddress,
  'native-crypto-whale-watch': () => nativeAddress,
  'native-crypto-portfolio-tracker': () => fc.tuple(fc.constantFrom('', 'portfolio:', 'Portfolio: '), nativeAddress).map(([p, a]) => p + a),
  'native-risk-score': () => fc.oneof(nativeAddress, evmAddress),
  'native-address-validator': () => fc.oneof(nativeAddress, evmAddress),
  'native-tx-lookup': () => fc.constantFrom(...known.txIds).chain(anyCase),
  'native-block-inspect': () => fc.oneof(fc.integer({ min: 0, max: known.tip }).map(String), fc.constantFrom(...known.blockHashes)),
  'native-staking-rewards': () => nativeAmount,
  'native-whale-watch': () => fc.oneof(nativeAmount, fc.constant('')),
  'native-bridge-route-check': () => fc.tuple(fc.constantFrom('native', ...BRIDGE_NETWORK_NAMES), fc.constantFrom('native', ...BRIDGE_NETWORK_NAMES), fc.constantFrom('1', '7', '100', '0.5', '2500')).map((p) => p.join('-')),
  'native-email-validate': () => fc.emailAddress(),
  'native-sentiment': () => english(1, 5000),
  'native-keywords': () => english(1, 5000),
  'native-summarize': () => english(80, 20_000),
  'native-service-search': () => fc.array(fc.constantFrom('gas', 'pdf', 'invoice', 'swap', 'token', 'weather', 'price', 'clock'), { minLength: 1, maxLength: 3 }).map((w) => w.join(' ')),
};

/** A credit note credits: its lines' prices made negative, so the net total is below zero (the service's own rule). */
function crediting(v: unknown): unknown {
  const doc = v as { items?: { unitPrice?: number }[] };
  return doc.items ? { ...doc, items: doc.items.map((i) => ({ ...i, unitPrice: -Math.abs(i.unitPrice ?? 0) - 0.01 })) } : v;
}

/** The `request` strings of a service: its schema's values (JSON inputs as their JSON text), and the biased ones. */
function requestsOf(def: ServiceDefinition): fc.Arbitrary<string | undefined> {
  const values = def.id === 'native-credit-note' ? arbitraryOf(def.inputSchema).map(crediting) : arbitraryOf(def.inputSchema);
  const fromSchema = values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  const bias = BIAS[def.id];
  return bias ? fc.oneof({ arbitrary: fromSchema, weight: 1 }, { arbitrary: bias(), weight: 3 }) : fromSchema;
}

// ---------------------------------------------------------------------------------------------

describe('every input the quote accepts runs to an answer', () => {
  test.each(registry.list().map((d) => [d.id]))('%s', async (id) => {
    const def = registry.get(id)!;
    const runs = HEAVY.has(id) ? HEAVY_RUNS : RUNS;
    const seen = { invalid: 0, refused: 0, unavailable: 0, ran: 0, upstream: 0 };
    await fc.assert(
      fc.asyncProperty(requestsOf(def), async (request) => {
        const v = registry.validateInput(def, request);
        if (!v.ok) {
          seen.invalid++;
          return;
        }
        const pre = await precheckRefusal(def, v.input, ctx);
        if (pre) {
          // A 400 (the caller's input) or a 503 (no provider here): no quote, no payment.
          if (pre.code === 'service_unavailable') seen.unavailable++;
          else seen.refused++;
          return;
        }
        try {
          await executeService(def, ctx, v.input);
          seen.ran++;
        } catch (e) {
          if (e instanceof ServiceError && UPSTREAM.test(e.code)) {
            seen.upstream++;
            return;
          }
          throw new Error(`${id} ${JSON.stringify(request)?.slice(0, 300)} was quoted, then failed: ${e instanceof ServiceError ? `${e.code}: ` : ''}${(e as Error).message}`);
        }
      }),
      { numRuns: runs, seed: 30, endOnFailure: true },
    );
    // The generators reach the service: most inputs are valid, and each service runs on some of them or is unavailable here (no provider) before any quote.
    expect({ id, invalidShare: seen.invalid / runs < 0.5 }).toEqual({ id, invalidShare: true });
    expect({ id, reached: seen.ran + seen.upstream + seen.unavailable > 0 }).toEqual({ id, reached: true });
    // A service that needs nothing outside this node runs on most of what it is given.
    if (seen.unavailable === 0 && def.precheck === undefined) expect({ id, ran: seen.ran + seen.upstream }).toEqual({ id, ran: runs - seen.invalid });
  }, 20_000);
});
