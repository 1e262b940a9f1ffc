/**
 * The node's wallet files, read and written the same way by the node's CLI (node/wallet.ts) and
 * by the agent package (`loadWallet`): one 32-byte seed (see consensus/keys.ts) stored as JSON.
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
 *
 * Imports only `consensus/` and node:crypto / node:fs: the agent package compiles it.
 */
import { createCipheriv, createDecipheriv, randomBytes, scrypt as scryptCb, type ScryptOptions } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { bech32m } from '@scure/base';
import { NodeError } from '../consensus/errors.js';
import { encodeAddress } from '../consensus/address.js';
import { createKeyPairFromSeed, type HybridKeyPair } from '../consensus/keys.js';
import { fromHex, isHex } from '../consensus/hash.js';

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

/** Options of `loadWallet`. */
export interface LoadWalletOptions {
  /** Passphrase of an encrypted wallet (a clear devnet wallet needs none). */
  readonly passphrase?: string;
}

/** A wallet file opened for signing: the key `createAgentClient` takes, and the file's address and network. */
export interface LoadedWallet {
  /** The hybrid key pair (pass it as `createAgentClient({ key })`). */
  readonly key: HybridKeyPair;
  /** The wallet's bech32m address, as written in the file. */
  readonly address: string;
  /** The network the file names (`devnet`, `mainnet`, …). */
  readonly network: string;
  /** Whether the file was stored in clear (the devnet dev wallet). */
  readonly clear: boolean;
}

/**
 * Opens a node wallet file (the devnet's `dev-wallet.json`, or one made by `native-node wallet
 * new`): clear files directly, encrypted ones with `passphrase` (`wallet_passphrase_required`
 * without one, `wallet_bad_passphrase` when wrong). Checks that the seed derives the address the
 * file names, on that address's own network prefix (`wallet_invalid` otherwise).
 */
export async function loadWallet(path: string, opts: LoadWalletOptions = {}): Promise<LoadedWallet> {
  const file = await readWalletFile(path);
  const clear = isClearWallet(file);
  if (!clear && (opts.passphrase === undefined || opts.passphrase === '')) {
    throw new NodeError(WalletErrorCode.PASSPHRASE_REQUIRED, `${path} is encrypted: pass { passphrase }`, { path });
  }
  const seed = clear ? fromHex(file.seed) : await decryptWallet(file, opts.passphrase!);
  const key = createKeyPairFromSeed(seed);
  seed.fill(0);
  let hrp: string;
  try {
    hrp = bech32m.decode(file.address as `${string}1${string}`).prefix;
  } catch {
    throw badFile(path, `address ${file.address} is not a bech32m address`);
  }
  if (encodeAddress(key.address, hrp) !== file.address) throw badFile(path, `its seed does not derive the address ${file.address}`);
  return { key, address: file.address, network: file.network, clear };
}
