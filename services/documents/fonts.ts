/**
 * The fonts embedded in every document (pdfkit's 14 standard fonts are WinAnsi only): DejaVu Sans
 * (Bitstream Vera licence + public domain: Latin, Greek, Cyrillic and more) and Noto Sans SC's
 * Simplified-Chinese subset (SIL OFL 1.1: Han ideographs, kana, CJK punctuation), shipped in
 * `vendor/fonts/` (copied unchanged from their npm packages; its README says which and when),
 * read and parsed once (fontkit, pdfkit's own font engine; parsing per document cost ~400 ms).
 * pdfkit embeds only the glyphs a document uses.
 */
import { existsSync, readFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { join } from 'node:path';
import type { Font } from 'fontkit';
import { PROJECT_ROOT } from '../projectRoot.js';

/** Where the font files are. */
export const FONTS_DIR = join(PROJECT_ROOT, 'vendor', 'fonts');
const FILES = { regular: 'DejaVuSans.ttf', bold: 'DejaVuSans-Bold.ttf', cjk: 'noto-sans-sc-chinese-simplified-400-normal.woff' } as const;

/** The parsed fonts: regular and bold Latin/Greek/Cyrillic, and CJK. */
export interface DocumentFonts {
  readonly regular: Font;
  readonly bold: Font;
  readonly cjk: Font;
}

let cached: DocumentFonts | undefined;

/**
 * A WOFF 1.0 font as the plain TrueType/OpenType file it wraps (tables inflated once). fontkit
 * reads WOFF directly but inflates a table at every access, in pure JS: seconds per document.
 */
export function woffToSfnt(woff: Buffer): Buffer {
  if (woff.toString('latin1', 0, 4) !== 'wOFF') throw new Error('not a WOFF 1.0 font');
  const numTables = woff.readUInt16BE(12);
  const tables = [];
  for (let i = 0; i < numTables; i++) {
    const e = 44 + i * 20;
    const offset = woff.readUInt32BE(e + 4);
    const compLength = woff.readUInt32BE(e + 8);
    const origLength = woff.readUInt32BE(e + 12);
    const raw = woff.subarray(offset, offset + compLength);
    tables.push({ tag: woff.subarray(e, e + 4), checksum: woff.readUInt32BE(e + 16), data: compLength < origLength ? inflateSync(raw) : raw });
  }
  const headerLen = 12 + 16 * numTables;
  const size = tables.reduce((n, t) => n + ((t.data.length + 3) & ~3), headerLen);
  const out = Buffer.alloc(size);
  woff.copy(out, 0, 4, 8); // flavor
  const pow = 2 ** Math.floor(Math.log2(numTables));
  out.writeUInt16BE(numTables, 4);
  out.writeUInt16BE(pow * 16, 6);
  out.writeUInt16BE(Math.log2(pow), 8);
  out.writeUInt16BE(numTables * 16 - pow * 16, 10);
  let at = headerLen;
  tables.forEach((t, i) => {
    const r = 12 + i * 16;
    t.tag.copy(out, r);
    out.writeUInt32BE(t.checksum, r + 4);
    out.writeUInt32BE(at, r + 8);
    out.writeUInt32BE(t.data.length, r + 12);
    t.data.copy(out, at);
    at += (t.data.length + 3) & ~3;
  });
  return out;
}

/** Whether the font files are there (the health probe; does not parse them). */
export function documentFontsInstalled(): boolean {
  return Object.values(FILES).every((f) => existsSync(join(FONTS_DIR, f)));
}

/** Loads (once) the embedded fonts; fontkit itself is imported at the first document, not at start. */
export async function documentFonts(): Promise<DocumentFonts> {
  if (cached) return cached;
  const { create } = await import('fontkit');
  const read = (f: string) => readFileSync(join(FONTS_DIR, f));
  cached = { regular: create(read(FILES.regular)), bold: create(read(FILES.bold)), cjk: create(woffToSfnt(read(FILES.cjk))) };
  return cached;
}

/**
 * Characters drawn with the CJK font: Han, kana, CJK symbols and full-width forms. The whole
 * Hiragana and Katakana blocks, not only their scripts: the prolonged sound mark ー and the
 * middle dot ・ are of the Common script and DejaVu has no glyph for them.
 */
export const CJK_CHAR = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u30ff\uff00-\uffef]/u;
