/**
 * Address formats the node recognises: this chain's bech32m accounts (`native…` on mainnet,
 * `tnative…` elsewhere), EVM addresses with their EIP-55 checksum, Solana base58 public keys,
 * and Bitcoin / Litecoin base58check (P2PKH, P2SH) and segwit bech32 / bech32m addresses
 * (BIP-173, BIP-350 witness-version rules). Pure functions, no IO.
 */
import { base58, bech32, bech32m, createBase58check } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import { MAINNET_HRP, TESTNET_HRP } from '../consensus/address.js';
import { toHex } from '../consensus/hash.js';

const base58check = createBase58check(sha256);
const utf8 = new TextEncoder();

/** Address families. */
export type AddressFamily = 'native' | 'evm' | 'solana' | 'bitcoin' | 'litecoin';

/** What an address is, or why it is not one. */
export interface AddressInfo {
  readonly input: string;
  readonly valid: boolean;
  /** Family the input looks like (also when invalid, e.g. a bad checksum), null when unrecognised. */
  readonly family: AddressFamily | null;
  /** Most likely network, e.g. `native-mainnet`, `bitcoin`, `evm`. */
  readonly network: string | null;
  /** Every network the address is valid on. */
  readonly networks: readonly string[];
  /** Address type, e.g. `account`, `p2pkh`, `p2wpkh`, `p2tr`, `eoa-or-contract`, `ed25519-public-key`. */
  readonly type: string | null;
  /** Canonical spelling (lowercase bech32, EIP-55 checksummed hex). */
  readonly normalized: string | null;
  /** Encoding used: `bech32m`, `bech32`, `base58check`, `base58`, `hex`. */
  readonly encoding: string | null;
  /** Family-specific facts (witness version, version byte, checksum, curve membership…). */
  readonly details: Record<string, unknown>;
  /** Why it is invalid. */
  readonly reason?: string;
  readonly warnings: readonly string[];
}

function result(input: string, r: Partial<AddressInfo> & { valid: boolean }): AddressInfo {
  return {
    input,
    family: null,
    network: null,
    networks: [],
    type: null,
    normalized: null,
    encoding: null,
    details: {},
    warnings: [],
    ...r,
  };
}

/** EVM networks an address is valid on (one key, one address on every EVM chain). */
export const EVM_NETWORKS = ['ethereum', 'base', 'bnb-smart-chain', 'polygon', 'arbitrum', 'optimism', 'avalanche-c'] as const;

/** EIP-55 mixed-case checksum spelling of a 20-byte hex address (`0x` + 40 hex, any case). */
export function toChecksumAddress(address: string): string {
  const lower = address.slice(2).toLowerCase();
  const hash = toHex(keccak_256(utf8.encode(lower)));
  let out = '0x';
  for (let i = 0; i < 40; i++) out += parseInt(hash[i], 16) >= 8 ? lower[i].toUpperCase() : lower[i];
  return out;
}

/** EVM address check: all-lowercase or all-uppercase hex is valid without a checksum, mixed case must be EIP-55. */
export function checkEvmAddress(input: string): AddressInfo | undefined {
  if (!/^0[xX][0-9a-fA-F]{40}$/.test(input)) return undefined;
  const body = input.slice(2);
  const normalized = toChecksumAddress(`0x${body}`);
  const mixed = body !== body.toLowerCase() && body !== body.toUpperCase();
  const base = { family: 'evm' as const, network: 'evm', type: 'eoa-or-contract', normalized, encoding: 'hex' };
  if (input[1] === 'X') return result(input, { ...base, valid: false, reason: 'the prefix must be a lowercase 0x' });
  if (mixed && normalized.slice(2) !== body) {
    return result(input, { ...base, valid: false, details: { checksum: 'invalid' }, reason: 'mixed-case address with a wrong EIP-55 checksum' });
  }
  const warnings = /^0x0{40}$/i.test(input) ? ['zero address: funds sent there are lost'] : [];
  return result(input, { ...base, valid: true, networks: [...EVM_NETWORKS], details: { checksum: mixed ? 'valid' : 'absent' }, warnings });
}

/** Segwit human-readable parts. */
const SEGWIT_HRPS = new Map<string, { family: 'bitcoin' | 'litecoin'; network: string }>([
  ['bc', { family: 'bitcoin', network: 'bitcoin' }],
  ['tb', { family: 'bitcoin', network: 'bitcoin-testnet' }],
  ['bcrt', { family: 'bitcoin', network: 'bitcoin-regtest' }],
  ['ltc', { family: 'litecoin', network: 'litecoin' }],
  ['tltc', { family: 'litecoin', network: 'litecoin-testnet' }],
]);

function checkBech32(input: string, hrpHint: string): AddressInfo | undefined {
  const lower = input.toLowerCase();
  const asM = bech32m.decodeUnsafe(lower, 90);
  const asB = asM ? undefined : bech32.decodeUnsafe(lower, 90);
  const decoded = asM ?? asB;
  const hrp = decoded ? decoded.prefix : hrpHint;
  const encoding = asM ? 'bech32m' : 'bech32';
  const known = hrp === MAINNET_HRP || hrp === TESTNET_HRP || SEGWIT_HRPS.has(hrp);
  if (!decoded && !known) return undefined;
  if (input !== lower && input !== input.toUpperCase()) {
    return result(input, { valid: false, encoding, details: { hrp }, reason: 'bech32 strings must not mix upper and lower case' });
  }

  if (hrp === MAINNET_HRP || hrp === TESTNET_HRP) {
    const network = hrp === MAINNET_HRP ? 'native-mainnet' : 'native-testnet';
    const base = { family: 'native' as const, network, type: 'account', encoding: 'bech32m' };
    if (!decoded) return result(input, { ...base, valid: false, reason: 'bad bech32m checksum or characters' });
    if (!asM) return result(input, { ...base, valid: false, reason: `${hrp} addresses are bech32m, this is bech32` });
    const id = bech32m.fromWordsUnsafe(decoded.words);
    if (!id || id.length !== 20) return result(input, { ...base, valid: false, reason: 'an account id is 20 bytes' });
    return result(input, {
      ...base,
      valid: true,
      networks: hrp === MAINNET_HRP ? ['native-mainnet'] : ['native-testnet', 'native-devnet'],
      normalized: lower,
      details: { hrp, accountId: toHex(id) },
    });
  }

  const seg = SEGWIT_HRPS.get(hrp);
  if (!seg) {
    if (!decoded) return undefined;
    return result(input, { valid: false, encoding, details: { hrp }, reason: `unknown human-readable part "${hrp}"` });
  }
  const base = { family: seg.family, network: seg.network, encoding };
  if (!decoded) return result(input, { ...base, valid: false, reason: 'bad bech32 checksum or characters' });
  const [version, ...rest] = decoded.words;
  if (version === undefined || version > 16) return result(input, { ...base, valid: false, reason: 'witness version must be 0 to 16' });
  const program = bech32.fromWordsUnsafe(rest);
  if (!program || program.length < 2 || program.length > 40) {
    return result(input, { ...base, valid: false, reason: 'witness program must be 2 to 40 bytes with zero padding' });
  }
  // BIP-350: version 0 uses bech32, versions 1..16 bech32m.
  if (version === 0 && asM) return result(input, { ...base, valid: false, reason: 'witness version 0 must use bech32, not bech32m' });
  if (version > 0 && !asM) return result(input, { ...base, valid: false, reason: `witness version ${version} must use bech32m (BIP-350)` });
  let type: string;
  if (version === 0) {
    if (program.length === 20) type = 'p2wpkh';
    else if (program.length === 32) type = 'p2wsh';
    else return result(input, { ...base, valid: false, reason: 'a version 0 witness program is 20 or 32 bytes' });
  } else if (version === 1 && program.length === 32) type = 'p2tr';
  else type = `witness-v${version}`;
  const warnings = type.startsWith('witness-v') ? [`witness version ${version} with a ${program.length}-byte program has no defined spending rules yet`] : [];
  return result(input, {
    ...base,
    valid: true,
    networks: [seg.network],
    type,
    normalized: lower,
    details: { hrp, witnessVersion: version, programHex: toHex(program) },
    warnings,
  });
}

/** base58check version bytes of P2PKH / P2SH addresses. */
const BASE58_VERSIONS: Partial<Record<number, { family: 'bitcoin' | 'litecoin'; networks: string[]; type: string }>> = {
  0x00: { family: 'bitcoin', networks: ['bitcoin'], type: 'p2pkh' },
  // Litecoin used 0x05 for P2SH before switching to 0x32: a "3…" address is valid on both.
  0x05: { family: 'bitcoin', networks: ['bitcoin', 'litecoin'], type: 'p2sh' },
  0x6f: { family: 'bitcoin', networks: ['bitcoin-testnet', 'litecoin-testnet'], type: 'p2pkh' },
  0xc4: { family: 'bitcoin', networks: ['bitcoin-testnet', 'litecoin-testnet'], type: 'p2sh' },
  0x30: { family: 'litecoin', networks: ['litecoin'], type: 'p2pkh' },
  0x32: { family: 'litecoin', networks: ['litecoin'], type: 'p2sh' },
  0x3a: { family: 'litecoin', networks: ['litecoin-testnet'], type: 'p2sh' },
};

function checkBase58(input: string): AddressInfo | undefined {
  if (!/^[1-9A-HJ-NP-Za-km-z]+$/.test(input)) return undefined;
  let raw: Uint8Array;
  try {
    raw = base58.decode(input);
  } catch {
    return undefined;
  }
  if (raw.length === 25) {
    const v = BASE58_VERSIONS[raw[0]];
    let payload: Uint8Array | undefined;
    try {
      payload = base58check.decode(input);
    } catch {
      payload = undefined;
    }
    if (!v) {
      return payload ? result(input, { valid: false, encoding: 'base58check', details: { versionByte: raw[0] }, reason: `unknown base58check version byte 0x${raw[0].toString(16).padStart(2, '0')}` }) : undefined;
    }
    const base = { family: v.family, network: v.networks[0], type: v.type, encoding: 'base58check', details: { versionByte: raw[0] } };
    if (!payload) return result(input, { ...base, valid: false, reason: 'bad base58check checksum' });
    return result(input, { ...base, valid: true, networks: v.networks, normalized: input, details: { versionByte: raw[0], hash160Hex: toHex(payload.slice(1)) } });
  }
  if (raw.length === 32) {
    let onCurve = true;
    try {
      ed25519.Point.fromBytes(raw);
    } catch {
      onCurve = false;
    }
    return result(input, {
      valid: true,
      family: 'solana',
      network: 'solana',
      networks: ['solana'],
      type: onCurve ? 'ed25519-public-key' : 'program-derived-address',
      normalized: base58.encode(raw),
      encoding: 'base58',
      details: { onCurve, publicKeyHex: toHex(raw) },
    });
  }
  return undefined;
}

/** Classifies an address of any supported family; `valid: false` with a reason when it is none. */
export function classifyAddress(input: string): AddressInfo {
  const s = input.trim();
  const evm = checkEvmAddress(s);
  if (evm) return evm;
  const sep = s.lastIndexOf('1');
  if (sep > 0) {
    const b = checkBech32(s, s.slice(0, sep).toLowerCase());
    if (b) return b;
  }
  const b58 = checkBase58(s);
  if (b58) return b58;
  return result(s, { valid: false, reason: 'not a native, EVM, Solana, Bitcoin or Litecoin address' });
}
