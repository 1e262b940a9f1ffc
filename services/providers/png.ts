/** A PNG's header checked from its bytes: signature, IHDR chunk (with its CRC), size, and an IEND at the end. */
import { crc32 } from 'node:zlib';

/** What the header of a valid PNG says. */
export interface PngInfo {
  readonly width: number;
  readonly height: number;
  readonly bitDepth: number;
  readonly colorType: number;
}

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const IEND_TAIL = [0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82];

/** The PNG header of `bytes`, or the reason it is not a well-formed PNG. */
export function readPngInfo(bytes: Uint8Array): PngInfo | { readonly error: string } {
  if (bytes.length < 8 + 25 + 12 || SIGNATURE.some((b, i) => bytes[i] !== b)) return { error: 'not a PNG (bad signature)' };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const type = new TextDecoder().decode(bytes.subarray(12, 16));
  if (view.getUint32(8) !== 13 || type !== 'IHDR') return { error: 'PNG without a leading IHDR chunk' };
  if ((crc32(bytes.subarray(12, 29)) >>> 0) !== view.getUint32(29)) return { error: 'PNG IHDR checksum mismatch' };
  // IEND: length 0, type, CRC — always the same last 12 bytes.
  const tail = bytes.subarray(bytes.length - 8);
  if (view.getUint32(bytes.length - 12) !== 0 || IEND_TAIL.some((b, i) => tail[i] !== b)) return { error: 'PNG is truncated (no IEND chunk)' };
  return { width: view.getUint32(16), height: view.getUint32(20), bitDepth: bytes[24], colorType: bytes[25] };
}
