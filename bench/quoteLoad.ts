/**
 * The x402 bench's load generator in a process of its own (`bench/x402.ts` spawns it with
 * `node --import tsx`): autocannon against one URL, so its CPU is not the bench process's and
 * can be read per process like the servers'. Takes its options as JSON in argv[2]
 * (`QuoteLoadOptions`), prints `{"msg":"start"}` right before the load begins and one
 * `{"msg":"done",…}` line (`QuoteLoadResult`) when it ends.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';

/** What the generator is asked to do. */
export interface QuoteLoadOptions {
  readonly url: string;
  /** The JSON body of every POST. */
  readonly body: string;
  readonly connections: number;
  readonly seconds: number;
}

/** What it measured (autocannon's figures; latencies in ms). */
export interface QuoteLoadResult {
  readonly total: number;
  readonly n402: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
}

/** One autocannon run of `o`: POSTs of `o.body` over `o.connections` keep-alive connections for `o.seconds`. */
export async function quoteLoad(o: QuoteLoadOptions): Promise<QuoteLoadResult> {
  const r = await autocannon({
    url: o.url,
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: o.body,
    connections: o.connections,
    duration: o.seconds,
  });
  return { total: r.requests.total, n402: r.statusCodeStats?.['402']?.count ?? 0, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts };
}

// Run as a script (not when x402.ts imports the function for its in-process mode).
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const o = JSON.parse(process.argv[2] ?? '') as QuoteLoadOptions;
  console.log(JSON.stringify({ msg: 'start' }));
  console.log(JSON.stringify({ msg: 'done', ...(await quoteLoad(o)) }));
}
