/** Wire codecs and limits of the sync protocol; the error → gossip verdict switch; block integrity; peer scores. */
import { describe, expect, test } from '@jest/globals';
import { encodeBlock, type Block } from '../../consensus/block.js';
import { CodecError, NodeError, TxErrorCode, ValidationError } from '../../consensus/errors.js';
import { createDevnetChainParams } from '../../consensus/devnet.js';
import { assembleBlock, grindHeader } from '../../consensus/assemble.js';
import { createGenesisBlock, createGenesisState } from '../../consensus/genesis.js';
import { blockHash } from '../../consensus/block.js';
import { encodeTx, signTx, TxType, TX_VERSION } from '../../consensus/tx.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { writeChanges } from '../../consensus/apply.js';
import { validateBlockBody } from '../../consensus/validate.js';
import { areIdsCommitted, prepareBlock } from '../../chain/blockQueue.js';
import {
  MAX_BLOCKS_PER_REQUEST,
  MAX_HEADERS,
  MAX_LOCATOR_HASHES,
  MAX_REQUEST_BYTES,
  MsgType,
  decodeBlockFrame,
  decodeHeaders,
  decodeRequest,
  decodeStatus,
  encodeBlockFrame,
  encodeHeaders,
  encodeNotFound,
  encodeRequest,
  encodeStatus,
  protocolIds,
  zeroHash,
} from '../../p2p/protocol.js';
import { checkBlockIntegrity, verdictOf } from '../../p2p/verdict.js';
import { PeerScores } from '../../p2p/scoring.js';
import { peerErrorOf } from '../../p2p/syncProtocol.js';

const h = (n: number) => new Uint8Array(32).fill(n);

describe('sync protocol codec', () => {
  test('requests round-trip', () => {
    for (const req of [
      { type: 'status' as const },
      { type: 'getHeaders' as const, locator: [h(1), h(2)], stop: zeroHash(), max: MAX_HEADERS },
      { type: 'getBlocks' as const, hashes: Array.from({ length: MAX_BLOCKS_PER_REQUEST }, (_, i) => h(i)) },
    ]) {
      const bytes = encodeRequest(req);
      expect(bytes.length).toBeLessThanOrEqual(MAX_REQUEST_BYTES);
      expect(decodeRequest(bytes)).toEqual(req);
    }
  });

  test('malformed and out-of-limit requests are codec errors', () => {
    const bad = [
      new Uint8Array(0),
      Uint8Array.of(0x7f),
      Uint8Array.of(MsgType.STATUS, 0),
      Uint8Array.of(MsgType.GET_BLOCKS, 0),
      Uint8Array.of(MsgType.GET_BLOCKS, MAX_BLOCKS_PER_REQUEST + 1),
      Uint8Array.of(MsgType.GET_HEADERS, MAX_LOCATOR_HASHES + 1),
      Uint8Array.of(MsgType.GET_BLOCKS, 1, 1, 2, 3),
      new Uint8Array(MAX_REQUEST_BYTES + 1),
    ];
    for (const b of bad) expect(() => decodeRequest(b)).toThrow(CodecError);
    expect(() => encodeRequest({ type: 'getBlocks', hashes: [] })).toThrow(CodecError);
  });

  test('status, headers and block frames round-trip', () => {
    const status = { chainId: 1337, genesis: h(9), height: 123_456, tip: h(8), chainWork: (1n << 200n) + 5n };
    expect(decodeStatus(encodeStatus(status))).toEqual(status);
    expect(decodeStatus(encodeStatus({ ...status, chainWork: 0n })).chainWork).toBe(0n);
    const params = createDevnetChainParams({ genesisTime: 1_700_000_000 });
    const g = createGenesisBlock(params);
    expect(decodeHeaders(encodeHeaders([g.header, g.header]))).toEqual([g.header, g.header]);
    expect(() => decodeHeaders(encodeHeaders([g.header, g.header]), 1)).toThrow(CodecError);
    const bytes = encodeBlock(g);
    const f = decodeBlockFrame(encodeBlockFrame(bytes).subarray());
    expect(f.type === 'block' && Buffer.from(f.bytes).equals(Buffer.from(bytes))).toBe(true);
    expect(decodeBlockFrame(encodeNotFound(h(3)))).toEqual({ type: 'notFound', hash: h(3) });
    expect(() => decodeBlockFrame(Uint8Array.of(MsgType.BLOCK, 1, 2))).toThrow(CodecError);
  });

  test('protocol ids are scoped to the genesis hash', () => {
    const ids = protocolIds(Uint8Array.from({ length: 32 }, (_, i) => i));
    expect(ids).toEqual({
      net: '0001020304050607',
      sync: '/native/0001020304050607/sync/1.0.0',
      txTopic: '/native/0001020304050607/tx/1',
      blockTopic: '/native/0001020304050607/block/1',
      kad: '/native/0001020304050607/kad/1.0.0',
      mempool: '/native/0001020304050607/mempool/1.0.0',
    });
  });

  test('stream failures map to misbehaviour points', () => {
    const named = (name: string) => Object.assign(new Error(name), { name });
    expect(peerErrorOf(named('InvalidDataLengthError'), 'x').points).toBe(100);
    expect(peerErrorOf(new CodecError('codec_truncated', 'short'), 'x').points).toBe(100);
    expect(peerErrorOf(named('TimeoutError'), 'x').points).toBe(5);
    expect(peerErrorOf(named('SomethingElse'), 'x').points).toBe(0);
  });
});

describe('gossip verdicts (the one switch)', () => {
  test('consensus errors follow their action and ban score; stateful tx rules and policy are ignored', () => {
    expect(verdictOf('block', new ValidationError('block_high_hash', 'x'))).toEqual({ result: 'reject', banScore: 100, code: 'block_high_hash' });
    expect(verdictOf('block', new ValidationError('block_time_too_new', 'x', { action: 'ignore' }))).toEqual({ result: 'ignore', banScore: 0, code: 'block_time_too_new' });
    expect(verdictOf('tx', new ValidationError(TxErrorCode.BAD_SIGNATURE, 'x'))).toMatchObject({ result: 'reject', banScore: 100 });
    expect(verdictOf('tx', new ValidationError(TxErrorCode.BAD_NONCE, 'x'))).toMatchObject({ result: 'ignore', banScore: 0 });
    expect(verdictOf('tx', new ValidationError(TxErrorCode.INSUFFICIENT_FUNDS, 'x'))).toMatchObject({ result: 'ignore' });
    expect(verdictOf('block', new ValidationError(TxErrorCode.BAD_NONCE, 'x'))).toMatchObject({ result: 'reject' });
    expect(verdictOf('tx', new CodecError('codec_truncated', 'x'))).toMatchObject({ result: 'reject', banScore: 100 });
    expect(verdictOf('tx', new NodeError('mempool_duplicate', 'x'))).toMatchObject({ result: 'ignore', banScore: 0 });
    expect(verdictOf('tx', new NodeError('mempool_full', 'x'))).toMatchObject({ result: 'ignore' });
    expect(verdictOf('tx', new NodeError('mempool_queue_full', 'x'))).toMatchObject({ result: 'ignore' });
    // A transaction that can never be mined (a future nonce its sender cannot pay) is scored like invalid data, 20 points each.
    expect(verdictOf('tx', new NodeError('mempool_unpayable', 'x'))).toEqual({ result: 'reject', banScore: 20, code: 'mempool_unpayable' });
    expect(verdictOf('block', new Error('bug'))).toEqual({ result: 'ignore', banScore: 0, code: 'internal_error' });
    expect(verdictOf('block', new ValidationError('block_bad_bits', 'x', { banScore: 20 }))).toMatchObject({ result: 'reject', banScore: 20 });
  });

  test('block integrity: the genuine body passes; a mutated one (other tx, duplicated tx, junk) fails before the chain sees it', () => {
    const params = createDevnetChainParams({ genesisBits: 0x207fffff, genesisTime: 1_700_000_000 });
    const state = new Map<string, Uint8Array>();
    writeChanges(state, createGenesisState(params));
    const g = createGenesisBlock(params);
    const dev = getDevKeyPair();
    const mk = (nonce: bigint) =>
      signTx({ version: TX_VERSION, chainId: params.chainId, type: TxType.transfer, nonce, fee: 20_000n, payload: transfer.encodePayload({ to: h(5).subarray(0, 20), amount: 1n }), publicKey: nonce === 0n ? dev.publicKey : undefined }, dev);
    const txs = [mk(0n), mk(1n), mk(2n)];
    const draft = assembleBlock({ parent: { hash: blockHash(g.header), height: 0, time: g.header.time }, medianTimePast: g.header.time, now: g.header.time + 3, txs, miner: h(1).subarray(0, 20), state: { get: (k) => state.get(k) } }, params);
    const block: Block = { ...draft, header: grindHeader(draft.header, params.powLimit)! };
    const good = encodeBlock(block);
    expect(Buffer.from(checkBlockIntegrity(good).hash).equals(Buffer.from(blockHash(block.header)))).toBe(true);
    const swapped = encodeBlock({ ...block, txs: [txs[0], txs[1], mk(3n)] });
    expect(() => checkBlockIntegrity(swapped)).toThrow(expect.objectContaining({ code: 'block_bad_merkle_root' }) as unknown as Error);
    const duplicated = encodeBlock({ ...block, txs: [...txs, txs[2]] }, [...txs, txs[2]].map(encodeTx));
    expect(() => checkBlockIntegrity(duplicated)).toThrow(expect.objectContaining({ code: 'block_duplicate_tx' }) as unknown as Error);
    expect(() => checkBlockIntegrity(good.subarray(0, good.length - 1))).toThrow(CodecError);
    expect(() => checkBlockIntegrity(new Uint8Array(50))).toThrow(CodecError);

    // With the bytes decoded by prepareBlock: a passing check is noted, so the chain's body check
    // reuses it; a failing one is not, and the body check still finds the bad merkle root itself.
    const preparedGood = prepareBlock(good);
    expect(areIdsCommitted(preparedGood)).toBe(false);
    checkBlockIntegrity(good, preparedGood);
    expect(areIdsCommitted(preparedGood)).toBe(true);
    const preparedSwapped = prepareBlock(swapped);
    expect(() => checkBlockIntegrity(swapped, preparedSwapped)).toThrow(expect.objectContaining({ code: 'block_bad_merkle_root' }) as unknown as Error);
    expect(areIdsCommitted(preparedSwapped)).toBe(false);
    expect(() => validateBlockBody(preparedSwapped.block, 1, params, undefined, preparedSwapped.txIds, areIdsCommitted(preparedSwapped))).toThrow(
      expect.objectContaining({ code: 'block_bad_merkle_root' }) as unknown as Error,
    );
    expect(() => checkBlockIntegrity(swapped, preparedGood)).toThrow(RangeError); // a prepared block of other bytes
  });
});

describe('peer scores', () => {
  test('points add up to a temporary ban; they decay; bans expire', () => {
    let now = 1_000_000;
    const bans: string[] = [];
    const s = new PeerScores({ banThreshold: 100, banSeconds: 60, decayPerMinute: 10, now: () => now });
    s.onBan = (b) => bans.push(b.peerId);
    expect(s.penalize('p1', 50, 'a')).toBe(false);
    now += 60_000; // 10 points forgiven
    expect(s.score('p1')).toBeCloseTo(40);
    expect(s.penalize('p1', 50, 'b')).toBe(false);
    expect(s.penalize('p1', 10, 'c')).toBe(true);
    expect(bans).toEqual(['p1']);
    expect(s.isBanned('p1')).toBe(true);
    expect(s.listBans()).toEqual([{ peerId: 'p1', until: now + 60_000, reason: 'c' }]);
    expect(s.penalize('p1', 100, 'again')).toBe(true);
    expect(bans).toEqual(['p1']);
    now += 60_001;
    expect(s.isBanned('p1')).toBe(false);
    expect(s.listBans()).toEqual([]);
    expect(s.penalize('p2', 0, 'nothing')).toBe(false);
    expect(s.penalize('p3', 100, 'garbage')).toBe(true);
  });
});
