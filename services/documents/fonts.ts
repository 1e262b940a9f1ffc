/**
 * The fonts embedded in every document (pdfkit's 14 standard fonts are WinAnsi only): DejaVu Sans
 * (package dejavu-fonts-ttf, Bitstream Vera licence + public domain: Latin, Greek, Cyrillic and
 * more) and Noto Sans SC's Simplified-Chinese subset (package @fontsource/noto-sans-sc, SIL OFL
 * 1.1: Han ideographs, kana, CJK punctuation), read and parsed once (fontkit, pdfkit's own font
 * engine; parsing per document cost ~400 ms) from the installed packages. pdfkit embeds only the
 * glyphs a document uses.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { inflateSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import { create, type Font } from 'fontkit';

const require = createRequire(import.meta.url);

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

/** Whether the font files are installed (the health probe; does not parse them). */
export function documentFontsInstalled(): boolean {
  try {
    const dejavu = join(dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
    const noto = join(dirname(require.resolve('@fontsource/noto-sans-sc/LICENSE')), 'files');
    return ['DejaVuSans.ttf', 'DejaVuSans-Bold.ttf'].every((f) => existsSync(join(dejavu, f))) && existsSync(join(noto, 'noto-sans-sc-chinese-simplified-400-normal.woff'));
  } catch {
    return false;
  }
}

/** Loads (once) the embedded fonts from their packages. */
export function documentFonts(): DocumentFonts {
  if (cached) return cached;
  const dejavu = join(dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
  const noto = join(dirname(require.resolve('@fontsource/noto-sans-sc/LICENSE')), 'files');
  cached = {
    regular: create(readFileSync(join(dejavu, 'DejaVuSans.ttf'))),
    bold: create(readFileSync(join(dejavu, 'DejaVuSans-Bold.ttf'))),
    cjk: create(woffToSfnt(readFileSync(join(noto, 'noto-sans-sc-chinese-simplified-400-normal.woff')))),
  };
  return cached;
}

/** Characters drawn with the CJK font: Han, kana, CJK symbols and full-width forms. */
export const CJK_CHAR = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u303f\uff00-\uffef]/u;
