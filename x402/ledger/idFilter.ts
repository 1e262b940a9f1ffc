/**
 * Which payment ids a LevelDB ledger may hold: a Bloom filter (false positives, never a false
 * negative) that grows by adding segments, each twice the size of the one before. The ledger
 * adds every id before writing its record and loads the stored ones at open, so "not in the
 * filter" means "no record" and a settle's lookup of a new payment needs no read.
 *
 * Sizing: 14.4 bits and 10 probes an id give a false-positive rate of about 0.1 % per full
 * segment; a segment of 65,536 ids takes 115 kB, a million ids about 1.8 MB in all.
 */

/** Bits per id and probes (0.1 % false positives when a segment is full). */
const BITS_PER_ID = 14.4;
const PROBES = 10;
/** Ids the first segment holds. */
const FIRST_CAPACITY = 65_536;

interface Segment {
  readonly bits: Uint32Array;
  readonly size: number;
  readonly capacity: number;
  count: number;
}

function segment(capacity: number): Segment {
  const size = Math.ceil((capacity * BITS_PER_ID) / 32) * 32;
  return { bits: new Uint32Array(size / 32), size, capacity, count: 0 };
}

/** Two 32-bit FNV-1a hashes of `s` with different offsets (double hashing gives the probes). */
function hashes(s: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15);
  }
  return [a >>> 0, (b | 1) >>> 0];
}

/** The filter (see module comment). */
export class PaymentIdFilter {
  private readonly segments: Segment[] = [segment(FIRST_CAPACITY)];

  add(id: string): void {
    let last = this.segments[this.segments.length - 1]!;
    if (last.count >= last.capacity) {
      last = segment(last.capacity * 2);
      this.segments.push(last);
    }
    const [h1, h2] = hashes(id);
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + i * h2) % last.size;
      last.bits[bit >>> 5]! |= 1 << (bit & 31);
    }
    last.count++;
  }

  /** False: `id` was never added. True: it probably was. */
  mightHave(id: string): boolean {
    const [h1, h2] = hashes(id);
    return this.segments.some((s) => {
      for (let i = 0; i < PROBES; i++) {
        const bit = (h1 + i * h2) % s.size;
        if ((s.bits[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
      }
      return true;
    });
  }
}
