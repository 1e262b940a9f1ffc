/** The dashboard's alerts: each rule raises its code from the figures an operator must act on, and a healthy node raises none. */
import { describe, expect, test } from '@jest/globals';
import { dashboardAlerts, durationText, type DashboardNow } from '../../discovery/pages/dashboard.js';

const healthy: DashboardNow = {
  now: 1_000_000,
  height: 100,
  tipTime: 1_000_000 - 5,
  targetSeconds: 10,
  stallFactor: 4,
  difficulty: 1,
  hashrate: 1000,
  blockInterval: 10,
  mempool: 0,
  peers: 3,
  syncing: false,
  p2p: { bootstrap: 1 },
  miner: { running: true, hashrate: 1000 },
  stratum: { listening: true, url: 'stratum+tcp://127.0.0.1:3333', connections: 1, workers: 1, acceptedPerMin: 10, rejectedPerMin: 0 },
  services: { total: 58, down: [] },
  refundsPending: 0,
  refundsStuck: 0,
  refundsSent: 0,
  settled: 0,
};
const codes = (n: Partial<DashboardNow>) => dashboardAlerts({ ...healthy, ...n }).map((a) => a.code);

describe('dashboard alerts', () => {
  test('a healthy node raises none', () => {
    expect(dashboardAlerts(healthy)).toEqual([]);
  });

  test('no block for more than stallFactor target intervals (not while syncing)', () => {
    expect(codes({ tipTime: healthy.now - 40 })).toEqual([]);
    expect(codes({ tipTime: healthy.now - 41 })).toEqual(['no_blocks']);
    expect(dashboardAlerts({ ...healthy, tipTime: healthy.now - 200 })[0].message).toBe('No block for 3 min 20 s (20× the target interval of 10 s); the tip is block 100.');
    expect(codes({ tipTime: healthy.now - 200, syncing: true })).toEqual([]);
  });

  test('nothing mining, Stratum down or rejecting, no peers', () => {
    expect(codes({ miner: undefined, stratum: undefined, peers: 0 })).toEqual(['not_mining', 'no_peers']);
    expect(codes({ miner: { running: false, hashrate: 0 }, stratum: { ...healthy.stratum!, workers: 0 }, peers: 0, p2p: undefined })).toEqual(['not_mining']);
    expect(codes({ stratum: { ...healthy.stratum!, listening: false, url: null } })).toEqual(['stratum_down']);
    expect(codes({ stratum: { ...healthy.stratum!, acceptedPerMin: 2, rejectedPerMin: 3 } })).toEqual(['stratum_rejects']);
    // A standalone devnet node (no bootstrap peers) is not alone by mistake; a mainnet node is.
    expect(codes({ peers: 0, p2p: { bootstrap: 0, devnet: true } })).toEqual([]);
    expect(codes({ peers: 0, p2p: { bootstrap: 0, devnet: false } })).toEqual(['no_peers']);
  });

  test('refunds and services', () => {
    expect(codes({ refundsPending: 2 })).toEqual(['refunds_pending']);
    expect(codes({ refundsPending: 2, refundsStuck: 1 })).toEqual(['refunds_stuck']);
    const down = dashboardAlerts({ ...healthy, services: { total: 58, down: ['a', 'b', 'c', 'd', 'e', 'f'] } });
    expect(down.map((a) => [a.code, a.level, a.message])).toEqual([['services_down', 'warn', '6 of 58 services down (not sold): a, b, c, d, e and more.']]);
  });

  test('durations in words', () => {
    expect([durationText(45), durationText(60), durationText(200), durationText(3600), durationText(7500)]).toEqual(['45 s', '1 min', '3 min 20 s', '1 h', '2 h 5 min']);
  });
});
