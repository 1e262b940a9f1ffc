/**
 * native-geo-ip on its data pack (packs/geoip, installed first when missing, as
 * `native-node data install geoip` does: Google's public resolvers located, a known ASN, special
 * ranges answered as such) and native-email-validate against a DNS server on 127.0.0.1 (MX, null
 * MX, A fallback, NXDOMAIN, SERVFAIL and a resolver that never answers), with IDN and disposable
 * domains; bad inputs refused before payment.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createSocket, type Socket } from 'node:dgram';
import * as dnsPacket from '@dnsquery/dns-packet';
import { configureEmailDns, suggestDomain, validateEmail } from '../../services/identity/email.js';
import { documentationRange, locateIp } from '../../services/identity/geoip.js';
import ipaddr from 'ipaddr.js';
import { ServiceError } from '../../services/types.js';
import { ensureGeoIpPack } from '../helpers/dataPacks.js';
import { callLocal, refusal } from './local.js';

type Json = Record<string, any>;

describe('documentation ranges (RFC 5737, RFC 3849, RFC 9637) are named as such', () => {
  // The reference: the RFCs' own ranges, their first and last addresses, and the addresses just outside them.
  test.each([
    ['192.0.2.0', 'RFC 5737 TEST-NET-1'], ['192.0.2.255', 'RFC 5737 TEST-NET-1'],
    ['198.51.100.0', 'RFC 5737 TEST-NET-2'], ['198.51.100.255', 'RFC 5737 TEST-NET-2'],
    ['203.0.113.0', 'RFC 5737 TEST-NET-3'], ['203.0.113.255', 'RFC 5737 TEST-NET-3'],
    ['2001:db8::', 'RFC 3849'], ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', 'RFC 3849'],
    ['3fff::1', 'RFC 9637'], ['::ffff:192.0.2.1', 'RFC 5737 TEST-NET-1'],
  ])('%s: documentation (%s), not located', async (ip, rfc) => {
    expect(await locateIp(ip)).toEqual({ ip: expect.any(String), version: ip.includes(':') && !ip.startsWith('::ffff:') ? 6 : 4, scope: 'special', range: 'documentation', description: `documentation (${rfc})`, located: false });
  });
  test.each(['192.0.1.255', '192.0.3.0', '198.51.99.255', '198.51.101.0', '203.0.112.255', '203.0.114.0', '2001:db9::1', '2001:db7:ffff::1'])('%s, just outside, is not documentation', (ip) => {
    expect(documentationRange(ipaddr.parse(ip))).toBeUndefined();
  });
});

describe('native-geo-ip', () => {
  beforeAll(() => ensureGeoIpPack(), 600_000);

  test('8.8.8.8: Google, Mountain View, with time zone and ASN', async () => {
    expect(await callLocal('native-geo-ip', '8.8.8.8')).toMatchObject({
      ip: '8.8.8.8',
      version: 4,
      scope: 'public',
      located: true,
      country: { code: 'US', name: 'United States' },
      region: 'California',
      city: 'Mountain View',
      latitude: 37.422,
      longitude: -122.085,
      timezone: 'America/Los_Angeles',
      asn: 15169,
      organization: 'Google LLC',
    });
  });

  test('2001:4860:4860::8888 located, with Google\'s ASN; an IPv4-mapped address is its IPv4 address', async () => {
    const r = await callLocal<Json>('native-geo-ip', '2001:4860:4860::8888');
    expect(r).toMatchObject({ version: 6, scope: 'public', located: true, asn: 15169, organization: 'Google LLC' });
    expect(r.country.code).toMatch(/^[A-Z]{2}$/);
    expect(typeof r.latitude).toBe('number');
    expect(r.timezone).toMatch(/^[A-Za-z_]+\/[A-Za-z_]+/);
    expect(await callLocal('native-geo-ip', '::ffff:1.1.1.1')).toMatchObject({ ip: '1.1.1.1', version: 4, asn: 13335, organization: 'Cloudflare, Inc.' });
  });

  test.each([
    ['192.168.1.1', 'private'],
    ['10.1.2.3', 'private'],
    ['127.0.0.1', 'loopback'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['224.0.0.251', 'multicast'],
    ['::1', 'loopback'],
    ['fe80::1', 'linkLocal'],
    ['fd00::1', 'uniqueLocal'],
  ])('%s is answered as %s, not located', async (ip, range) => {
    expect(await callLocal('native-geo-ip', ip)).toMatchObject({ scope: 'special', range, located: false });
  });

  test('bad input refused before payment', () => {
    expect(refusal('native-geo-ip', '999.1.1.1')).toContain('must be an IPv4 or IPv6 address');
    expect(refusal('native-geo-ip', 'example.com')).toContain('request does not have the expected format');
    expect(refusal('native-geo-ip', '')).toContain('request is required');
  });
});

/** A small authoritative DNS server on 127.0.0.1 for the email tests. */
function startDns(opts: { nxdomainForAll?: boolean } = {}): Promise<{ socket: Socket; port: number }> {
  const zone: Record<string, { MX?: [number, string][]; A?: string[]; rcode?: number }> = {
    'acme-mail.com': { MX: [[20, 'mx2.acme-mail.com'], [10, 'mx1.acme-mail.com']] },
    'nullmx.org': { MX: [[0, '.']] },
    'amail.net': { A: ['192.0.2.10'] },
    'servfail.io': { rcode: 2 },
    'xn--bcher-kva.de': { MX: [[10, 'mail.xn--bcher-kva.de']] },
    'mailinator.com': { MX: [[10, 'mail.mailinator.com']] },
    // As IANA serves it: address records and a null MX (RFC 2606 reserves it; RFC 7505 null MX).
    'example.com': { MX: [[0, '.']], A: ['96.7.128.175', '96.7.128.198'] },
  };
  const socket = createSocket('udp4');
  socket.on('message', (msg, rinfo) => {
    const q = dnsPacket.decode(msg);
    const question = q.questions![0];
    const name = question.name.toLowerCase();
    const z = opts.nxdomainForAll ? undefined : zone[name];
    const answers: dnsPacket.Answer[] = [];
    const rcode = z ? (z.rcode ?? 0) : 3; // NXDOMAIN for names outside the zone
    if (z && rcode === 0) {
      if (question.type === 'MX') for (const [preference, exchange] of z.MX ?? []) answers.push({ type: 'MX', name, ttl: 60, data: { preference, exchange } } as dnsPacket.Answer);
      if (question.type === 'A') for (const a of z.A ?? []) answers.push({ type: 'A', name, ttl: 60, data: a } as dnsPacket.Answer);
    }
    const res = dnsPacket.encode({ type: 'response', id: q.id, flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | dnsPacket.AUTHORITATIVE_ANSWER | rcode, questions: q.questions, answers });
    socket.send(res, rinfo.port, rinfo.address);
  });
  return new Promise((resolve) => socket.bind(0, '127.0.0.1', () => resolve({ socket, port: socket.address().port })));
}

describe('native-email-validate', () => {
  let dns: { socket: Socket; port: number };
  let silent: Socket;

  beforeAll(async () => {
    dns = await startDns();
    silent = createSocket('udp4');
    await new Promise<void>((r) => silent.bind(0, '127.0.0.1', () => r()));
    // 3 s: the local DNS answers long before on a loaded machine; the silent server's test sets its own.
    configureEmailDns({ servers: [`127.0.0.1:${dns.port}`], timeoutMs: 3_000, tries: 1 });
  });
  afterAll(() => {
    dns.socket.close();
    silent.close();
  });

  test('a valid address: MX records sorted by priority', async () => {
    expect(await callLocal('native-email-validate', 'alice@acme-mail.com')).toMatchObject({
      email: 'alice@acme-mail.com',
      localPart: 'alice',
      domain: 'acme-mail.com',
      idn: false,
      syntax: { valid: true },
      disposable: false,
      mx: { status: 'found', records: [{ exchange: 'mx1.acme-mail.com', priority: 10 }, { exchange: 'mx2.acme-mail.com', priority: 20 }] },
      acceptsMail: true,
      valid: true,
    });
  });

  test('IDN domain checked in its ASCII form', async () => {
    expect(await callLocal('native-email-validate', 'jörg@bücher.de')).toMatchObject({ asciiDomain: 'xn--bcher-kva.de', idn: true, syntax: { valid: true }, mx: { status: 'found' }, valid: true });
  });

  test('null MX, A fallback, NXDOMAIN', async () => {
    expect(await callLocal('native-email-validate', 'bob@nullmx.org')).toMatchObject({ mx: { status: 'null-mx' }, acceptsMail: false, valid: false });
    expect(await callLocal('native-email-validate', 'carol@amail.net')).toMatchObject({ mx: { status: 'fallback-a', addresses: ['192.0.2.10'] }, acceptsMail: true, valid: true });
    expect(await callLocal('native-email-validate', 'dave@no-such-domain-here.com')).toMatchObject({ mx: { status: 'none', reason: expect.stringContaining('NXDOMAIN') }, valid: false });
  });

  test('DNS failing or unreachable: "could not check", a failed run (refunded), never invalid or charged', async () => {
    const failed = await validateEmail('erin@servfail.io');
    expect(failed).toMatchObject({ mx: { status: 'unknown' }, acceptsMail: 'unknown', valid: 'unknown' });
    expect((failed.mx as { reason: string }).reason).toContain('ESERVFAIL');
    await expect(callLocal<Json>('native-email-validate', 'erin@servfail.io')).rejects.toMatchObject({ code: 'dns_unavailable', message: expect.stringContaining('could not check servfail.io') });
    configureEmailDns({ servers: [`127.0.0.1:${silent.address().port}`], timeoutMs: 400 });
    try {
      const t0 = Date.now();
      const r = await validateEmail('frank@acme-mail.com');
      expect(r).toMatchObject({ mx: { status: 'unknown', reason: expect.stringContaining('ETIMEOUT') }, valid: 'unknown', syntax: { valid: true } });
      expect(Date.now() - t0).toBeLessThan(5_000);
      await expect(callLocal<Json>('native-email-validate', 'frank@acme-mail.com')).rejects.toBeInstanceOf(ServiceError);
    } finally {
      configureEmailDns({ servers: [`127.0.0.1:${dns.port}`] });
    }
  });

  test('a resolver that says gmail.com does not exist is not believed', async () => {
    // The test DNS answers NXDOMAIN for every name outside its zone, gmail.com included.
    await expect(callLocal<Json>('native-email-validate', 'alice@gmail.com')).rejects.toMatchObject({ code: 'dns_unavailable' });
  });

  test('a resolver that answers NXDOMAIN for everything cannot check: example.com and microsoft.com never "do not exist"; refused before payment, refunded after', async () => {
    // The reference: RFC 2606 reserves example.com and IANA serves it (the working resolver's zone holds its records).
    expect(await callLocal('native-email-validate', 'info@example.com')).toMatchObject({ mx: { status: 'null-mx' }, acceptsMail: false });
    const { precheckRefusal } = await import('../../x402/core/paidCall.js');
    const { localContext, registry } = await import('./local.js');
    const def = registry.get('native-email-validate')!;
    expect(await precheckRefusal(def, 'dave@no-such-domain-here.com', localContext() as never)).toBeUndefined();
    expect(await def.health!(localContext() as never)).toBe('active');
    const broken = await startDns({ nxdomainForAll: true });
    configureEmailDns({ servers: [`127.0.0.1:${broken.port}`] });
    try {
      for (const email of ['bill@microsoft.com', 'info@example.com', 'dave@no-such-domain-here.com']) {
        const r = await validateEmail(email);
        expect({ email, mx: r.mx.status, valid: r.valid }).toEqual({ email, mx: 'unknown', valid: 'unknown' });
        await expect(callLocal<Json>('native-email-validate', email)).rejects.toMatchObject({ code: 'dns_unavailable' });
        expect(await precheckRefusal(def, email, localContext() as never)).toMatchObject({ code: 'service_unavailable', reason: 'dns_unavailable', message: expect.stringContaining('example.com') });
      }
      // One state with the bazaar: the service's health says down for the same reason.
      expect(await def.health!(localContext() as never)).toMatchObject({ status: 'down', reason: { code: 'dns_unavailable' } });
    } finally {
      configureEmailDns({ servers: [`127.0.0.1:${dns.port}`] });
      broken.socket.close();
    }
  });

  test('typo suggestion: gmial.com → gmail.com, hotmial.com → hotmail.com; none for a real or unrelated domain', async () => {
    expect(suggestDomain('gmial.com')).toBe('gmail.com');
    expect(suggestDomain('gmail.con')).toBe('gmail.com');
    expect(suggestDomain('hotmial.com')).toBe('hotmail.com');
    expect(suggestDomain('yaho.com')).toBe('yahoo.com');
    expect(suggestDomain('gmail.com')).toBeUndefined();
    expect(suggestDomain('acme-mail.com')).toBeUndefined();
    expect((await validateEmail('dave@gmial.com')).suggestion).toBe('dave@gmail.com');
    expect((await callLocal<Json>('native-email-validate', 'alice@acme-mail.com')).suggestion).toBeNull();
  });

  test('a disposable provider is flagged', async () => {
    expect(await callLocal('native-email-validate', 'temp123@mailinator.com')).toMatchObject({ disposable: true, mx: { status: 'found' } });
  });

  test('syntax errors are reported with their code, without a DNS query', async () => {
    expect(await callLocal('native-email-validate', 'a..b@acme-mail.com')).toMatchObject({ syntax: { valid: false, code: 'EMPTY_LOCAL_SEGMENT' }, mx: { status: 'skipped' }, valid: false });
    expect(await callLocal('native-email-validate', 'x@localhost')).toMatchObject({ syntax: { valid: false, code: 'DOMAIN_SEGMENTS_COUNT' }, valid: false });
    expect(await callLocal('native-email-validate', 'x@-bad-.com')).toMatchObject({ syntax: { valid: false, code: 'DOMAIN_INVALID_CHARS' }, valid: false });
  });

  test('not an address at all: refused before payment', () => {
    expect(refusal('native-email-validate', 'not-an-email')).toContain('request does not have the expected format');
    expect(refusal('native-email-validate', `${'a'.repeat(65)}@acme-mail.com`)).toContain('expected format');
  });
});
