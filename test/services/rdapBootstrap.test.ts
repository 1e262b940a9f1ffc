/** The shipped IANA RDAP bootstrap snapshot, domain normalisation, and the `rdap-bootstrap` refresh command against a loopback fake. */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { refreshRdapBootstrap } from '../../cli/rdapBootstrapCommand.js';
import { loadBootstrap, normaliseDomain, parseBootstrap } from '../../services/web/rdap.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { startFake, type Fake } from './outboundFakes.js';

let iana: Fake;
let body = '';
beforeAll(async () => {
  iana = await startFake((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  }, '127.0.0.1');
});
afterAll(async () => {
  await iana.close();
  await cleanupTmp();
});

test('the shipped snapshot: its date, its size, the servers of well-known TLDs', () => {
  const b = loadBootstrap();
  expect(b.publication).toBe('2026-06-26T18:00:02Z');
  expect(b.size).toBe(1199);
  expect(b.serverFor('example.com')).toBe('https://rdap.verisign.com/com/v1/');
  expect(b.serverFor('a.b.example.net')).toBe('https://rdap.verisign.com/net/v1/');
  expect(b.serverFor('wikipedia.org')).toBe('https://rdap.publicinterestregistry.org/rdap/');
  expect(b.serverFor('bbc.co.uk')).toBe('https://rdap.nominet.uk/uk/');
  expect(b.serverFor('web.dev')).toBe('https://pubapi.registry.google/rdap/');
  expect(b.serverFor('x.ai')).toBe('https://rdap.identitydigital.services/rdap/');
  expect(b.serverFor(normaliseDomain('müller.berlin')!)).toBe('https://rdap.nic.berlin/v1/');
  expect(b.probeServer).toBe('https://rdap.verisign.com/com/v1/');
  // No RDAP server registered for .de in the registry.
  expect(b.serverFor('example.de')).toBeUndefined();
});

test('domains are normalised to lower-case A-labels without the trailing dot', () => {
  expect(normaliseDomain('Example.COM.')).toBe('example.com');
  expect(normaliseDomain('bücher.example')).toBe('xn--bcher-kva.example');
  expect(normaliseDomain('localhost')).toBeUndefined();
});

test('rdap-bootstrap writes a fetched registry atomically and refuses a malformed one', async () => {
  const dir = await tmpDir('native-rdap-refresh-');
  const file = join(dir, 'dns.json');
  body = JSON.stringify({ description: 'RDAP bootstrap file for Domain Name System registrations', publication: '2026-11-20T12:00:00Z', services: [[['com', 'net'], ['http://rdap.example/', 'https://rdap.example/']]], version: '1.0' });
  const r = await refreshRdapBootstrap({ out: 'dns.json', url: `${iana.url}/rdap/dns.json`, cwd: dir });
  expect(r).toEqual({ file, url: `${iana.url}/rdap/dns.json`, publication: '2026-11-20T12:00:00Z', tlds: 2 });
  const written = parseBootstrap(JSON.parse(readFileSync(file, 'utf8')));
  // https is preferred when a server is listed with both schemes (RFC 9224 §5).
  expect(written.serverFor('example.com')).toBe('https://rdap.example/');
  expect(iana.requests.at(-1)!.headers['user-agent']).toMatch(/^native-node\//);

  body = '{"services": "nope"}';
  writeFileSync(file, 'previous');
  await expect(refreshRdapBootstrap({ out: file, url: `${iana.url}/rdap/dns.json`, cwd: dir })).rejects.toThrow(/bootstrap/);
  expect(readFileSync(file, 'utf8')).toBe('previous');
  expect(existsSync(`${file}.${process.pid}.tmp`)).toBe(false);
});
