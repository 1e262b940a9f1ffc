/** The dashboard's history (node/nodeHistory.ts): samples, the hour ring, minute records, the bounded file and its reload. */
import { afterEach, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChainEntry, ChainReader } from '../../chain/types.js';
import { createNodeHistory, HISTORY_FILE } from '../../node/nodeHistory.js';
import { historyColumns } from '../../node/views.js';

/** A chain stub: one block every 3 s, `height` blocks. */
function chainOf(height: () => number): ChainReader {
  const entry = (h: number) => ({ hash: new Uint8Array(32), hashHex: '00'.repeat(32), height: h, header: { version: 1, prevHash: new Uint8Array(32), merkleRoot: new Uint8Array(32), time: 1_000 + 3 * h, bits: 0x207fffff, nonce: 0 }, chainWork: BigInt(h) * 1000n, txCount: 0, size: 200 }) as ChainEntry;
  return {
    get tip() {
      return entry(height());
    },
    getEntryByHeight: (h: number) => (h <= height() ? entry(h) : undefined),
  } as unknown as ChainReader;
}

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('dashboard history', () => {
  test('samples figures and per-period call counts; the hour ring is bounded; minutes fold and persist', async () => {
    dir = mkdtempSync(join(tmpdir(), 'native-history-'));
    let t = 1_800_000_000_000; // a minute boundary
    let height = 20;
    let shares = { connections: 2, accepted: 10, rejected: 1, hashrate: 5e6 };
    const h = createNodeHistory({ chain: chainOf(() => height), mempool: { count: 4 }, peers: () => 3, syncing: () => false, mining: () => shares, refundsPending: () => 1, refundsSent: () => 7 }, { dataDir: dir, intervalMs: 5_000, now: () => t });
    const first = h.sample();
    expect(first).toMatchObject({ height: 20, blockInterval: 3, mempool: 4, peers: 3, syncing: 0, workers: 2, poolHashrate: 5e6, sharesAccepted: 0, callsNative: 0, settleMs: null, refundsPending: 1, refundsSent: 7 });
    h.recordCall({ serviceId: 'native-world-clock', rail: 'native', paid: true, refunded: false, seconds: 1 });
    h.recordCall({ serviceId: 'native-world-clock', rail: 'native', paid: true, refunded: true, seconds: 3 });
    h.recordCall({ serviceId: 'native-fx', rail: 'usdc', paid: true, refunded: false, seconds: 2 });
    h.recordCall({ serviceId: 'native-fx', rail: 'native', paid: false, refunded: false, seconds: 0 }); // a quote: not counted
    shares = { ...shares, accepted: 16, rejected: 2 };
    t += 5_000;
    height = 22;
    const second = h.sample();
    expect(second).toMatchObject({ height: 22, sharesAccepted: 6, sharesRejected: 1, callsNative: 2, callsUsdc: 1, refunded: 1, settleMs: 2000, calls: { 'native native-world-clock': 2, 'usdc native-fx': 1 } });
    const cols = historyColumns(h.series('hour'));
    // Per minute: the calls and shares of the minute ending with each sample (2 calls are 2 per minute, not 24).
    expect(cols.nativePerMin).toEqual([0, 2]);
    expect(cols.sharesPerMin).toEqual([0, 6]);
    for (let i = 0; i < 12; i++) {
      t += 5_000;
      h.sample();
    }
    const minuteLater = historyColumns(h.series('hour')).nativePerMin;
    expect(minuteLater.slice(1, 13)).toEqual(Array(12).fill(2)); // a minute long
    expect(minuteLater.slice(13)).toEqual([0]);
    // 12 samples a minute for 70 minutes in all: the hour keeps 720, the day one record per finished minute.
    for (let i = 0; i < 12 * 70 - 12; i++) {
      t += 5_000;
      h.sample();
    }
    expect(h.series('hour')).toHaveLength(720);
    const day = h.series('day');
    expect(day.length).toBe(71); // 70 finished minutes and the current one
    expect(day[0]).toMatchObject({ span: 60, callsNative: 2, callsUsdc: 1, settleMs: 2000, sharesAccepted: 6 });
    await h.stop();
    const lines = readFileSync(join(dir, HISTORY_FILE), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(71); // 70 finished minutes and the one in progress, written at stop
    // A restart reads the day back (a torn last line is skipped).
    writeFileSync(join(dir, HISTORY_FILE), `${lines.join('\n')}\n{"t":`);
    const again = createNodeHistory({ chain: chainOf(() => height), mempool: { count: 0 } }, { dataDir: dir, intervalMs: 5_000, now: () => t });
    await again.start();
    expect(again.series('day').length).toBe(72);
    expect(again.series('day')[0]).toMatchObject({ callsNative: 2 });
    // The hour's charts start with the minute records of the last hour, then the new samples.
    const hour = again.series('hour');
    expect(hour.length).toBeGreaterThanOrEqual(60);
    expect(hour.slice(0, -1).every((r) => r.span > 5 && r.t > t / 1000 - 3600)).toBe(true); // minute records (the last one partial, written at stop)
    expect(hour.at(-1)!.span).toBe(5);
    await again.stop();
  });
});
