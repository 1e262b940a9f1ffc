import { describe, expect, test } from '@jest/globals';
import { base58, bech32, bech32m, createBase58check } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import { encodeAddress } from '../../consensus/address.js';
import { classifyAddress, toChecksumAddress } from '../../services/addresses.js';

const b58c = createBase58check(sha256);
const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);
const segwit = (hrp: string, version: number, program: Uint8Array, m: boolean) => (m ? bech32m : bech32).encode(hrp, [version, ...bech32.toWords(program)]);

describe('classifyAddress', () => {
  test('this chain: mainnet and testnet hrps, bech32m only, 20-byte ids', () => {
    const id = bytes(20, 9);
    const main = classifyAddress(encodeAddress(id, 'native'));
    expect(main).toMatchObject({ valid: true, family: 'native', network: 'native-mainnet', type: 'account', encoding: 'bech32m', details: { hrp: 'native', accountId: '09'.repeat(20) } });
    const test_ = classifyAddress(encodeAddress(id, 'tnative').toUpperCase());
    expect(test_).toMatchObject({ valid: true, network: 'native-testnet', normalized: encodeAddress(id, 'tnative') });
    expect(classifyAddress(bech32.encode('native', bech32.toWords(id)))).toMatchObject({ valid: false, family: 'native', reason: expect.stringContaining('bech32m') });
    expect(classifyAddress(bech32m.encode('native', bech32m.toWords(bytes(32, 1))))).toMatchObject({ valid: false, reason: 'an account id is 20 bytes' });
    const good = encodeAddress(id, 'native');
    const tampered = good.slice(0, -1) + (good.endsWith('q') ? 'p' : 'q');
    expect(classifyAddress(tampered)).toMatchObject({ valid: false, family: 'native' });
    const mixed = good.slice(0, 8) + good.slice(8).toUpperCase();
    expect(classifyAddress(mixed)).toMatchObject({ valid: false, reason: expect.stringContaining('mix') });
  });

  test('EVM: EIP-55 vectors, unchecksummed forms, bad checksum', () => {
    for (const a of ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB', '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb']) {
      expect(toChecksumAddress(a.toLowerCase())).toBe(a);
      expect(classifyAddress(a)).toMatchObject({ valid: true, family: 'evm', network: 'evm', normalized: a, details: { checksum: 'valid' } });
      expect(classifyAddress(a.toLowerCase())).toMatchObject({ valid: true, normalized: a, details: { checksum: 'absent' } });
    }
    expect(classifyAddress('0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed')).toMatchObject({ valid: false, family: 'evm', reason: expect.stringContaining('EIP-55') });
    expect(classifyAddress('0x' + '0'.repeat(40))).toMatchObject({ valid: true, warnings: [expect.stringContaining('zero address')] });
    expect(classifyAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeA')).toMatchObject({ valid: false, family: null });
  });

  test('Bitcoin base58check: P2PKH and P2SH, bad checksum', () => {
    expect(classifyAddress('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa')).toMatchObject({ valid: true, family: 'bitcoin', network: 'bitcoin', type: 'p2pkh', encoding: 'base58check', details: { versionByte: 0 } });
    expect(classifyAddress('3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy')).toMatchObject({ valid: true, type: 'p2sh', networks: ['bitcoin', 'litecoin'] });
    expect(classifyAddress('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb')).toMatchObject({ valid: false, family: 'bitcoin', reason: 'bad base58check checksum' });
  });

  test('Litecoin base58check: L… P2PKH, M… P2SH', () => {
    const l = b58c.encode(Uint8Array.of(0x30, ...bytes(20, 3)));
    const m = b58c.encode(Uint8Array.of(0x32, ...bytes(20, 4)));
    expect(l[0]).toBe('L');
    expect(m[0]).toBe('M');
    expect(classifyAddress(l)).toMatchObject({ valid: true, family: 'litecoin', network: 'litecoin', type: 'p2pkh' });
    expect(classifyAddress(m)).toMatchObject({ valid: true, family: 'litecoin', type: 'p2sh' });
    expect(classifyAddress(b58c.encode(Uint8Array.of(0x99, ...bytes(20, 4))))).toMatchObject({ valid: false, reason: expect.stringContaining('version byte 0x99') });
  });

  test('segwit: BIP-173/350 witness-version rules for bc and ltc', () => {
    expect(classifyAddress('BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4')).toMatchObject({ valid: true, family: 'bitcoin', type: 'p2wpkh', encoding: 'bech32', normalized: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', details: { witnessVersion: 0 } });
    expect(classifyAddress('bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq')).toMatchObject({ valid: true, type: 'p2wpkh' });
    expect(classifyAddress('bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0')).toMatchObject({ valid: true, type: 'p2tr', encoding: 'bech32m', details: { witnessVersion: 1 } });
    expect(classifyAddress(segwit('bc', 0, bytes(32, 5), false))).toMatchObject({ valid: true, type: 'p2wsh' });
    expect(classifyAddress(segwit('ltc', 0, bytes(20, 5), false))).toMatchObject({ valid: true, family: 'litecoin', network: 'litecoin', type: 'p2wpkh' });
    expect(classifyAddress(segwit('ltc', 1, bytes(32, 5), true))).toMatchObject({ valid: true, family: 'litecoin', type: 'p2tr' });
    expect(classifyAddress(segwit('bc', 2, bytes(16, 5), true))).toMatchObject({ valid: true, type: 'witness-v2', warnings: [expect.any(String)] });
    // Wrong checksum variant for the version.
    expect(classifyAddress(segwit('bc', 0, bytes(20, 5), true))).toMatchObject({ valid: false, reason: expect.stringContaining('version 0 must use bech32') });
    expect(classifyAddress(segwit('bc', 1, bytes(32, 5), false))).toMatchObject({ valid: false, reason: expect.stringContaining('bech32m') });
    // Program lengths.
    expect(classifyAddress(segwit('bc', 0, bytes(16, 5), false))).toMatchObject({ valid: false, reason: expect.stringContaining('20 or 32') });
    expect(classifyAddress(segwit('bc', 1, bytes(1, 5), true))).toMatchObject({ valid: false, reason: expect.stringContaining('2 to 40') });
    expect(classifyAddress('bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdx')).toMatchObject({ valid: false, family: 'bitcoin' });
  });

  test('Solana: 32-byte base58 keys, on or off the curve', () => {
    const pub = ed25519.getPublicKey(bytes(32, 11));
    expect(classifyAddress(base58.encode(pub))).toMatchObject({ valid: true, family: 'solana', network: 'solana', type: 'ed25519-public-key', details: { onCurve: true } });
    let off: Uint8Array | undefined;
    for (let i = 0; i < 256 && !off; i++) {
      const cand = sha256(Uint8Array.of(i));
      try {
        ed25519.Point.fromBytes(cand);
      } catch {
        off = cand;
      }
    }
    expect(classifyAddress(base58.encode(off!))).toMatchObject({ valid: true, type: 'program-derived-address', details: { onCurve: false } });
    expect(classifyAddress(base58.encode(bytes(31, 1)))).toMatchObject({ valid: false, family: null });
  });

  test('unrecognised text', () => {
    expect(classifyAddress('hello')).toMatchObject({ valid: false, family: null, network: null, networks: [] });
  });
});
