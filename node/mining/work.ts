/**
 * What the mining endpoints (Stratum v1 and getblocktemplate) share: the payout of a worker's
 * username, share difficulty ↔ target, and the byte-order conventions of the wire (Stratum's
 * word-swapped prevhash, Bitcoin's reversed hex in RPC). A template's per-address coinbase is
 * `templateForMiner` in chain/template.ts.
 *
 * Difficulty is Bitcoin's: difficulty 1 is the target `0xFFFF · 2^208` (`DIFF1_TARGET`), a share
 * of difficulty `d` has a header hash ≤ `floor(DIFF1_TARGET / d)`, and takes about
 * `d · 2^48 / 0xFFFF` (≈ `d · 2^32`) hashes to find.
 */
import { tryDecodeAddress } from '../../consensus/address.js';
import { toHex } from '../../consensus/hash.js';
import { DIFF1_TARGET } from '../../consensus/pow.js';

const MAX_TARGET = (1n << 256n) - 1n;

/** Expected hashes per share of difficulty 1 (`2^256 / (DIFF1_TARGET + 1)` ≈ 2^32). */
export const HASHES_PER_DIFF1 = 2 ** 48 / 0xffff;

/** A worker's identity from its Stratum username `address[.worker]`. */
export interface WorkerIdentity {
  /** The whole username, `address` or `address.worker` (the key of the worker's statistics). */
  readonly name: string;
  /** Payout address (bech32m of the chain's hrp). */
  readonly address: string;
  /** 20-byte account id of the address (the coinbase's `miner`). */
  readonly id: Uint8Array;
  /** Worker name after the first `.` (or `_`), empty when none. */
  readonly worker: string;
}

/** Longest accepted username (an address is at most 90 characters). */
export const MAX_USERNAME_LENGTH = 200;

/**
 * Parses a username `address[.worker]` (also `address_worker`, as some firmwares only allow
 * that separator). Returns the identity, or a message saying what is wrong.
 */
export function parseWorkerName(username: unknown, hrp: string, network: string): WorkerIdentity | { error: string } {
  if (typeof username !== 'string' || username.length === 0) return { error: `the username must be your payout address (${hrp}1…), optionally followed by .workername` };
  if (username.length > MAX_USERNAME_LENGTH) return { error: `username longer than ${MAX_USERNAME_LENGTH} characters` };
  const cut = username.search(/[._]/);
  const address = (cut < 0 ? username : username.slice(0, cut)).trim();
  const worker = cut < 0 ? '' : username.slice(cut + 1);
  if (!/^[\x21-\x7e]*$/.test(worker)) return { error: 'the worker name may only hold printable ASCII characters without spaces' };
  // bech32m addresses are case-insensitive but must not mix cases; the chain shows them lowercase.
  const id = tryDecodeAddress(address.toLowerCase(), hrp);
  if (!id) return { error: `"${address}" is not a ${network} address: the username must be your payout address (${hrp}1…), optionally followed by .workername` };
  const canonical = address.toLowerCase();
  return { name: worker ? `${canonical}.${worker}` : canonical, address: canonical, id, worker };
}

/** Share target of a difficulty: `floor(DIFF1_TARGET / d)`, capped at 2^256 − 1. */
export function targetFromDifficulty(difficulty: number): bigint {
  if (!(difficulty > 0) || !Number.isFinite(difficulty)) throw new RangeError(`difficulty must be a positive number, got ${difficulty}`);
  // Fixed point with 64 fractional bits keeps full float precision from 2^-32 to 2^60.
  const scaled = BigInt(Math.round(difficulty * 2 ** 64));
  if (scaled === 0n) return MAX_TARGET;
  const t = (DIFF1_TARGET << 64n) / scaled;
  return t > MAX_TARGET ? MAX_TARGET : t;
}

/** Difficulty of a target (or of a hash read as a little-endian integer): `DIFF1_TARGET / t`, as a float. */
export function difficultyFromTarget(target: bigint): number {
  if (target <= 0n) return Number.POSITIVE_INFINITY;
  return Number((DIFF1_TARGET << 128n) / target) / 2 ** 128;
}

/** Stratum's prevhash: the header's 32 prevHash bytes with each 4-byte word byte-swapped, as hex. */
export function stratumPrevHash(prevHash: Uint8Array): string {
  const out = new Uint8Array(32);
  for (let w = 0; w < 32; w += 4) {
    out[w] = prevHash[w + 3];
    out[w + 1] = prevHash[w + 2];
    out[w + 2] = prevHash[w + 1];
    out[w + 3] = prevHash[w];
  }
  return toHex(out);
}

/** Bitcoin RPC's hex of a hash: the internal bytes reversed (as `previousblockhash`, `txid`). */
export function reversedHex(hash: Uint8Array): string {
  return toHex(hash.slice().reverse());
}

/** `%08x` of a 32-bit unsigned integer (Stratum's version, nbits, ntime, nonce). */
export function hex32(n: number): string {
  return (n >>> 0).toString(16).padStart(8, '0');
}

/** Parses exactly 8 hex digits as a 32-bit unsigned integer; undefined otherwise. */
export function parseHex32(s: unknown): number | undefined {
  if (typeof s !== 'string' || !/^[0-9a-fA-F]{8}$/.test(s)) return undefined;
  return Number.parseInt(s, 16) >>> 0;
}

/** 64 hex digits of a 256-bit target, most significant first (getblocktemplate's `target`). */
export function targetHex(target: bigint): string {
  return target.toString(16).padStart(64, '0');
}
