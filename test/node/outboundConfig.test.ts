/** The outbound client's and the providers' settings: defaults, each layer, validation. */
import { expect, test } from '@jest/globals';
import { loadConfig } from '../../node/config.js';
import { BRAVE_SEARCH_URL, DEFAULT_USER_AGENT } from '../../node/outboundConfig.js';
import { defaultOutboundOptions } from '../../services/outbound/client.js';

test('defaults: the client options and the providers, Brave URL set, keys unset', () => {
  const c = loadConfig([], {}, { cwd: '/tmp' });
  expect(c.outbound).toEqual({ ...defaultOutboundOptions, userAgent: DEFAULT_USER_AGENT });
  expect(DEFAULT_USER_AGENT).toMatch(/^native-node\/\d+\.\d+\.\d+ /);
  expect(c.providers).toMatchObject({ searxngUrl: undefined, braveSearchKey: undefined, braveSearchUrl: BRAVE_SEARCH_URL, rdapBootstrapFile: undefined });
});

test('flags and environment fill them; bad values are config_invalid', () => {
  const c = loadConfig(['--outbound-timeout', '9000', '--outbound-host-concurrency', '2', '--searxng-url', 'http://127.0.0.1:8888'], { NATIVE_BRAVE_SEARCH_KEY: 'secret', NATIVE_OUTBOUND_USER_AGENT: 'native-node/x (+https://example.org)' }, { cwd: '/tmp' });
  expect(c.outbound).toMatchObject({ timeoutMs: 9000, hostConcurrency: 2, userAgent: 'native-node/x (+https://example.org)' });
  expect(c.providers).toMatchObject({ searxngUrl: 'http://127.0.0.1:8888', braveSearchKey: 'secret' });
  expect(() => loadConfig(['--searxng-url', 'ftp://x'], {}, { cwd: '/tmp' })).toThrow(expect.objectContaining({ code: 'config_invalid' }));
  expect(() => loadConfig(['--outbound-max-redirects', '99'], {}, { cwd: '/tmp' })).toThrow(expect.objectContaining({ code: 'config_invalid' }));
});
