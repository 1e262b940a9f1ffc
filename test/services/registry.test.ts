import { describe, expect, test } from '@jest/globals';
import { createServiceRegistry, executeService, ServiceError, ServiceExecErrorCode, type ServiceContext, type ServiceDefinition } from '../../services/index.js';
import { silentLogger } from '../../chain/types.js';
import { MAX_REQUEST_CHARS } from '../../services/inputs.js';

const registry = createServiceRegistry();
const def = (id: string) => registry.get(id)!;

describe('validateInput', () => {
  test('trims text inputs and passes the trimmed string as input', () => {
    expect(registry.validateInput(def('native-world-clock'), '  Europe/Berlin \n')).toEqual({ ok: true, input: 'Europe/Berlin' });
  });

  test('refuses a non-string request and an oversized one', () => {
    expect(registry.validateInput(def('native-world-clock'), 42 as unknown as string)).toEqual({ ok: false, error: { code: 'invalid_request', message: 'request must be a string' } });
    const r = registry.validateInput(def('native-sentiment'), 'x'.repeat(MAX_REQUEST_CHARS + 1));
    expect(r).toEqual({ ok: false, error: { code: 'invalid_request', message: expect.stringContaining('longer than') } });
  });

  test('a missing required request names the expected format', () => {
    const r = registry.validateInput(def('native-tx-lookup'), undefined);
    expect(r).toEqual({ ok: false, error: { code: 'invalid_request', message: 'request is required for native-tx-lookup: id (64 hex characters) of a transaction pending on this node or mined on its best chain' } });
  });

  test('rejects unknown time zones at validation time', () => {
    const r = registry.validateInput(def('native-world-clock'), 'Mars/Olympus');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.message).toMatch(/^request is not an IANA time zone name/);
      expect(r.error.details).toEqual([expect.objectContaining({ keyword: 'x-timezone' })]);
    }
  });

  test('JSON inputs: parse errors, field names in schema errors, parsed value as input', () => {
    const invoice = def('native-invoice-pdf');
    const parse = registry.validateInput(invoice, '{"invoiceNumber": ');
    expect(parse).toEqual({ ok: false, error: { code: 'invalid_request', message: expect.stringMatching(/^request is not valid JSON: /) } });
    const bad = registry.validateInput(invoice, JSON.stringify({ invoiceNumber: 'A-1', buyer: {}, items: [{ description: 'x', unitPrice: 1 }], colour: 'red' }));
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.error.message).toContain('colour is not an accepted field');
      expect(bad.error.message).toContain('buyer.name is required');
      expect(bad.error.message).toContain('items[0].qty is required');
      expect(bad.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'buyer', keyword: 'required' })]));
    }
    const notObject = registry.validateInput(invoice, '[1,2]');
    expect(notObject).toEqual({ ok: false, error: expect.objectContaining({ message: expect.stringContaining('request (JSON) must be object') }) });
    const good = { invoiceNumber: 'A-1', buyer: { name: 'ACME' }, items: [{ description: 'x', qty: 1, unitPrice: 1 }] };
    expect(registry.validateInput(invoice, JSON.stringify(good))).toEqual({ ok: true, input: good });
  });

  test('native-x402-validation takes a plain URL or a JSON object', () => {
    const d = def('native-x402-validation');
    expect(registry.validateInput(d, 'https://api.example.com/x402')).toEqual({ ok: true, input: 'https://api.example.com/x402' });
    expect(registry.validateInput(d, '{"url":"https://a.io","mcp":true}')).toEqual({ ok: true, input: { url: 'https://a.io', mcp: true } });
    const r = registry.validateInput(d, 'ftp://a.io');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toContain('must be an absolute http:// or https:// URL');
  });

  test('enum errors list the allowed values', () => {
    const r = registry.validateInput(def('native-aml-sanctions-scan'), '{"entity":"ACME","lists":["FBI"]}');
    expect(r).toEqual({ ok: false, error: expect.objectContaining({ message: expect.stringContaining('lists[0] must be one of "OFAC", "EU", "UN"') }) });
  });

  test('validates definitions it did not create (compiled on first use)', () => {
    const extra: ServiceDefinition = { ...def('native-world-clock'), id: 'native-extra', inputSchema: { type: 'string', maxLength: 3 } };
    expect(registry.validateInput(extra, 'abcd').ok).toBe(false);
    expect(registry.validateInput(extra, 'abc')).toEqual({ ok: true, input: 'abc' });
  });

  test('every catalog schema compiles (the catalog registry compiles them at first use, not at creation)', () => {
    const catalog = createServiceRegistry();
    expect(catalog.list()).toHaveLength(58);
    for (const d of catalog.list()) expect(() => createServiceRegistry([d])).not.toThrow();
  });

  test('a registry refuses an invalid schema at creation', () => {
    const broken: ServiceDefinition = { ...def('native-world-clock'), inputSchema: { type: 'string', maxLenght: 3 } };
    expect(() => createServiceRegistry([broken])).toThrow(/native-world-clock: invalid input schema/);
  });
});

function ctx(signal?: AbortSignal): Omit<ServiceContext, 'signal'> & { signal?: AbortSignal } {
  return {
    chain: undefined as never,
    mempool: undefined as never,
    params: undefined as never,
    now: () => 0,
    log: silentLogger,
    registry,
    nativeUsd: { get: () => ({ microUsd: 500_000n, source: 'test', live: false }) },
    signal,
  };
}

function fake(run: ServiceDefinition['run'], timeoutMs = 1000): ServiceDefinition {
  return { ...def('native-world-clock'), id: 'native-fake', run, timeoutMs };
}

describe('executeService', () => {
  test('returns a JSON-clean copy of the result', async () => {
    await expect(executeService(fake(async () => ({ a: 1, b: undefined, c: [1] })), ctx(), 'x')).resolves.toEqual({ a: 1, c: [1] });
  });

  test('service_unavailable without run', async () => {
    await expect(executeService(def('native-image-gen'), ctx(), 'a cat')).rejects.toMatchObject({ code: ServiceExecErrorCode.UNAVAILABLE });
  });

  test('service_timeout after timeoutMs, and the run sees its signal aborted', async () => {
    let seen: AbortSignal | undefined;
    const slow = fake((c) => {
      seen = c.signal;
      return new Promise(() => {});
    }, 20);
    await expect(executeService(slow, ctx(), 'x')).rejects.toMatchObject({ code: ServiceExecErrorCode.TIMEOUT });
    expect(seen?.aborted).toBe(true);
  });

  test('service_aborted when the node stops', async () => {
    const ac = new AbortController();
    const p = executeService(fake(() => new Promise(() => {})), ctx(ac.signal), 'x');
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: ServiceExecErrorCode.ABORTED });
  });

  test('keeps a ServiceError, wraps anything else as service_failed, refuses non-JSON results', async () => {
    await expect(executeService(fake(async () => { throw new ServiceError('upstream_down', 'provider down'); }), ctx(), 'x')).rejects.toMatchObject({ code: 'upstream_down' });
    await expect(executeService(fake(async () => { throw new TypeError('boom'); }), ctx(), 'x')).rejects.toMatchObject({ code: ServiceExecErrorCode.FAILED, message: expect.stringContaining('boom') });
    await expect(executeService(fake(async () => ({ n: 1n })), ctx(), 'x')).rejects.toMatchObject({ code: ServiceExecErrorCode.BAD_RESULT });
  });
});
