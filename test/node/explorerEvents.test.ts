/** The explorer's live feed (node/api/explorerRoutes.ts): a connected block and a reorganisation reach an open event stream, in order. */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { EventEmitter } from 'node:events';
import { createDevnetChainParams } from '../../consensus/devnet.js';
import type { ChainEntry, ChainEvents, ChainReader, MempoolReader } from '../../chain/types.js';
import { createJsonApp, HttpServer } from '../../node/api/http.js';
import { createExplorer, type Explorer } from '../../node/api/explorerRoutes.js';
import { silentLogger } from '../../chain/types.js';

const entry = (height: number, hashHex: string) => ({ hash: new Uint8Array(32), hashHex, height, header: { version: 1, prevHash: new Uint8Array(32), merkleRoot: new Uint8Array(32), time: 1_800_000_000 + height, bits: 0x207fffff, nonce: 0 }, chainWork: 1n, txCount: 0, size: 120 }) as ChainEntry;

class StubChain extends EventEmitter<ChainEvents> {
  tip = entry(7, 'aa'.repeat(32));
  /** The best chain by height (for `?since=`). */
  byHeight = new Map<number, ChainEntry>();
  getEntryByHeight(h: number): ChainEntry | undefined {
    return this.byHeight.get(h);
  }
  async getBlock(): Promise<{ txs: [] }> {
    return { txs: [] };
  }
}

let chain: StubChain;
let explorer: Explorer;
let server: HttpServer;

beforeAll(async () => {
  chain = new StubChain();
  explorer = createExplorer({ chain: chain as unknown as ChainReader & StubChain, mempool: { count: 0 } as unknown as MempoolReader, params: createDevnetChainParams(), version: 'test' });
  const opts = { host: '127.0.0.1', port: 0, bodyLimit: 1024, timeoutMs: 5_000, version: 'test' };
  server = new HttpServer(opts, createJsonApp(opts, silentLogger, [explorer.router]));
  await server.start();
});

afterAll(async () => {
  explorer.stop();
  await server.stop(100);
});

/** Reads an event stream as text: `readUntil(marker)` reads on until the text holds `marker`. */
function streamReader(res: Response) {
  const reader = res.body!.getReader();
  let text = '';
  const readUntil = async (marker: string) => {
    while (!text.includes(marker)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended before ${marker}`);
      text += Buffer.from(value).toString('utf8');
    }
  };
  return { reader, readUntil, text: () => text };
}

describe('explorer events', () => {
  test('hello, then block, then disconnect (a reorganisation), as server-sent events', async () => {
    const res = await fetch(`${server.url}/explorer/events`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { reader, readUntil, text } = streamReader(res);
    await readUntil('event: hello');
    expect(explorer.clients()).toBe(1);
    const b8 = entry(8, 'bb'.repeat(32));
    chain.emit('connect', b8, { txs: [] } as never, []);
    await readUntil('event: block');
    chain.emit('disconnect', b8, { txs: [] } as never);
    await readUntil('event: disconnect');
    const frames = text().split('\n\n').filter(Boolean);
    expect(frames[0]).toMatch(/^retry: 2000\nevent: hello/);
    const events = frames.map((f) => /event: (\w+)\ndata: (.*)/.exec(f)).filter((m) => m !== null).map((m) => [m![1], JSON.parse(m![2])]);
    expect(events).toEqual([
      ['hello', { height: 7, hash: 'aa'.repeat(32) }],
      // The live figures ride along: the block's difficulty, the hashrate estimate, the mempool's size, and every mined id (a pending row leaves the list).
      ['block', { height: 8, hash: 'bb'.repeat(32), time: 1_800_000_008, txCount: 0, size: 120, txs: [], ids: [], difficulty: expect.any(Number), hashrate: expect.any(Number), mempool: 0 }],
      ['disconnect', { height: 8, hash: 'bb'.repeat(32) }],
    ]);
    await reader.cancel();
    for (let i = 0; i < 50 && explorer.clients() > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(explorer.clients()).toBe(0);
  });

  test('?since=<the page\'s newest block>: the blocks connected since come first, oldest first, then the live ones', async () => {
    const saved = chain.tip;
    for (const h of [8, 9, 10]) chain.byHeight.set(h, entry(h, String(h).repeat(64).slice(0, 64)));
    chain.tip = chain.byHeight.get(10)!;
    try {
      const res = await fetch(`${server.url}/explorer/events?since=8`);
      const { reader, readUntil, text } = streamReader(res);
      await readUntil('"height":10');
      const b11 = entry(11, 'cc'.repeat(32));
      chain.emit('connect', b11, { txs: [] } as never, []);
      await readUntil('"height":11');
      const heights = [...text().matchAll(/event: (\w+)\ndata: (.*)/g)].map((m) => `${m[1]} ${JSON.parse(m[2]).height}`);
      expect(heights).toEqual(['hello 10', 'block 9', 'block 10', 'block 11']);
      await reader.cancel();
    } finally {
      chain.tip = saved;
    }
  });
});
