/** What `native-node status` says about Stratum: its URL when listening, "off" when off, and why when it gave up its port — never "starting" for a Stratum that will not start. */
import { describe, expect, test } from '@jest/globals';
import { formatMiningLines, type MiningResponse } from '../../../node/mining/stats.js';

const totals = { workers: 0, connectedWorkers: 0, hashrate: 0, accepted: 0, rejected: 0, stale: 0, blocksFound: 0 };
const base: MiningResponse = { stratum: { enabled: true, url: 'stratum+tcp://127.0.0.1:3333', connections: 0 }, rpc: { enabled: false }, totals, workers: [], blocks: [] };

describe('status lines of Stratum', () => {
  test('listening, off, and off because its port was taken', () => {
    expect(formatMiningLines(base)[0]).toBe('stratum    stratum+tcp://127.0.0.1:3333, 0 connection(s), 0 worker(s) online, 0 H/s');
    expect(formatMiningLines({ ...base, stratum: { enabled: false, url: null, connections: 0 } })[0]).toBe('stratum    off');
    const taken = formatMiningLines({ ...base, stratum: { enabled: false, url: null, connections: 0, listenError: 'cannot listen for Stratum on 127.0.0.1:3333: EADDRINUSE' } })[0];
    expect(taken).toBe('stratum    off (cannot listen for Stratum on 127.0.0.1:3333: EADDRINUSE; set --stratum-port)');
    expect(taken).not.toContain('starting');
  });
});
