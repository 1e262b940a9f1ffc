/**
 * Zero-spend validation of an x402 endpoint (native-x402-validation), through the SSRF-safe
 * outbound client only:
 *   - exactly four GET probes, concurrently, each with a 6 s timeout, no retries and no redirects
 *     followed (a 3xx is reported with its Location): the given URL as is (its path, `/` when it
 *     has none), then `/health`, `/ready` and `/.well-known/x402.json` of its origin;
 *   - every 402 answer is checked as an x402 challenge: the v1 body (`x402Version`, `accepts[]`
 *     with scheme, network, maxAmountRequired, resource, payTo, asset, maxTimeoutSeconds,
 *     mimeType, outputSchema) and the v2 `PAYMENT-REQUIRED` header (base64 JSON, `x402Version`
 *     2, `accepts[]` with CAIP-2 networks and `amount`), listing networks, assets and payTo;
 *   - `mcp: true`: MCP `initialize` and `tools/list` at the given URL with the SDK's Streamable
 *     HTTP client (its fetch is the outbound client), 6 s per step;
 *   - `correlation: true`: whether the payTo, networks, assets and resources of the 402s appear
 *     in the discovery document;
 *   - nothing is ever signed or paid (no X-PAYMENT header is sent).
 */
import { OutboundError, type OutboundClient, type OutboundResponse } from '../outbound/types.js';

/** The four probe paths of the spec's Limits table; the first is the given URL itself. */
export const PROBE_PATHS = ['/', '/health', '/ready', '/.well-known/x402.json'] as const;
/** Time limit of one probe (and of each MCP step), ms. */
export const PROBE_TIMEOUT_MS = 6_000;
/** Largest probe body read, bytes. */
const PROBE_MAX_BYTES = 1024 * 1024;
/** Body excerpt length with `includeBody`, characters. */
export const BODY_EXCERPT_CHARS = 2_000;

/** The service's input, normalised. */
export interface ValidationRequest {
  readonly url: string;
  readonly mcp: boolean;
  readonly correlation: boolean;
  readonly includeBody: boolean;
}

/** Reads the service input: a URL string or `{url, mcp, correlation, includeBody}`. */
export function validationRequestOf(input: unknown): ValidationRequest {
  if (typeof input === 'string') return { url: input, mcp: false, correlation: false, includeBody: false };
  const o = input as { url: string; mcp?: boolean; correlation?: boolean; includeBody?: boolean };
  return { url: o.url, mcp: o.mcp === true, correlation: o.correlation === true, includeBody: o.includeBody === true };
}

/** One payment option of a challenge, as found. */
export interface AcceptEntry {
  readonly scheme: string | null;
  readonly network: string | null;
  readonly asset: string | null;
  readonly payTo: string | null;
  /** `maxAmountRequired` (v1) or `amount` (v2), atomic units. */
  readonly amount: string | null;
  readonly resource: string | null;
  readonly problems: readonly string[];
}

/** The check of one x402 encoding of a challenge. */
export interface EncodingReport {
  readonly present: boolean;
  readonly valid: boolean;
  readonly x402Version: number | null;
  readonly error: string | null;
  readonly accepts: readonly AcceptEntry[];
  readonly problems: readonly string[];
}

/** The check of a 402 answer. */
export interface ChallengeReport {
  /** At least one encoding is present, and every present one is valid. */
  readonly wellFormed: boolean;
  readonly v1: EncodingReport;
  readonly v2: EncodingReport;
  readonly networks: readonly string[];
  readonly assets: readonly string[];
  readonly payTo: readonly string[];
}

/** One probe's outcome. */
export interface ProbeReport {
  readonly path: string;
  readonly url: string;
  /** HTTP status, null when no answer came (see `error`). */
  readonly status: number | null;
  readonly latencyMs: number;
  readonly contentType: string | null;
  readonly bytes: number | null;
  readonly location?: string;
  readonly error?: { readonly code: string; readonly message: string };
  readonly body?: string;
  readonly x402?: ChallengeReport;
}

type Loose = Record<string, unknown>;
const isObj = (v: unknown): v is Loose => typeof v === 'object' && v !== null && !Array.isArray(v);
const strOrNull = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const ATOMIC = /^\d{1,78}$/;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
/** CAIP-2 chain id (`namespace:reference`), what x402 v2 names networks with. */
const CAIP2 = /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/;

function isAbsoluteUrl(v: unknown): boolean {
  if (typeof v !== 'string') return false;
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * Checks one PaymentRequirements of a challenge: v1 as the reference client parses it
 * (`maxAmountRequired`, absolute `resource`, description, mimeType, outputSchema object or
 * absent), v2 with a CAIP-2 network and `amount`; both need scheme, payTo, asset, a positive
 * `maxTimeoutSeconds`, and for `exact` EVM addresses and the EIP-712 domain in `extra`.
 */
function checkAccept(a: unknown, i: number, version: 1 | 2): AcceptEntry {
  const p: string[] = [];
  if (!isObj(a)) return { scheme: null, network: null, asset: null, payTo: null, amount: null, resource: null, problems: [`accepts[${i}] is not an object`] };
  const need = (k: string, ok: boolean, what: string) => {
    if (!ok) p.push(`accepts[${i}].${k} ${what}`);
  };
  const nonEmpty = (v: unknown) => typeof v === 'string' && v.length > 0;
  const amountKey = version === 1 ? 'maxAmountRequired' : 'amount';
  need('scheme', nonEmpty(a.scheme), 'must be a non-empty string');
  if (version === 1) need('network', nonEmpty(a.network), 'must be a non-empty string');
  else need('network', typeof a.network === 'string' && CAIP2.test(a.network), 'must be a CAIP-2 chain id (e.g. eip155:8453)');
  need(amountKey, typeof a[amountKey] === 'string' && ATOMIC.test(a[amountKey] as string), 'must be a string of atomic units (digits only)');
  need('payTo', nonEmpty(a.payTo), 'must be a non-empty string');
  need('asset', nonEmpty(a.asset), 'must be a non-empty string');
  need('maxTimeoutSeconds', Number.isInteger(a.maxTimeoutSeconds) && (a.maxTimeoutSeconds as number) > 0, 'must be a positive integer');
  if ('extra' in a && a.extra !== undefined) need('extra', isObj(a.extra), 'must be an object');
  if (version === 1) {
    need('resource', isAbsoluteUrl(a.resource), 'must be an absolute http(s) URL');
    need('description', typeof a.description === 'string', 'must be a string');
    need('mimeType', typeof a.mimeType === 'string', 'must be a string (may be empty)');
    if ('outputSchema' in a) need('outputSchema', isObj(a.outputSchema), 'must be an object or absent (null breaks clients)');
  }
  if (a.scheme === 'exact') {
    need('payTo', typeof a.payTo === 'string' && EVM_ADDRESS.test(a.payTo), 'must be an EVM address for scheme exact');
    need('asset', typeof a.asset === 'string' && EVM_ADDRESS.test(a.asset), 'must be the token contract address for scheme exact');
    const extra = isObj(a.extra) ? a.extra : {};
    need('extra', typeof extra.name === 'string' && typeof extra.version === 'string', 'must carry the EIP-712 domain name and version for scheme exact');
  }
  return { scheme: strOrNull(a.scheme), network: strOrNull(a.network), asset: strOrNull(a.asset), payTo: strOrNull(a.payTo), amount: strOrNull(a[amountKey]), resource: version === 1 ? strOrNull(a.resource) : null, problems: p };
}

const ABSENT: EncodingReport = { present: false, valid: false, x402Version: null, error: null, accepts: [], problems: [] };

function encodingReport(doc: unknown, version: 1 | 2): EncodingReport {
  if (!isObj(doc)) return { ...ABSENT, present: true, problems: ['not a JSON object'] };
  const problems: string[] = [];
  const v = doc.x402Version;
  if (version === 1 && v !== 1) problems.push(`x402Version must be 1, got ${JSON.stringify(v)}`);
  if (version === 2 && v !== 2) problems.push(`x402Version must be 2, got ${JSON.stringify(v)}`);
  let accepts: AcceptEntry[] = [];
  if (!Array.isArray(doc.accepts) || doc.accepts.length === 0) problems.push('accepts must be a non-empty array');
  else accepts = doc.accepts.map((a, i) => checkAccept(a, i, version));
  if (version === 2) {
    const r = doc.resource;
    if (!isObj(r) || !isAbsoluteUrl(r.url)) problems.push('resource.url must be an absolute http(s) URL');
    else accepts = accepts.map((a) => ({ ...a, resource: r.url as string }));
  }
  const valid = problems.length === 0 && accepts.every((a) => a.problems.length === 0);
  return { present: true, valid, x402Version: typeof v === 'number' ? v : null, error: typeof doc.error === 'string' ? doc.error : null, accepts, problems };
}

/** Checks a 402 answer's v1 body and v2 `PAYMENT-REQUIRED` header (see module comment). */
export function checkChallenge(res: Pick<OutboundResponse, 'headers' | 'text'>): ChallengeReport {
  let v1: EncodingReport = ABSENT;
  const text = res.text();
  if (text.trim()) {
    try {
      const body = JSON.parse(text) as unknown;
      // A JSON body without x402 fields is not a v1 challenge (a v2-only server may send `{}`).
      if (isObj(body) && ('accepts' in body || 'x402Version' in body)) v1 = encodingReport(body, 1);
    } catch {
      v1 = ABSENT;
    }
  }
  let v2: EncodingReport = ABSENT;
  const header = res.headers['payment-required'];
  if (header !== undefined) {
    try {
      v2 = encodingReport(JSON.parse(Buffer.from(header.trim(), 'base64').toString('utf8')) as unknown, 2);
    } catch {
      v2 = { ...ABSENT, present: true, problems: ['PAYMENT-REQUIRED is not base64-encoded JSON'] };
    }
  }
  const present = [v1, v2].filter((e) => e.present);
  const all = [...v1.accepts, ...v2.accepts];
  const uniq = (xs: (string | null)[]) => [...new Set(xs.filter((x): x is string => x !== null))];
  return { wellFormed: present.length > 0 && present.every((e) => e.valid), v1, v2, networks: uniq(all.map((a) => a.network)), assets: uniq(all.map((a) => a.asset)), payTo: uniq(all.map((a) => a.payTo)) };
}

/** The URLs of the four probes for `url`. */
export function probeUrls(url: string): { path: string; url: string }[] {
  const u = new URL(url);
  return PROBE_PATHS.map((path, i) => (i === 0 ? { path: `${u.pathname}${u.search}`, url: u.href } : { path, url: new URL(path, u.origin).href }));
}

/** One GET probe; network failures are reported, never thrown (except the caller's abort). */
export async function probe(outbound: OutboundClient, target: { path: string; url: string }, includeBody: boolean, signal?: AbortSignal): Promise<{ report: ProbeReport; response?: OutboundResponse }> {
  const started = performance.now();
  try {
    const res = await outbound.fetchPublic({ url: target.url, method: 'GET', timeoutMs: PROBE_TIMEOUT_MS, maxRedirects: 0, maxBytes: PROBE_MAX_BYTES, signal, headers: { accept: 'application/json, text/html;q=0.8, */*;q=0.5' } });
    const report: ProbeReport = {
      path: target.path,
      url: target.url,
      status: res.status,
      latencyMs: Math.round(performance.now() - started),
      contentType: res.contentType || null,
      bytes: res.body.byteLength,
      ...(res.headers.location ? { location: res.headers.location } : {}),
      ...(includeBody ? { body: res.text().slice(0, BODY_EXCERPT_CHARS) } : {}),
      ...(res.status === 402 ? { x402: checkChallenge(res) } : {}),
    };
    return { report, response: res };
  } catch (e) {
    if (signal?.aborted) throw e;
    const error = e instanceof OutboundError ? { code: e.code, message: e.message } : { code: 'probe_failed', message: e instanceof Error ? e.message : String(e) };
    return { report: { path: target.path, url: target.url, status: null, latencyMs: Math.round(performance.now() - started), contentType: null, bytes: null, error } };
  }
}

/** Values of the given keys anywhere in a JSON document (bounded depth), as strings. */
function collect(doc: unknown, keys: ReadonlySet<string>, out = new Set<string>(), depth = 0): Set<string> {
  if (depth > 8 || out.size > 10_000) return out;
  if (Array.isArray(doc)) for (const x of doc) collect(x, keys, out, depth + 1);
  else if (isObj(doc)) {
    for (const [k, v] of Object.entries(doc)) {
      if (keys.has(k)) {
        if (typeof v === 'string') out.add(v);
        else if (Array.isArray(v)) for (const x of v) if (typeof x === 'string') out.add(x);
      }
      collect(v, keys, out, depth + 1);
    }
  }
  return out;
}

/** Whether the discovery document agrees with the 402 challenges seen. */
export interface CorrelationReport {
  /** `agree`, `disagree`, `no_discovery` (no JSON document at /.well-known/x402.json) or `no_challenge` (no probe answered 402). */
  readonly status: 'agree' | 'disagree' | 'no_discovery' | 'no_challenge';
  readonly mismatches: readonly string[];
  readonly discovery: { readonly payTo: readonly string[]; readonly networks: readonly string[]; readonly assets: readonly string[]; readonly resources: number };
}

/** Compares the discovery document with the challenges (addresses without case). */
export function correlate(discovery: unknown, challenges: readonly ChallengeReport[]): CorrelationReport {
  const payTo = collect(discovery, new Set(['payTo', 'payto', 'pay_to']));
  const networks = collect(discovery, new Set(['network', 'networks']));
  const assets = collect(discovery, new Set(['asset', 'assetContract', 'assets']));
  const resources = collect(discovery, new Set(['resource', 'resources', 'endpoint', 'url']));
  const summary = { payTo: [...payTo], networks: [...networks], assets: [...assets], resources: resources.size };
  if (!isObj(discovery) && !Array.isArray(discovery)) return { status: 'no_discovery', mismatches: [], discovery: summary };
  if (challenges.length === 0) return { status: 'no_challenge', mismatches: [], discovery: summary };
  const lower = (s: Set<string>) => new Set([...s].map((x) => x.toLowerCase()));
  const [pl, nl, al, rl] = [lower(payTo), lower(networks), lower(assets), lower(resources)];
  const mismatches: string[] = [];
  for (const c of challenges) {
    for (const a of [...c.v1.accepts, ...c.v2.accepts]) {
      if (a.payTo && !pl.has(a.payTo.toLowerCase())) mismatches.push(`payTo ${a.payTo} of the 402 is not in the discovery document`);
      if (a.network && !nl.has(a.network.toLowerCase())) mismatches.push(`network ${a.network} of the 402 is not in the discovery document`);
      if (a.asset && !al.has(a.asset.toLowerCase())) mismatches.push(`asset ${a.asset} of the 402 is not in the discovery document`);
      if (a.resource && !rl.has(a.resource.toLowerCase())) mismatches.push(`resource ${a.resource} of the 402 is not listed in the discovery document`);
    }
  }
  const unique = [...new Set(mismatches)];
  return { status: unique.length === 0 ? 'agree' : 'disagree', mismatches: unique, discovery: summary };
}

/** The MCP check's outcome. */
export interface McpReport {
  readonly endpoint: string;
  readonly ok: boolean;
  readonly protocolVersion: string | null;
  readonly server: { readonly name: string; readonly version: string } | null;
  readonly tools: number | null;
  /** Names of the first 100 tools. */
  readonly toolNames: readonly string[];
  readonly latencyMs: number;
  readonly error?: string;
}

/** A WHATWG `fetch` over the outbound client (caller-URL rules), for the MCP SDK's transport. */
function outboundFetch(outbound: OutboundClient): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    if (method !== 'GET' && method !== 'POST' && method !== 'HEAD' && method !== 'DELETE') throw new OutboundError('url_invalid', `method ${method} is not used by the validator`);
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => (headers[k] = v));
    // The SDK opens a standalone SSE stream (a GET) after initialize, for server-initiated messages
    // the validator has no use for. It is not sent: the four probes stay the only GETs. The SDK
    // reads 405 as "no stream offered" and goes on (MCP Streamable HTTP, "Listening for Messages").
    if (method === 'GET') return new Response(null, { status: 405, statusText: 'not opened by the validator' });
    const body = typeof init?.body === 'string' ? init.body : undefined;
    const res = await outbound.fetchPublic({ url: String(url), method, headers, body, timeoutMs: PROBE_TIMEOUT_MS, maxRedirects: 0, maxBytes: PROBE_MAX_BYTES, signal: init?.signal ?? undefined });
    const noBody = res.status === 204 || res.status === 304 || method === 'HEAD';
    return new Response(noBody ? null : res.body, { status: res.status, headers: res.headers });
  };
}

/** MCP `initialize` and `tools/list` at `endpoint` (Streamable HTTP), each step within the probe timeout. */
export async function checkMcp(outbound: OutboundClient, endpoint: string, version: string, signal?: AbortSignal): Promise<McpReport> {
  const started = performance.now();
  const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([import('@modelcontextprotocol/sdk/client/index.js'), import('@modelcontextprotocol/sdk/client/streamableHttp.js')]);
  const client = new Client({ name: 'native-node x402-validation', version });
  const transport = new StreamableHTTPClientTransport(new URL(endpoint), { fetch: outboundFetch(outbound) });
  const options = { timeout: PROBE_TIMEOUT_MS, signal };
  try {
    await client.connect(transport, options);
    const info = client.getServerVersion();
    const listed = await client.listTools(undefined, options);
    return {
      endpoint,
      ok: true,
      protocolVersion: transport.protocolVersion ?? null,
      server: info ? { name: info.name, version: info.version } : null,
      tools: listed.tools.length,
      toolNames: listed.tools.slice(0, 100).map((t) => t.name),
      latencyMs: Math.round(performance.now() - started),
    };
  } catch (e) {
    if (signal?.aborted) throw e;
    return { endpoint, ok: false, protocolVersion: null, server: null, tools: null, toolNames: [], latencyMs: Math.round(performance.now() - started), error: e instanceof Error ? e.message : String(e) };
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** The whole validation (see module comment). */
export async function validateX402Endpoint(outbound: OutboundClient, req: ValidationRequest, opts: { version: string; signal?: AbortSignal }): Promise<Record<string, unknown>> {
  const targets = probeUrls(req.url);
  const [results, mcp] = await Promise.all([Promise.all(targets.map((t) => probe(outbound, t, req.includeBody, opts.signal))), req.mcp ? checkMcp(outbound, req.url, opts.version, opts.signal) : Promise.resolve(undefined)]);
  const probes = results.map((r) => r.report);
  const byPath = (i: number) => probes[i];
  const challenges = probes.map((p) => p.x402).filter((c): c is ChallengeReport => c !== undefined);
  const discoveryResponse = results[3].response;
  let discovery: unknown;
  let discoveryProblem: string | undefined;
  if (!discoveryResponse || discoveryResponse.status < 200 || discoveryResponse.status >= 300) discoveryProblem = `/.well-known/x402.json answered ${discoveryResponse ? `HTTP ${discoveryResponse.status}` : 'nothing'}`;
  else {
    try {
      discovery = JSON.parse(discoveryResponse.text()) as unknown;
      if (!isObj(discovery)) discoveryProblem = '/.well-known/x402.json is not a JSON object';
    } catch {
      discoveryProblem = '/.well-known/x402.json is not JSON';
    }
  }
  const ok2xx = (p: ProbeReport) => p.status !== null && p.status >= 200 && p.status < 300;
  const checks = {
    reachable: probes.some((p) => p.status !== null),
    // The endpoint itself answers: 2xx, or the 402 an x402 resource gives an unpaid request (a 404 or 500 does not pass).
    root: byPath(0).status !== null && ((byPath(0).status! >= 200 && byPath(0).status! < 300) || byPath(0).status === 402),
    health: ok2xx(byPath(1)),
    ready: ok2xx(byPath(2)),
    discovery: discoveryProblem === undefined,
    // At least one 402 challenge, all well formed: none at all is no x402 endpoint.
    challenges: challenges.length > 0 && challenges.every((c) => c.wellFormed),
  };
  const correlation = req.correlation ? correlate(discoveryProblem === undefined ? discovery : undefined, challenges) : undefined;
  const problems: string[] = [];
  for (const p of probes) if (p.error) problems.push(`${p.path}: ${p.error.code}: ${p.error.message}`);
  if (!checks.root && byPath(0).status !== null) problems.push(`${byPath(0).path} answered HTTP ${byPath(0).status}`);
  if (!checks.health && byPath(1).status !== null) problems.push(`/health answered HTTP ${byPath(1).status}`);
  if (!checks.ready && byPath(2).status !== null) problems.push(`/ready answered HTTP ${byPath(2).status}`);
  if (discoveryProblem && discoveryResponse) problems.push(discoveryProblem);
  if (challenges.length === 0) problems.push('no probe answered with a 402 payment challenge');
  for (const c of challenges) for (const e of [c.v1, c.v2]) for (const msg of [...e.problems, ...e.accepts.flatMap((a) => a.problems)]) problems.push(`402 v${e === c.v1 ? 1 : 2}: ${msg}`);
  if (mcp && !mcp.ok) problems.push(`MCP: ${mcp.error ?? 'failed'}`);
  if (correlation?.status === 'disagree') problems.push(...correlation.mismatches);
  const passed = Object.values(checks).every(Boolean) && (mcp === undefined || mcp.ok) && correlation?.status !== 'disagree';
  return {
    url: req.url,
    passed,
    checks,
    problems,
    probes,
    challenges: challenges.length,
    ...(mcp ? { mcp } : {}),
    ...(correlation ? { correlation } : {}),
    spend: { signed: 0, paid: 0, note: 'zero spend: no payment header was sent and nothing was signed' },
  };
}
