/**
 * Wallet files: one 32-byte seed (see consensus/keys.ts) stored as JSON.
 *
 * Encrypted at rest (every wallet but the devnet's dev wallet):
 *   { version: 1, address, network,
 *     kdf:    { name: "scrypt", N, r, p, dkLen: 32, salt: <hex 16> },
 *     cipher: { name: "aes-256-gcm", iv: <hex 12>, tag: <hex 16> },
 *     ciphertext: <hex 32> }
 * The key is scrypt(passphrase, salt); AES-256-GCM authenticates the seed together with
 * `address` and `network` (additional data), so a file whose visible address was edited does
 * not decrypt. The devnet dev wallet, whose seed is public anyway, is stored in clear:
 *   { version: 1, address, network, seed: <hex 32>, note }
 * Files are written atomically (temporary file, fsync, rename or link) with mode 0600.
 */
import { createCipheriv, createDecipheriv, randomBytes, scrypt as scryptCb, type ScryptOptions } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { link, mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { NodeError } from '../consensus/errors.js';
import { encodeAddress } from '../consensus/address.js';
import { DEV_SEED, getDevKeyPair } from '../consensus/devnet.js';
import { createKeyPairFromSeed, type HybridKeyPair } from '../consensus/keys.js';
import { bytesEqual, fromHex, isHex, toHex } from '../consensus/hash.js';

/** Error codes of wallet files. */
export const WalletErrorCode = {
  NOT_FOUND: 'wallet_not_found',
  EXISTS: 'wallet_exists',
  INVALID: 'wallet_invalid',
  BAD_PASSPHRASE: 'wallet_bad_passphrase',
  PASSPHRASE_REQUIRED: 'wallet_passphrase_required',
  PASSPHRASE_MISMATCH: 'wallet_passphrase_mismatch',
  WRONG_NETWORK: 'wallet_wrong_network',
} as const;

/** The wallet file format version. */
export const WALLET_VERSION = 1;
/** File name of the devnet dev wallet inside the data directory. */
export const DEV_WALLET_FILE = 'dev-wallet.json';

/** scrypt parameters stored in a wallet file. */
export interface ScryptParams {
  readonly name: 'scrypt';
  /** CPU/memory cost, a power of two ≥ 2^15. */
  readonly N: number;
  readonly r: number;
  readonly p: number;
  readonly dkLen: 32;
  /** Hex of 16 random bytes. */
  readonly salt: string;
}

/** An encrypted wallet file. */
export interface EncryptedWalletFile {
  readonly version: 1;
  readonly address: string;
  readonly network: string;
  readonly kdf: ScryptParams;
  readonly cipher: { readonly name: 'aes-256-gcm'; readonly iv: string; readonly tag: string };
  readonly ciphertext: string;
}

/** A clear wallet file (devnet dev wallet only). */
export interface ClearWalletFile {
  readonly version: 1;
  readonly address: string;
  readonly network: string;
  readonly seed: string;
  readonly note?: string;
}

/** Either wallet file shape. */
export type WalletFile = EncryptedWalletFile | ClearWalletFile;

/** Options of wallet encryption. */
export interface WalletCryptoOptions {
  /** scrypt N (power of two, at least 2^15). */
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

/** Smallest scrypt N accepted when writing or reading a wallet. */
export const MIN_SCRYPT_N = 1 << 15;

/** Default KDF cost: N = 2^15, r = 8, p = 1 (32 MiB, about 0.1 s). */
export const defaultWalletCryptoOptions: WalletCryptoOptions = { N: 1 << 15, r: 8, p: 1 };

/** A wallet opened for signing. */
export interface OpenedWallet {
  readonly address: string;
  readonly network: string;
  readonly keyPair: HybridKeyPair;
  /** Whether the file was stored in clear (dev wallet). */
  readonly clear: boolean;
}

function scrypt(passphrase: string, salt: Uint8Array, kdf: { N: number; r: number; p: number }): Promise<Buffer> {
  // scrypt needs 128·N·r bytes; node's default cap (32 MiB) is exactly 2^15·8·128, so raise it.
  const opts: ScryptOptions = { N: kdf.N, r: kdf.r, p: kdf.p, maxmem: 256 * kdf.N * kdf.r + (1 << 20) };
  return new Promise((resolve, reject) => scryptCb(passphrase.normalize('NFKC'), salt, 32, opts, (err, key) => (err ? reject(err) : resolve(key))));
}

function aad(address: string, network: string): Buffer {
  return Buffer.from(`native-node wallet v1|${network}|${address}`, 'utf8');
}

/** Encrypts a 32-byte seed under a passphrase into the wallet file shape. */
export async function encryptWallet(seed: Uint8Array, passphrase: string, meta: { address: string; network: string }, opts: WalletCryptoOptions = defaultWalletCryptoOptions): Promise<EncryptedWalletFile> {
  if (seed.length !== 32) throw new RangeError('wallet seed must be 32 bytes');
  if (opts.N < MIN_SCRYPT_N || (opts.N & (opts.N - 1)) !== 0) throw new RangeError(`scrypt N must be a power of two ≥ ${MIN_SCRYPT_N}`);
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const key = await scrypt(passphrase, salt, opts);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad(meta.address, meta.network));
  const ciphertext = Buffer.concat([cipher.update(seed), cipher.final()]);
  key.fill(0);
  return {
    version: WALLET_VERSION,
    address: meta.address,
    network: meta.network,
    kdf: { name: 'scrypt', N: opts.N, r: opts.r, p: opts.p, dkLen: 32, salt: salt.toString('hex') },
    cipher: { name: 'aes-256-gcm', iv: iv.toString('hex'), tag: cipher.getAuthTag().toString('hex') },
    ciphertext: ciphertext.toString('hex'),
  };
}

/** Decrypts an encrypted wallet file; throws `wallet_bad_passphrase` when the passphrase (or the file) is wrong. */
export async function decryptWallet(file: EncryptedWalletFile, passphrase: string): Promise<Uint8Array> {
  const key = await scrypt(passphrase, fromHex(file.kdf.salt), file.kdf);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, fromHex(file.cipher.iv));
    decipher.setAAD(aad(file.address, file.network));
    decipher.setAuthTag(fromHex(file.cipher.tag));
    return new Uint8Array(Buffer.concat([decipher.update(fromHex(file.ciphertext)), decipher.final()]));
  } catch {
    throw new NodeError(WalletErrorCode.BAD_PASSPHRASE, 'wrong passphrase (or the wallet file was altered)');
  } finally {
    key.fill(0);
  }
}

/** Whether a wallet file is stored in clear. */
export function isClearWallet(f: WalletFile): f is ClearWalletFile {
  return 'seed' in f;
}

function badFile(path: string, why: string): NodeError {
  return new NodeError(WalletErrorCode.INVALID, `${path} is not a valid wallet file: ${why}`, { path });
}

/** Checks the shape of a parsed wallet file. */
export function parseWalletFile(json: unknown, path = 'wallet'): WalletFile {
  if (typeof json !== 'object' || json === null) throw badFile(path, 'not a JSON object');
  const f = json as Record<string, unknown>;
  if (f.version !== WALLET_VERSION) throw badFile(path, `unsupported version ${String(f.version)}`);
  if (typeof f.address !== 'string' || typeof f.network !== 'string') throw badFile(path, 'address and network must be strings');
  if ('seed' in f) {
    if (!isHex(f.seed, 32)) throw badFile(path, 'seed must be 32 bytes of hex');
    return f as unknown as ClearWalletFile;
  }
  const kdf = f.kdf as Record<string, unknown> | undefined;
  const cipher = f.cipher as Record<string, unknown> | undefined;
  if (!kdf || kdf.name !== 'scrypt' || !Number.isInteger(kdf.N) || !Number.isInteger(kdf.r) || !Number.isInteger(kdf.p) || !isHex(kdf.salt)) throw badFile(path, 'bad kdf');
  const N = kdf.N as number;
  if (N < MIN_SCRYPT_N || N > 1 << 22 || (N & (N - 1)) !== 0 || (kdf.r as number) < 1 || (kdf.r as number) > 32 || (kdf.p as number) < 1 || (kdf.p as number) > 16) throw badFile(path, 'kdf parameters out of range');
  if (!cipher || cipher.name !== 'aes-256-gcm' || !isHex(cipher.iv, 12) || !isHex(cipher.tag, 16)) throw badFile(path, 'bad cipher');
  if (!isHex(f.ciphertext, 32)) throw badFile(path, 'ciphertext must be 32 bytes of hex');
  return f as unknown as EncryptedWalletFile;
}

/** Reads a wallet file (not decrypted). */
export async function readWalletFile(path: string): Promise<WalletFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new NodeError(WalletErrorCode.NOT_FOUND, `no wallet file at ${path}`, { path });
    throw e;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw badFile(path, 'not JSON');
  }
  return parseWalletFile(json, path);
}

/**
 * Writes `data` to `path` atomically with mode 0600: a temporary file in the same directory is
 * written and fsynced, then renamed over `path` (or, with `overwrite: false`, hard-linked to it,
 * which fails with `wallet_exists` if `path` appeared meanwhile). The directory is created 0700.
 */
export async function writeFileAtomic(path: string, data: string, opts: { overwrite: boolean }): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = join(dirname(path), `.${Date.now()}-${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  const fh = await open(tmp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL, 0o600);
  try {
    await fh.writeFile(data, 'utf8');
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    if (opts.overwrite) {
      await rename(tmp, path);
      return;
    }
    try {
      await link(tmp, path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new NodeError(WalletErrorCode.EXISTS, `${path} already exists; refusing to overwrite it`, { path });
      throw e;
    }
    await unlink(tmp);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
}

/** Writes a wallet file (see `writeFileAtomic`). */
export async function writeWalletFile(path: string, file: WalletFile, opts: { overwrite: boolean } = { overwrite: false }): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`, opts);
}

/** Creates a new random wallet for `network` (addresses with `hrp`) and writes it encrypted; refuses an existing file. */
export async function createWalletFile(
  path: string,
  opts: { network: string; hrp: string; passphrase: string; seed?: Uint8Array; crypto?: WalletCryptoOptions },
): Promise<{ address: string; network: string; path: string }> {
  const seed = opts.seed ?? new Uint8Array(randomBytes(32));
  const address = encodeAddress(createKeyPairFromSeed(seed).address, opts.hrp);
  const file = await encryptWallet(seed, opts.passphrase, { address, network: opts.network }, opts.crypto);
  await writeWalletFile(path, file, { overwrite: false });
  return { address, network: opts.network, path };
}

/** Where a passphrase comes from when a wallet must be decrypted or created. */
export interface PassphraseSource {
  /** Returns the passphrase; throws `wallet_passphrase_required` when none can be had. */
  get(purpose: 'unlock' | 'create'): Promise<string>;
}

/**
 * Opens a wallet file for signing: clear files directly, encrypted ones with a passphrase.
 * Checks that the seed derives the address written in the file.
 */
export async function openWallet(path: string, passphrase: PassphraseSource, hrp: string): Promise<OpenedWallet> {
  const file = await readWalletFile(path);
  const clear = isClearWallet(file);
  const seed = clear ? fromHex(file.seed) : await decryptWallet(file, await passphrase.get('unlock'));
  // The dev wallet's keys are derived when it signs (its address is well known).
  const keyPair = bytesEqual(seed, DEV_SEED) ? getDevKeyPair() : createKeyPairFromSeed(seed);
  seed.fill(0);
  const address = encodeAddress(keyPair.address, hrp);
  if (address !== file.address) {
    throw new NodeError(WalletErrorCode.WRONG_NETWORK, `wallet ${path} holds ${file.address} (${file.network}); on this network its address is ${address}`, { path });
  }
  return { address, network: file.network, keyPair, clear };
}

/** The clear dev wallet file of a devnet. */
export function devWalletFile(network: string, hrp: string): ClearWalletFile {
  return {
    version: WALLET_VERSION,
    address: encodeAddress(getDevKeyPair().address, hrp),
    network,
    seed: toHex(DEV_SEED),
    note: 'devnet dev wallet: its seed is public on purpose. Never use it on mainnet.',
  };
}

/** Writes `<dataDir>/dev-wallet.json` (devnet only); rewrites it only when its content differs. Returns its path. */
export async function writeDevWallet(dataDir: string, network: string, hrp: string): Promise<string> {
  const path = join(dataDir, DEV_WALLET_FILE);
  const text = `${JSON.stringify(devWalletFile(network, hrp), null, 2)}\n`;
  const current = await readFile(path, 'utf8').catch(() => undefined);
  if (current !== text) await writeFileAtomic(path, text, { overwrite: true });
  return path;
}

/** Default wallet file outside the devnet: `~/.native-node/wallet.json`. */
export function defaultWalletPath(home: string = homedir()): string {
  return join(home, '.native-node', 'wallet.json');
}

/** Passphrase from `NATIVE_WALLET_PASSPHRASE`, else a no-echo prompt on a terminal, else `wallet_passphrase_required`. */
export function createPassphraseSource(opts: {
  env: Record<string, string | undefined>;
  input?: NodeJS.ReadStream;
  output?: NodeJS.WriteStream;
}): PassphraseSource {
  const input = opts.input ?? process.stdin;
  const output = opts.output ?? process.stderr;
  return {
    async get(purpose) {
      const fromEnv = opts.env.NATIVE_WALLET_PASSPHRASE;
      if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
      if (!input.isTTY) {
        throw new NodeError(WalletErrorCode.PASSPHRASE_REQUIRED, 'a wallet passphrase is needed: set NATIVE_WALLET_PASSPHRASE or run in a terminal');
      }
      const first = await promptHidden(purpose === 'create' ? 'New wallet passphrase: ' : 'Wallet passphrase: ', input, output);
      if (purpose === 'create') {
        if (first.length === 0) throw new NodeError(WalletErrorCode.PASSPHRASE_REQUIRED, 'an empty passphrase is not allowed');
        const again = await promptHidden('Repeat passphrase: ', input, output);
        if (again !== first) throw new NodeError(WalletErrorCode.PASSPHRASE_MISMATCH, 'the two passphrases differ');
      }
      return first;
    },
  };
}

/** Reads one line from a terminal without echoing it. */
function promptHidden(question: string, input: NodeJS.ReadStream, output: NodeJS.WriteStream): Promise<string> {
  return new Promise((resolve, reject) => {
    output.write(question);
    const wasRaw = input.isRaw;
    input.setRawMode(true);
    input.resume();
    input.setEncoding('utf8');
    let value = '';
    const done = (err?: Error) => {
      input.off('data', onData);
      input.setRawMode(wasRaw);
      input.pause();
      output.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003') return done(new NodeError(WalletErrorCode.PASSPHRASE_REQUIRED, 'interrupted'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    input.on('data', onData);
  });
}
