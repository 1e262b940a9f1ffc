/**
 * The A4 business document (invoice, pro forma, receipt, credit note, quote) drawn with pdfkit:
 * seller and buyer blocks, dates, an item table that breaks across pages with its header
 * repeated, totals, notes / validity / payment details and "Page i of n" on every page.
 *
 * Text goes through one line breaker of our own (`layoutText`) so that a line can mix the Latin
 * and the CJK font and every row's height is known before it is drawn (pdfkit measures one font
 * at a time). Bytes are deterministic: creation and modification dates are the issue date at
 * 00:00 UTC, and pdfkit derives the file id and the font subset tags from them and the content.
 */
import PDFDocument from 'pdfkit';
import { CJK_CHAR, documentFonts } from './fonts.js';
import { displayExact, displayMinor, type DocumentTotals } from './money.js';
import type { SellerInfo } from '../types.js';


/** Everything a document shows, already validated and priced. */
export interface DocumentModel {
  readonly title: string;
  readonly numberLabel: string;
  readonly number: string;
  /** YYYY-MM-DD. */
  readonly issueDate: string;
  readonly seller: SellerInfo;
  readonly buyer: { readonly name: string; readonly address?: string };
  readonly vatRate: number;
  readonly totals: DocumentTotals;
  /** Extra labelled lines under the dates (valid until, original invoice, payment...). */
  readonly details: readonly (readonly [string, string])[];
  readonly notes?: string;
  /** Label of the gross line ("Total due", "Amount paid", "Total credited"). */
  readonly grossLabel: string;
}

/** A rendered document. */
export interface RenderedDocument {
  readonly pdf: Buffer;
  readonly pages: number;
}

type FontName = 'regular' | 'bold' | 'cjk';
interface Run { font: FontName; text: string }
type Line = Run[];

const PAGE = { width: 595.28, height: 841.89 };
const MARGIN = 50;
const FOOTER_Y = PAGE.height - MARGIN + 14;
const BOTTOM = PAGE.height - MARGIN - 10;
const CONTENT_W = PAGE.width - 2 * MARGIN;
/** Item table columns: x offset and width. */
const COLS = { no: [0, 24], desc: [24, 251], qty: [275, 55], unit: [330, 85], amount: [415, CONTENT_W - 415] } as const;

/** Splits text into breakable tokens: CJK characters one by one, whitespace runs, other words. */
function tokens(text: string): string[] {
  return text.match(/\s+|[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u303f\uff00-\uffef]|[^\s\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u303f\uff00-\uffef]+/gu) ?? [];
}

/** Runs of one font each for `text` (`base` for non-CJK characters). */
function runsOf(text: string, base: FontName): Run[] {
  const runs: Run[] = [];
  for (const ch of text) {
    const font: FontName = CJK_CHAR.test(ch) ? 'cjk' : base;
    const last = runs[runs.length - 1];
    if (last && last.font === font) last.text += ch;
    else runs.push({ font, text: ch });
  }
  return runs;
}

/**
 * Lays `text` out in lines at most `width` wide at `size` pt (greedy, words kept whole unless one
 * is wider than a line; explicit newlines kept).
 */
function layoutText(doc: PDFKit.PDFDocument, text: string, width: number, size: number, base: FontName = 'regular'): Line[] {
  const measure = (s: string) => runsOf(s, base).reduce((w, r) => w + doc.font(r.font).fontSize(size).widthOfString(r.text), 0);
  const out: Line[] = [];
  for (const para of text.split(/\r?\n/)) {
    let line = '';
    let lineW = 0;
    const push = () => {
      out.push(runsOf(line.trimEnd(), base));
      line = '';
      lineW = 0;
    };
    for (const tok of tokens(para)) {
      const w = measure(tok);
      if (/^\s+$/.test(tok)) {
        if (line !== '') {
          line += ' ';
          lineW += measure(' ');
        }
        continue;
      }
      if (lineW + w <= width) {
        line += tok;
        lineW += w;
        continue;
      }
      if (line !== '') push();
      if (w <= width) {
        line = tok;
        lineW = w;
        continue;
      }
      // A word wider than the line: break it by characters.
      for (const ch of tok) {
        const cw = measure(ch);
        if (lineW + cw > width && line !== '') push();
        line += ch;
        lineW += cw;
      }
    }
    push();
  }
  return out;
}

/** Draws laid-out lines at (x, y); `align` right aligns each line in `width`. Returns the height used. */
function drawLines(doc: PDFKit.PDFDocument, lines: readonly Line[], x: number, y: number, size: number, width: number, align: 'left' | 'right' = 'left'): number {
  const lh = size * 1.3;
  lines.forEach((line, i) => {
    const w = line.reduce((s, r) => s + doc.font(r.font).fontSize(size).widthOfString(r.text), 0);
    let cx = align === 'right' ? x + width - w : x;
    for (const r of line) {
      // A common alphabetic baseline: the two fonts' ascents differ, so top-aligned runs would not line up.
      doc.font(r.font).fontSize(size).text(r.text, cx, y + i * lh + size, { lineBreak: false, baseline: 'alphabetic' });
      cx += doc.widthOfString(r.text);
    }
  });
  return lines.length * lh;
}

/** Lays out and draws `text`; returns the height used. */
function drawText(doc: PDFKit.PDFDocument, text: string, x: number, y: number, width: number, size: number, opts: { base?: FontName; align?: 'left' | 'right' } = {}): number {
  return drawLines(doc, layoutText(doc, text, width, size, opts.base), x, y, size, width, opts.align);
}

/** A quantity as the exact decimal given (no exponent: 1e-7 prints 0.0000001). */
function fmtQty(q: number): string {
  return displayExact(q, 0);
}

/** Renders `m` to PDF bytes. */
export async function renderDocument(m: DocumentModel): Promise<RenderedDocument> {
  const fonts = await documentFonts();
  const date = new Date(`${m.issueDate}T00:00:00Z`);
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    bufferPages: true,
    autoFirstPage: true,
    compress: true,
    info: { Title: `${m.title} ${m.number}`, Author: m.seller.name, Subject: m.title, Creator: 'native-node', Producer: 'native-node (pdfkit)', CreationDate: date, ModDate: date },
  });
  // pdfkit's typings want bytes or a path; at run time it also takes a parsed fontkit font (PDFFontFactory.open).
  doc.registerFont('regular', fonts.regular as unknown as Buffer);
  doc.registerFont('bold', fonts.bold as unknown as Buffer);
  doc.registerFont('cjk', fonts.cjk as unknown as Buffer);
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  const { totals } = m;
  const money = (minor: bigint) => displayMinor(minor, totals.digits);
  const L = MARGIN;

  // Header: title and number on the left, seller on the right.
  let y = MARGIN;
  y += drawText(doc, m.title, L, y, 280, 20, { base: 'bold' });
  y += drawText(doc, `${m.numberLabel} ${m.number}`, L, y + 4, 280, 10, { base: 'bold' }) + 4;
  y += drawText(doc, `Date of issue: ${m.issueDate}`, L, y, 280, 9);
  for (const [k, v] of m.details) y += drawText(doc, `${k}: ${v}`, L, y, 280, 9);
  let sy = MARGIN;
  const SX = L + 300;
  const SW = CONTENT_W - 300;
  sy += drawText(doc, 'From', SX, sy, SW, 8, { base: 'bold' });
  sy += drawText(doc, m.seller.name, SX, sy, SW, 10, { base: 'bold' });
  sy += drawText(doc, m.seller.address, SX, sy, SW, 9);
  sy += drawText(doc, `VAT ID: ${m.seller.vatId}`, SX, sy, SW, 9);
  y = Math.max(y, sy) + 16;

  // Buyer.
  y += drawText(doc, 'Bill to', L, y, CONTENT_W, 8, { base: 'bold' });
  y += drawText(doc, m.buyer.name, L, y, CONTENT_W / 2, 10, { base: 'bold' });
  if (m.buyer.address) y += drawText(doc, m.buyer.address, L, y, CONTENT_W / 2, 9);
  y += 18;

  // Item table.
  const size = 9;
  const tableHeader = (at: number): number => {
    doc.rect(L, at - 3, CONTENT_W, 16).fill('#eeeeee').fillColor('black');
    drawText(doc, '#', L + COLS.no[0], at, COLS.no[1], size, { base: 'bold' });
    drawText(doc, 'Description', L + COLS.desc[0], at, COLS.desc[1], size, { base: 'bold' });
    drawText(doc, 'Qty', L + COLS.qty[0], at, COLS.qty[1] - 6, size, { base: 'bold', align: 'right' });
    drawText(doc, 'Unit price', L + COLS.unit[0], at, COLS.unit[1] - 6, size, { base: 'bold', align: 'right' });
    drawText(doc, `Amount (${totals.currency})`, L + COLS.amount[0], at, COLS.amount[1], size, { base: 'bold', align: 'right' });
    return at + 18;
  };
  y = tableHeader(y);
  totals.lines.forEach((line, i) => {
    const desc = layoutText(doc, line.description, COLS.desc[1] - 8, size);
    const h = desc.length * size * 1.3 + 4;
    if (y + h > BOTTOM) {
      doc.addPage();
      y = tableHeader(MARGIN);
    }
    drawText(doc, String(i + 1), L + COLS.no[0], y, COLS.no[1], size);
    drawLines(doc, desc, L + COLS.desc[0], y, size, COLS.desc[1] - 8);
    drawText(doc, fmtQty(line.qty), L + COLS.qty[0], y, COLS.qty[1] - 6, size, { align: 'right' });
    drawText(doc, displayExact(line.unitPrice, totals.digits), L + COLS.unit[0], y, COLS.unit[1] - 6, size, { align: 'right' });
    drawText(doc, money(line.totalMinor), L + COLS.amount[0], y, COLS.amount[1], size, { align: 'right' });
    y += h;
    doc.moveTo(L, y - 2).lineTo(L + CONTENT_W, y - 2).lineWidth(0.3).strokeColor('#cccccc').stroke().strokeColor('black');
  });

  // Totals block (kept together on one page).
  const totalRows: [string, string, FontName][] = [
    ['Net', money(totals.netMinor), 'regular'],
    [`VAT ${m.vatRate}%`, money(totals.vatMinor), 'regular'],
    [`${m.grossLabel} (${totals.currency})`, money(totals.grossMinor), 'bold'],
  ];
  if (y + 70 > BOTTOM) {
    doc.addPage();
    y = MARGIN;
  }
  y += 8;
  for (const [label, value, font] of totalRows) {
    drawText(doc, label, L + 250, y, 160, 10, { base: font, align: 'right' });
    drawText(doc, value, L + COLS.amount[0], y, COLS.amount[1], 10, { base: font, align: 'right' });
    y += 16;
  }

  // Notes.
  if (m.notes) {
    const lines = layoutText(doc, m.notes, CONTENT_W, 9);
    y += 14;
    let i = 0;
    const lh = 9 * 1.3;
    while (i < lines.length) {
      if (y + 2 * lh > BOTTOM) {
        doc.addPage();
        y = MARGIN;
      }
      if (i === 0) y += drawText(doc, 'Notes', L, y, CONTENT_W, 8, { base: 'bold' });
      const fit = Math.max(1, Math.floor((BOTTOM - y) / lh));
      y += drawLines(doc, lines.slice(i, i + fit), L, y, 9, CONTENT_W);
      i += fit;
    }
  }

  // Page numbers.
  const range = doc.bufferedPageRange();
  for (let p = range.start; p < range.start + range.count; p++) {
    doc.switchToPage(p);
    // Writing below the bottom margin would make pdfkit add a page: lift the margin for the footer.
    doc.page.margins.bottom = 0;
    drawText(doc, `${m.title} ${m.number} · Page ${p + 1} of ${range.count}`, L, FOOTER_Y, CONTENT_W, 8, { align: 'right' });
  }
  doc.end();
  return done.then((pdf) => ({ pdf, pages: range.count }));
}
