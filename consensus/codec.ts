/**
 * The canonical binary codec shared by every consensus object.
 *
 * Integers: fixed-width little-endian (`u8`, `u32`, `u64`) or `varint`, an unsigned LEB128
 * whose canonical form is the shortest one (a trailing zero group is rejected) and which never
 * exceeds 64 bits. Byte strings: `varint` length then the bytes, with a caller-given maximum.
 * A decoder must consume the whole input: `Reader.end()` rejects trailing bytes.
 */
import { CodecError, CodecErrorCode } from './errors.js';

const U64_MAX = (1n << 64n) - 1n;

/** Appends canonical encodings to a growing buffer. */
export class Writer {
  private buf: Uint8Array;
  private len = 0;
  constructor(capacity = 256) {
    this.buf = new Uint8Array(capacity);
  }
  private reserve(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
  u8(v: number): this {
    this.reserve(1);
    this.buf[this.len++] = v & 0xff;
    return this;
  }
  u32(v: number): this {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new CodecError(CodecErrorCode.BAD_VALUE, `u32 out of range: ${v}`);
    this.reserve(4);
    this.buf[this.len++] = v & 0xff;
    this.buf[this.len++] = (v >>> 8) & 0xff;
    this.buf[this.len++] = (v >>> 16) & 0xff;
    this.buf[this.len++] = (v >>> 24) & 0xff;
    return this;
  }
  u64(v: bigint): this {
    if (v < 0n || v > U64_MAX) throw new CodecError(CodecErrorCode.BAD_VALUE, `u64 out of range: ${v}`);
    this.u32(Number(v & 0xffffffffn));
    return this.u32(Number(v >> 32n));
  }
  varint(v: bigint | number): this {
    let x = BigInt(v);
    if (x < 0n || x > U64_MAX) throw new CodecError(CodecErrorCode.BAD_VALUE, `varint out of range: ${x}`);
    do {
      const byte = Number(x & 0x7fn);
      x >>= 7n;
      this.u8(x > 0n ? byte | 0x80 : byte);
    } while (x > 0n);
    return this;
  }
  /** Raw bytes, no length prefix (fixed-size fields). */
  raw(b: Uint8Array): this {
    this.reserve(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
    return this;
  }
  /** Length-prefixed bytes. */
  bytes(b: Uint8Array): this {
    return this.varint(b.length).raw(b);
  }
  get length(): number {
    return this.len;
  }
  finish(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

/** Reads canonical encodings; every failure is a `CodecError` with the offset. */
export class Reader {
  private pos = 0;
  constructor(private readonly data: Uint8Array) {}
  get offset(): number {
    return this.pos;
  }
  get remaining(): number {
    return this.data.length - this.pos;
  }
  private need(n: number): void {
    if (n > this.data.length - this.pos) {
      throw new CodecError(CodecErrorCode.TRUNCATED, `need ${n} bytes at offset ${this.pos}, have ${this.data.length - this.pos}`, this.pos);
    }
  }
  u8(): number {
    this.need(1);
    return this.data[this.pos++];
  }
  u32(): number {
    this.need(4);
    const d = this.data;
    const p = this.pos;
    this.pos += 4;
    return (d[p] | (d[p + 1] << 8) | (d[p + 2] << 16) | (d[p + 3] << 24)) >>> 0;
  }
  u64(): bigint {
    const lo = this.u32();
    const hi = this.u32();
    return (BigInt(hi) << 32n) | BigInt(lo);
  }
  varint(): bigint {
    const start = this.pos;
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = this.u8();
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) {
        // The shortest form never ends with a zero group (except the single byte 0x00).
        if (byte === 0 && this.pos - start > 1) {
          throw new CodecError(CodecErrorCode.NON_CANONICAL_INT, `non-canonical varint at offset ${start}`, start);
        }
        break;
      }
      shift += 7n;
      if (shift >= 70n) throw new CodecError(CodecErrorCode.NON_CANONICAL_INT, `varint too long at offset ${start}`, start);
    }
    if (result > U64_MAX) throw new CodecError(CodecErrorCode.NON_CANONICAL_INT, `varint exceeds 64 bits at offset ${start}`, start);
    return result;
  }
  /** A varint that must fit `max` (a count or a length). */
  varnum(max: number, what = 'value'): number {
    const at = this.pos;
    const v = this.varint();
    if (v > BigInt(max)) throw new CodecError(CodecErrorCode.OVERSIZED, `${what} ${v} exceeds ${max} at offset ${at}`, at);
    return Number(v);
  }
  raw(n: number): Uint8Array {
    this.need(n);
    const out = this.data.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  /** Length-prefixed bytes, at most `max` long. */
  bytes(max: number, what = 'byte string'): Uint8Array {
    const n = this.varnum(max, `${what} length`);
    return this.raw(n);
  }
  /** Rejects anything left over. */
  end(): void {
    if (this.pos !== this.data.length) {
      throw new CodecError(CodecErrorCode.TRAILING_BYTES, `${this.data.length - this.pos} trailing bytes at offset ${this.pos}`, this.pos);
    }
  }
}

/** Decodes all of `data` with `read`, rejecting trailing bytes; only `CodecError`s escape. */
export function decodeAll<T>(data: Uint8Array, read: (r: Reader) => T): T {
  const r = new Reader(data);
  const value = read(r);
  r.end();
  return value;
}
