/**
 * Test-only network setup of the outbound tests: HTTP fakes on loopback, a resolver of made-up
 * names, and an address policy under which exactly one loopback address (127.0.0.2, where the
 * fakes listen) counts as public. Never reachable from config or a caller: only test code
 * constructs a client with these.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isPublicAddress, type AddressPolicy } from '../../services/outbound/addressPolicy.js';
import type { ResolvedAddress, Resolver } from '../../services/outbound/client.js';

/** The loopback address the fakes listen on, "public" under `testPolicy`. */
export const FAKE_PUBLIC_IP = '127.0.0.2';

/** Public addresses, plus the fakes' loopback address. */
export const testPolicy: AddressPolicy = (a) => a === FAKE_PUBLIC_IP || isPublicAddress(a);

/** A resolver over a fixed table; a function entry is called at each lookup (rebinding tests). Unknown names fail with ENOTFOUND. */
export function tableResolver(table: Record<string, readonly string[] | (() => readonly string[])>): Resolver & { calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const resolver = async (host: string): Promise<readonly ResolvedAddress[]> => {
    calls.set(host, (calls.get(host) ?? 0) + 1);
    const entry = table[host.toLowerCase()];
    if (!entry) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    const list = typeof entry === 'function' ? entry() : entry;
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolver, { calls });
}

/** A running fake: its base URL and how many requests it received. */
export interface Fake {
  readonly server: Server;
  readonly port: number;
  /** `http://<host>:<port>` */
  readonly url: string;
  hits: number;
  /** Requests of the fake, in order. */
  readonly requests: IncomingMessage[];
  close(): Promise<void>;
}

/** Starts an HTTP fake on `host` (default the "public" loopback address), port 0. */
export async function startFake(handler: (req: IncomingMessage, res: ServerResponse) => void, host = FAKE_PUBLIC_IP): Promise<Fake> {
  const requests: IncomingMessage[] = [];
  const fake = { hits: 0, requests } as Fake & { hits: number };
  const server = createServer((req, res) => {
    fake.hits++;
    requests.push(req);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  Object.assign(fake, {
    server,
    port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return fake;
}
