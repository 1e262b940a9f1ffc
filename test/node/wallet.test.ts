import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { isNodeError } from '../../consensus/errors.js';
import { encodeAddress } from '../../consensus/address.js';
import { DEV_SEED, getDevKeyPair } from '../../consensus/devnet.js';
import { toHex } from '../../consensus/hash.js';
import {
  createPassphraseSource,
  createWalletFile,
  decryptWallet,
  encryptWallet,
  openWallet,
  readWalletFile,
  writeDevWallet,
  writeFileAtomic,
  type EncryptedWalletFile,
  type PassphraseSource,
} from '../../node/wallet.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'native-wallet-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const seed = Uint8Array.from({ length: 32 }, (_, i) => i);
const fixed = (p: string): PassphraseSource => ({ get: async () => p });

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (isNodeError(e)) return e.code;
    throw e;
  }
  throw new Error('expected an error');
}

describe('encryption', () => {
  test('round trip: scrypt N ≥ 2^15, r 8, p 1, AES-256-GCM; the seed is not in the file', async () => {
    const file = await encryptWallet(seed, 'correct horse', { address: 'tnative1x', network: 'native-devnet' });
    expect(file.kdf).toMatchObject({ name: 'scrypt', N: 32768, r: 8, p: 1, dkLen: 32 });
    expect(file.cipher.name).toBe('aes-256-gcm');
    expect(JSON.stringify(file)).not.toContain(toHex(seed));
    expect(await decryptWallet(file, 'correct horse')).toEqual(seed);
  });
  test('wrong passphrase → wallet_bad_passphrase', async () => {
    const file = await encryptWallet(seed, 'right', { address: 'tnative1x', network: 'native-devnet' });
    expect(await codeOf(decryptWallet(file, 'wrong'))).toBe('wallet_bad_passphrase');
  });
  test('an edited address does not decrypt (address and network are authenticated)', async () => {
    const file = await encryptWallet(seed, 'pw', { address: 'tnative1x', network: 'native-devnet' });
    const edited: EncryptedWalletFile = { ...file, address: 'tnative1y' };
    expect(await codeOf(decryptWallet(edited, 'pw'))).toBe('wallet_bad_passphrase');
  });
  test('two encryptions of one seed differ (fresh salt and iv)', async () => {
    const a = await encryptWallet(seed, 'pw', { address: 'a', network: 'n' });
    const b = await encryptWallet(seed, 'pw', { address: 'a', network: 'n' });
    expect(a.ciphertext).not.toBe(b.ciphertext);
    expect(a.kdf.salt).not.toBe(b.kdf.salt);
  });
});

describe('wallet files', () => {
  test('create → open yields the same key; file mode 0600', async () => {
    const path = join(dir, 'w1', 'wallet.json');
    const created = await createWalletFile(path, { network: 'native-devnet', hrp: 'tnative', passphrase: 'pw', seed });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const file = JSON.parse(readFileSync(path, 'utf8'));
    expect(Object.keys(file).sort()).toEqual(['address', 'cipher', 'ciphertext', 'kdf', 'network', 'version']);
    const w = await openWallet(path, fixed('pw'), 'tnative');
    expect(w.address).toBe(created.address);
    expect(w.keyPair.seed).toEqual(seed);
    expect(w.clear).toBe(false);
  });
  test('opening with the wrong passphrase → wallet_bad_passphrase', async () => {
    const path = join(dir, 'w2.json');
    await createWalletFile(path, { network: 'native-devnet', hrp: 'tnative', passphrase: 'pw', seed });
    expect(await codeOf(openWallet(path, fixed('nope'), 'tnative'))).toBe('wallet_bad_passphrase');
  });
  test('opening a devnet wallet with the mainnet hrp → wallet_wrong_network', async () => {
    const path = join(dir, 'w3.json');
    await createWalletFile(path, { network: 'native-devnet', hrp: 'tnative', passphrase: 'pw', seed });
    expect(await codeOf(openWallet(path, fixed('pw'), 'native'))).toBe('wallet_wrong_network');
  });
  test('refuses to overwrite an existing file → wallet_exists, content untouched', async () => {
    const path = join(dir, 'w4.json');
    writeFileSync(path, 'keep me');
    expect(await codeOf(createWalletFile(path, { network: 'native-devnet', hrp: 'tnative', passphrase: 'pw' }))).toBe('wallet_exists');
    expect(readFileSync(path, 'utf8')).toBe('keep me');
  });
  test('missing file → wallet_not_found; garbage → wallet_invalid', async () => {
    expect(await codeOf(readWalletFile(join(dir, 'none.json')))).toBe('wallet_not_found');
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"version":1,"address":"x","network":"y","kdf":{"name":"scrypt","N":16,"r":8,"p":1,"salt":"00"}}');
    expect(await codeOf(readWalletFile(bad))).toBe('wallet_invalid');
    writeFileSync(bad, 'not json');
    expect(await codeOf(readWalletFile(bad))).toBe('wallet_invalid');
  });
});

describe('atomic writes', () => {
  test('overwrite replaces the file in one rename and leaves no temporary file', async () => {
    const sub = join(dir, 'atomic');
    const path = join(sub, 'f.json');
    await writeFileAtomic(path, 'one', { overwrite: false });
    await writeFileAtomic(path, 'two', { overwrite: true });
    expect(readFileSync(path, 'utf8')).toBe('two');
    expect(readdirSync(sub)).toEqual(['f.json']);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(sub).mode & 0o777).toBe(0o700);
  });
  test('concurrent creators: exactly one wins, the others get wallet_exists', async () => {
    const path = join(dir, 'race.json');
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => writeFileAtomic(path, `writer ${i}`, { overwrite: false })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as { code: string }).code).toBe('wallet_exists');
    expect(readFileSync(path, 'utf8')).toMatch(/^writer \d$/);
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});

describe('dev wallet', () => {
  test('written in clear to <dataDir>/dev-wallet.json, opens without a passphrase', async () => {
    const dataDir = join(dir, 'devdata');
    const path = await writeDevWallet(dataDir, 'native-devnet', 'tnative');
    expect(path).toBe(join(dataDir, 'dev-wallet.json'));
    const file = JSON.parse(readFileSync(path, 'utf8'));
    expect(file.seed).toBe(toHex(DEV_SEED));
    const noPassphrase: PassphraseSource = { get: async () => { throw new Error('must not ask'); } };
    const w = await openWallet(path, noPassphrase, 'tnative');
    expect(w.address).toBe(encodeAddress(getDevKeyPair().address, 'tnative'));
    expect(w.clear).toBe(true);
    await writeDevWallet(dataDir, 'native-devnet', 'tnative'); // idempotent
  });
});

describe('passphrase source', () => {
  test('NATIVE_WALLET_PASSPHRASE is used when set', async () => {
    expect(await createPassphraseSource({ env: { NATIVE_WALLET_PASSPHRASE: 's3cret' } }).get('unlock')).toBe('s3cret');
  });
  test('no env var and no terminal → wallet_passphrase_required', async () => {
    const input = { isTTY: false } as unknown as NodeJS.ReadStream;
    expect(await codeOf(createPassphraseSource({ env: {}, input }).get('unlock'))).toBe('wallet_passphrase_required');
  });
});

describe('interactive prompt', () => {
  function fakeTty() {
    const input = Object.assign(new PassThrough(), { isTTY: true, isRaw: false, setRawMode(this: { isRaw: boolean }, v: boolean) { this.isRaw = v; return this; } });
    let shown = '';
    const output = { write: (s: string) => { shown += s; return true; } };
    return { input: input as unknown as NodeJS.ReadStream & PassThrough, output: output as unknown as NodeJS.WriteStream, shown: () => shown };
  }
  test('reads a line without echoing it, handles backspace', async () => {
    const t = fakeTty();
    const p = createPassphraseSource({ env: {}, input: t.input, output: t.output }).get('unlock');
    t.input.write('hunter3\u007f2\r');
    expect(await p).toBe('hunter2');
    expect(t.shown()).toContain('passphrase');
    expect(t.shown()).not.toContain('hunter');
  });
  test('create asks twice; a mismatch → wallet_passphrase_mismatch', async () => {
    const t = fakeTty();
    const p = createPassphraseSource({ env: {}, input: t.input, output: t.output }).get('create');
    t.input.write('one\r');
    await new Promise((r) => setTimeout(r, 20));
    t.input.write('two\r');
    expect(await codeOf(p)).toBe('wallet_passphrase_mismatch');
  });
});
