import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createParamsFromJson, paramsToJson, COIN } from '../../consensus/params.js';
import { createGenesisBlock, createGenesisState } from '../../consensus/genesis.js';
import { createDevnetChainParams, DEV_FUNDS, DEV_PAYEE_FLOAT, getDevKeyPair, getDevPayeeKeyPair } from '../../consensus/devnet.js';
import { blockHash } from '../../consensus/block.js';
import { isNodeError } from '../../consensus/errors.js';
import { StateOverlay } from '../../consensus/state.js';
import { writeChanges } from '../../consensus/apply.js';

const mainnetJson = JSON.parse(readFileSync(new URL('../../genesis.json', import.meta.url), 'utf8'));

type Json = Record<string, Record<string, unknown> & unknown>;

function rejects(mutate: (j: Json) => void): string | undefined {
  const j = structuredClone(mainnetJson);
  mutate(j);
  try {
    createParamsFromJson(j);
  } catch (e) {
    if (isNodeError(e)) return e.code;
    throw e;
  }
  return undefined;
}

describe('genesis.json', () => {
  test('mainnet parameters validate: native-mainnet, chain id 1, 3 s blocks', () => {
    const p = createParamsFromJson(mainnetJson);
    expect(p.network).toBe('native-mainnet');
    expect(p.chainId).toBe(1);
    expect(p.hrp).toBe('native');
    expect(p.targetSpacing).toBe(3);
    expect(p.reward.maxSupply).toBe(21_000_000n * COIN);
    expect(paramsToJson(p)).toEqual(mainnetJson);
  });
  test.each([
    ['a missing field', (j: Json) => delete j.reward],
    ['an unknown field', (j: Json) => (j.extra = {})],
    ['a fractional amount', (j: Json) => (j.reward.initial = '1.5')],
    ['a bad authority address', (j: Json) => (j.authorities.moderation = ['tnative1xyz'])],
    ['genesis bits easier than the pow limit', (j: Json) => (j.genesis.bits = '0x207fffff')],
    ['a threshold above the key count', (j: Json) => (j.authorities.bridgeThreshold = 9)],
    ['burn share above 100%', (j: Json) => ((j as Record<string, unknown>).burnShareBps = 10001)],
  ])('rejects %s with params_invalid_genesis', (_n, mutate) => {
    expect(rejects(mutate)).toBe('params_invalid_genesis');
  });
  test('mainnet genesis block is deterministic', () => {
    const p = createParamsFromJson(mainnetJson);
    expect(blockHash(createGenesisBlock(p).header)).toEqual(blockHash(createGenesisBlock(createParamsFromJson(mainnetJson)).header));
  });
});

describe('devnet', () => {
  test('another chain id, easy difficulty, a funded dev key, a payee holding its float', () => {
    const p = createDevnetChainParams();
    expect(p.chainId).not.toBe(1);
    expect(p.network).toBe('native-devnet');
    const state = new Map<string, Uint8Array>();
    writeChanges(state, createGenesisState(p));
    const view = new StateOverlay({ get: (k) => state.get(k) });
    expect(view.getAccount(getDevKeyPair().address).balance).toBe(DEV_FUNDS);
    // The payee's float pays its first refund's fee: a refund returns the whole price.
    expect(view.getAccount(getDevPayeeKeyPair().address).balance).toBe(DEV_PAYEE_FLOAT);
    expect(view.getSupply().minted).toBe(DEV_FUNDS + DEV_PAYEE_FLOAT);
  });
});
