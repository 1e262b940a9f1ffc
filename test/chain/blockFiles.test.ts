/**
 * Block bodies in flat files: appended once and read by location, across file rotation, a reopen,
 * a crash that left unnamed bytes at a file's end, and damaged locations; the chain keeps its
 * bodies there (none in LevelDB), refuses to open without them, and still reads the bodies a data
 * directory from before the files keeps in LevelDB (`b:`), its transactions included.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { appendFile, readdir, rm, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { Level } from 'level';
import { BlockFiles, decodeBlockLocation, encodeBlockLocation } from '../../chain/blockFiles.js';
import { openChain } from '../../chain/chain.js';
import { layout } from '../../chain/layout.js';
import { encodeBlock } from '../../consensus/block.js';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { toHex } from '../../consensus/hash.js';
import { txId } from '../../consensus/tx.js';
import { fixedNow as now, trivialParams as params, trivialTransfer as pay } from '../helpers/chainRig.js';
import { testKey } from '../helpers/keys.js';
import { MemChain } from '../helpers/memChain.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { CountingVerifier } from '../helpers/verifier.js';

afterAll(cleanupTmp);

const dev = getDevKeyPair();
const miner = testKey('block-files-miner');
const other = testKey('block-files-other');
const body = (n: number, fill: number) => new Uint8Array(n).fill(fill);

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return undefined;
}

describe('block files', () => {
  test('bodies read back by location across files and a reopen; a new file once one is full', async () => {
    const dir = await tmpDir();
    const files = await BlockFiles.open(dir, { maxFileBytes: 2_500 });
    const bodies = [body(1_000, 1), body(1_000, 2), body(1_000, 3), body(3_000, 4)];
    const locs = [];
    for (const b of bodies) locs.push(await files.append(b));
    // Two records fit in 2,500 bytes; the third starts a file; a body larger than a file gets one to itself.
    expect(locs.map((l) => [l.file, l.offset, l.length])).toEqual([
      [0, 8, 1_000],
      [0, 1_016, 1_000],
      [1, 8, 1_000],
      [2, 8, 3_000],
    ]);
    for (const [i, l] of locs.entries()) expect(await files.read(l)).toEqual(bodies[i]);
    expect(await files.readRange(locs[1]!, 10, 5)).toEqual(body(5, 2));
    expect(decodeBlockLocation(encodeBlockLocation(locs[3]!))).toEqual(locs[3]);
    await files.close();
    expect((await readdir(join(dir, 'blocks'))).sort()).toEqual(['blk00000.dat', 'blk00001.dat', 'blk00002.dat']);

    const again = await BlockFiles.open(dir, { maxFileBytes: 2_500 });
    for (const [i, l] of locs.entries()) expect(await again.read(l)).toEqual(bodies[i]);
    // Appends continue after the last file's end.
    expect(await again.append(body(10, 5))).toEqual({ file: 3, offset: 8, length: 10 });
    await again.close();
  });

  test('bytes a crash left at the end are never read and the next body is written after them', async () => {
    const dir = await tmpDir();
    const files = await BlockFiles.open(dir);
    const first = await files.append(body(500, 7));
    await files.close();
    // A crash after part of a record was written, before the batch that would have named it.
    await appendFile(join(dir, 'blocks', 'blk00000.dat'), Uint8Array.of(0x4e, 0x42, 0x4c, 0x4b, 0xff, 0, 0, 0, 9, 9, 9));
    const again = await BlockFiles.open(dir);
    const next = await again.append(body(300, 8));
    expect(next).toEqual({ file: 0, offset: 508 + 11 + 8, length: 300 });
    expect(await again.read(first)).toEqual(body(500, 7));
    expect(await again.read(next)).toEqual(body(300, 8));
    await again.close();
  });

  test('a location that names no record is refused as chain_corrupt, never answered with other bytes', async () => {
    const dir = await tmpDir();
    const files = await BlockFiles.open(dir);
    const loc = await files.append(body(400, 1));
    await files.append(body(400, 2));
    expect(await codeOf(files.read({ ...loc, offset: loc.offset + 4 }))).toBe('chain_corrupt');
    expect(await codeOf(files.read({ ...loc, length: 399 }))).toBe('chain_corrupt');
    expect(await codeOf(files.read({ ...loc, file: 1 }))).toBe('chain_corrupt');
    expect(await codeOf(files.readRange(loc, 390, 20))).toBe('chain_corrupt');
    await files.close();
    await truncate(join(dir, 'blocks', 'blk00000.dat'), loc.offset + 100);
    const cut = await BlockFiles.open(dir);
    expect(await codeOf(cut.read(loc))).toBe('chain_corrupt');
    await cut.close();
  });
});

describe('the chain keeps block bodies in the block files', () => {
  test('no body in LevelDB; blocks and transactions read from the files after a reopen', async () => {
    const dir = await tmpDir();
    const chain = await openChain({ dataDir: dir, params, verifier: new CountingVerifier(), now });
    const mem = new MemChain(params);
    const tx = pay(dev, 0n, other.address, 5n);
    for (let i = 0; i < 3; i++) {
      const b = mem.build(i === 1 ? [tx] : [], miner.address);
      mem.connect(b);
      await chain.addBlock(encodeBlock(b));
    }
    const hashes = [0, 1, 2, 3].map((h) => chain.getEntryByHeight(h)!.hashHex);
    await chain.close();
    const db = new Level<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
    for (const h of hashes) {
      expect(await db.get(layout.block(h))).toBeUndefined();
      expect(await db.get(layout.blockFile(h))).toBeDefined();
    }
    await db.close();
    expect((await stat(join(dir, 'blocks', 'blk00000.dat'))).size).toBeGreaterThan(0);

    const again = await openChain({ dataDir: dir, params, verifier: new CountingVerifier(), now });
    for (const [h, hex] of hashes.entries()) expect(await again.getBlockBytes(hex)).toEqual(h === 0 ? expect.any(Uint8Array) : encodeBlock(mem.entries[h]!.block));
    const stored = await again.getTx(toHex(txId(tx)));
    expect(stored).toMatchObject({ height: 2, index: 0, blockHash: hashes[2] });
    expect(stored!.tx.nonce).toBe(0n);
    await again.close();
  });

  test('a chain directory without its block files is refused at open (chain_corrupt), not at the first read of a block', async () => {
    const dir = await tmpDir();
    const chain = await openChain({ dataDir: dir, params, verifier: new CountingVerifier(), now });
    const mem = new MemChain(params);
    const b1 = mem.build([], miner.address);
    mem.connect(b1);
    await chain.addBlock(encodeBlock(b1));
    await chain.close();
    await rm(join(dir, 'blocks'), { recursive: true });
    expect(await codeOf(openChain({ dataDir: dir, params, verifier: new CountingVerifier(), now }))).toBe('chain_corrupt');
  });

  test('a data directory from before the block files: bodies in LevelDB are read, new ones go to the files', async () => {
    const dir = await tmpDir();
    const chain = await openChain({ dataDir: dir, params, verifier: new CountingVerifier(), now });
    const mem = new MemChain(params);
    const tx = pay(dev, 0n, other.address, 9n);
    const b1 = mem.build([tx], miner.address);
    mem.connect(b1);
    await chain.addBlock(encodeBlock(b1));
    const hashes = [0, 1].map((h) => chain.getEntryByHeight(h)!.hashHex);
    await chain.close();
    // Rewrite it as the older layout kept it: bodies under b:, no f:, no block files.
    const db = new Level<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
    const files = await BlockFiles.open(dir);
    for (const h of hashes) {
      const bytes = await files.read(decodeBlockLocation((await db.get(layout.blockFile(h)))!));
      await db.batch([
        { type: 'put', key: layout.block(h), value: bytes },
        { type: 'del', key: layout.blockFile(h) },
      ]);
    }
    await files.close();
    await db.close();
    await truncate(join(dir, 'blocks', 'blk00000.dat'), 0);

    const old = await openChain({ dataDir: dir, params, verifier: new CountingVerifier(), now });
    expect(await old.getBlockBytes(hashes[1]!)).toEqual(encodeBlock(b1));
    expect((await old.getTx(toHex(txId(tx))))!.height).toBe(1);
    const b2 = mem.build([pay(dev, 1n, other.address, 1n)], miner.address);
    mem.connect(b2);
    expect((await old.addBlock(encodeBlock(b2))).status).toBe('connected');
    await old.close();
    const db2 = new Level<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
    expect(await db2.get(layout.block(toHex(mem.tip.hash)))).toBeUndefined();
    expect(await db2.get(layout.blockFile(toHex(mem.tip.hash)))).toBeDefined();
    await db2.close();
    const reopened = await openChain({ dataDir: dir, params, verifier: new CountingVerifier(), now });
    expect(await reopened.getBlockBytes(toHex(mem.tip.hash))).toEqual(encodeBlock(b2));
    expect(await reopened.getBlockBytes(hashes[1]!)).toEqual(encodeBlock(b1));
    expect(await reopened.exportState()).toEqual(mem.state);
    await reopened.close();
  });
});
