/**
 * `native-node rdap-bootstrap [--out <file>] [--url <url>]`: refreshes the IANA RDAP bootstrap
 * registry for DNS (`dns.json`) that native-domain-info reads. It fetches
 * https://data.iana.org/rdap/dns.json through the outbound client, checks it is a bootstrap
 * registry (RFC 9224) and replaces the file atomically: by default the snapshot shipped in the
 * repository (services/web/rdapBootstrap.json), else `--out` (point `rdapBootstrapFile` at it).
 */
import { renameSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createOutboundClient } from '../services/outbound/client.js';
import { DEFAULT_BOOTSTRAP_FILE, fetchBootstrap, IANA_DNS_BOOTSTRAP_URL } from '../services/web/rdap.js';
import { DEFAULT_USER_AGENT } from '../node/outboundConfig.js';

/** What the command did. */
export interface RdapBootstrapRefresh {
  readonly file: string;
  readonly url: string;
  readonly publication: string;
  readonly tlds: number;
}

/** Fetches the registry from `url` and writes it to `out` (default: the shipped snapshot). */
export async function refreshRdapBootstrap(opts: { out?: string; url?: string; cwd: string }): Promise<RdapBootstrapRefresh> {
  const url = opts.url ?? IANA_DNS_BOOTSTRAP_URL;
  const file = opts.out ? resolve(opts.cwd, opts.out) : fileURLToPath(DEFAULT_BOOTSTRAP_FILE);
  const fetched = await fetchBootstrap(createOutboundClient({ userAgent: DEFAULT_USER_AGENT }), url);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, fetched.text);
  renameSync(tmp, file);
  return { file, url, publication: fetched.publication, tlds: fetched.size };
}
