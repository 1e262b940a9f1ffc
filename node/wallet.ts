/**
 * Wallet files on the node's side: writing them (atomically, mode 0600), creating a new wallet,
 * opening one for the CLI with a passphrase source, and the devnet dev wallet. The file format
 * itself (shapes, encryption, parsing) is sdk/walletFile.ts, shared with the agent package, and
 * re-exported here. Files are written atomically (temporary file, fsync, rename or link) with
 * mode 0600.
 */
import { randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { link, mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { NodeError } from '../consensus/errors.js';
import { encodeAddress } from '../consensus/address.js';
import { DEV_SEED, getDevKeyPair } from '../consensus/devnet.js';
import { createKeyPairFromSeed, type HybridKeyPair } from '../consensus/keys.js';
import { bytesEqual, fromHex, toHex } from '../consensus/hash.js';

/** The wallet file format (sdk/walletFile.ts, shared with the agent package), re-exported for the node's modules. */
export {
  WalletErrorCode,
  WALLET_VERSION,
  DEV_WALLET_FILE,
  MIN_SCRYPT_N,
  defaultWalletCryptoOptions,
  encryptWallet,
  decryptWallet,
  isClearWallet,
  parseWalletFile,
  readWalletFile,
  type ScryptParams,
  type EncryptedWalletFile,
  type ClearWalletFile,
  type WalletFile,
  type WalletCryptoOptions,
} from '../sdk/walletFile.js';
import { DEV_WALLET_FILE, WALLET_VERSION, WalletErrorCode, decryptWallet, encryptWallet, isClearWallet, readWalletFile, type ClearWalletFile, type WalletCryptoOptions, type WalletFile } from '../sdk/walletFile.js';

/** A wallet opened for signing. */
export interface OpenedWallet {
  readonly address: string;
  readonly network: string;
  readonly keyPair: HybridKeyPair;
  /** Whether the file was stored in clear (dev wallet). */
  readonly clear: boolean;
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
