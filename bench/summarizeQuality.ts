/**
 * native-summarize against human reference summaries (section 4 of `npm run bench -- quality`;
 * the data, its source, licence and split: bench/quality-data/summarize/README.md).
 *
 * Every system picks whole sentences from the same split of the text (wink-nlp's, as the service
 * reads it), so they differ only in which sentences they choose:
 *   - the service: its ranking (`rankSentences`, services/text/analyse.ts), the best k in text
 *     order; its TL;DR alone; and its whole answer (TL;DR + key points);
 *   - LEAD-k: the first k sentences (the standard news baseline);
 *   - TextRank-k: Mihalcea & Tarau (2004), sentences ranked by weighted PageRank (d = 0.85) over
 *     the word-overlap similarity |Si ∩ Sj| / (log |Si| + log |Sj|), the best k in text order.
 * Scores: ROUGE-1, ROUGE-2 and ROUGE-L (summary-level union LCS) per Lin (2004), F1 and recall,
 * averaged over the documents of a source; tokens are lower-cased runs of letters and digits, no
 * stemming, no stop words removed (as `rouge-score` without its stemmer).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { rankSentences, summarizeText } from '../services/text/analyse.js';
import { PROJECT_ROOT } from '../services/projectRoot.js';

/** Where the reference data lives. */
export const SUMMARIZE_DATA = join(PROJECT_ROOT, 'bench', 'quality-data', 'summarize');

/** One document with its human reference summary (split into sentences). */
export interface ReferenceDoc {
  readonly id: string;
  /** `bbc-dev` (the part the method was chosen on), `bbc-test`, `xsum` (both held out). */
  readonly source: string;
  readonly text: string;
  readonly reference: readonly string[];
}

/**
 * The reference documents. BBC News Summary: the article's first line is its title, left out (the
 * references never quote it); the first two documents of each category form the development part,
 * the next three the test part. XSum: the document and its one-sentence summary.
 */
export function loadReferenceDocs(): ReferenceDoc[] {
  const docs: ReferenceDoc[] = [];
  const bbc = join(SUMMARIZE_DATA, 'bbc-news-summary');
  for (const category of readdirSync(join(bbc, 'article')).sort()) {
    readdirSync(join(bbc, 'article', category)).sort().forEach((file, index) => {
      const article = readFileSync(join(bbc, 'article', category, file), 'utf8').split('\n');
      const reference = readFileSync(join(bbc, 'summary', category, file), 'utf8').split('\n').filter((l) => l.trim());
      docs.push({ id: `bbc/${category}/${file}`, source: index < 2 ? 'bbc-dev' : 'bbc-test', text: article.slice(1).join('\n').trim(), reference });
    });
  }
  readFileSync(join(SUMMARIZE_DATA, 'xsum', 'sample.json'), 'utf8').split('\n').filter(Boolean).forEach((line, i) => {
    const { document, summary } = JSON.parse(line) as { document: string; summary: string };
    docs.push({ id: `xsum/${i + 1}`, source: 'xsum', text: document, reference: [summary] });
  });
  return docs;
}

/** ROUGE's tokens: lower-cased runs of letters and digits. */
export const rougeTokens = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** Precision, recall and F1 of one score. */
export interface Prf {
  readonly p: number;
  readonly r: number;
  readonly f: number;
}
const prf = (hits: number, candidate: number, reference: number): Prf => {
  const p = candidate ? hits / candidate : 0;
  const r = reference ? hits / reference : 0;
  return { p, r, f: p + r ? (2 * p * r) / (p + r) : 0 };
};

function grams(tokens: readonly string[], n: number): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i + n <= tokens.length; i++) {
    const g = tokens.slice(i, i + n).join(' ');
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

/** ROUGE-N (Lin 2004, eq. 1): clipped n-gram matches over the reference's n-grams (recall) and the candidate's (precision). */
export function rougeN(candidate: readonly string[], reference: readonly string[], n: number): Prf {
  const c = grams(candidate.flatMap(rougeTokens), n);
  const r = grams(reference.flatMap(rougeTokens), n);
  let hits = 0;
  for (const [g, k] of c) hits += Math.min(k, r.get(g) ?? 0);
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  return prf(hits, total(c), total(r));
}

/** Positions in `a` of one longest common subsequence of `a` and `b`. */
function lcsPositions(a: readonly string[], b: readonly string[]): number[] {
  const t = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) t[i][j] = a[i] === b[j] ? t[i + 1][j + 1] + 1 : Math.max(t[i + 1][j], t[i][j + 1]);
  const out: number[] = [];
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (a[i] === b[j]) {
      out.push(i);
      i++;
      j++;
    } else if (t[i + 1][j] >= t[i][j + 1]) i++;
    else j++;
  }
  return out;
}

/**
 * Summary-level ROUGE-L (Lin 2004, §3.2): for each reference sentence, the union of its words
 * on a longest common subsequence with each candidate sentence; hits summed over the reference,
 * each word counted no more often than it occurs in the candidate and in the reference (as
 * ROUGE-1.5.5 and `rouge-score` count, so that ROUGE-L never exceeds ROUGE-1).
 */
export function rougeL(candidate: readonly string[], reference: readonly string[]): Prf {
  const cand = candidate.map(rougeTokens);
  const ref = reference.map(rougeTokens);
  const left = (sentences: string[][]) => grams(sentences.flat(), 1);
  const leftC = left(cand);
  const leftR = left(ref);
  let hits = 0;
  for (const r of ref) {
    const union = new Set<number>();
    for (const c of cand) for (const i of lcsPositions(r, c)) union.add(i);
    for (const i of [...union].sort((a, b) => a - b)) {
      const t = r[i];
      if ((leftC.get(t) ?? 0) > 0 && (leftR.get(t) ?? 0) > 0) {
        hits++;
        leftC.set(t, leftC.get(t)! - 1);
        leftR.set(t, leftR.get(t)! - 1);
      }
    }
  }
  return prf(hits, cand.reduce((a, c) => a + c.length, 0), ref.reduce((a, r) => a + r.length, 0));
}

/** The k best of `scores` (ties to the earlier sentence), returned in text order. */
export function topK(scores: readonly number[], k: number): number[] {
  return scores.map((s, i) => ({ s, i })).sort((a, b) => b.s - a.s || a.i - b.i).slice(0, k).map((x) => x.i).sort((a, b) => a - b);
}

/** TextRank sentence scores (Mihalcea & Tarau 2004): weighted PageRank, d = 0.85, over word-overlap similarity. */
export function textRankScores(sentences: readonly string[]): number[] {
  const words = sentences.map((s) => new Set(rougeTokens(s)));
  const n = sentences.length;
  const w = words.map((a, i) =>
    words.map((b, j) => {
      if (i === j || a.size < 2 || b.size < 2) return 0;
      let common = 0;
      for (const x of a) if (b.has(x)) common++;
      return common / (Math.log(a.size) + Math.log(b.size));
    }),
  );
  const out = w.map((row) => row.reduce((a, b) => a + b, 0));
  let score = new Array<number>(n).fill(1);
  for (let it = 0; it < 100; it++) score = score.map((_, i) => 0.15 + 0.85 * w.reduce((a, row, j) => a + (out[j] ? (row[i] / out[j]) * score[j] : 0), 0));
  return score;
}

/** The systems compared, by name, each a choice of sentences (indices) or a text of its own. */
export const SYSTEMS = ['service top-3', 'LEAD-3', 'TextRank-3', 'service TL;DR', 'LEAD-1', 'TextRank-1', 'service answer'] as const;
export type SystemName = (typeof SYSTEMS)[number];

/** Mean ROUGE of one system over one source's documents. */
export interface RougeRow {
  readonly r1: Prf;
  readonly r2: Prf;
  readonly rl: Prf;
  /** Mean sentences chosen. */
  readonly sentences: number;
}

/** The service's summariser as the evaluation calls it (another version can be measured the same way). */
export interface Summarizer {
  rankSentences(text: string): Promise<readonly { text: string; score: number }[]>;
  summarizeText(text: string): Promise<{ tldr: string; keyPoints: string[] }>;
}
const SERVICE: Summarizer = { rankSentences: (t) => rankSentences(t), summarizeText };

/** What each system picks for one document, as sentences. */
export async function systemOutputs(text: string, summarizer: Summarizer = SERVICE): Promise<Record<SystemName, string[]>> {
  const ranked = await summarizer.rankSentences(text);
  const sentences = ranked.map((s) => s.text);
  const service = ranked.map((s) => s.score);
  const tr = textRankScores(sentences);
  const pick = (idx: number[]) => idx.map((i) => sentences[i]);
  const answer = await summarizer.summarizeText(text);
  const lead = (k: number) => sentences.slice(0, k);
  return {
    'service top-3': pick(topK(service, 3)),
    'LEAD-3': lead(3),
    'TextRank-3': pick(topK(tr, 3)),
    'service TL;DR': pick(topK(service, 1)),
    'LEAD-1': lead(1),
    'TextRank-1': pick(topK(tr, 1)),
    'service answer': [answer.tldr, ...answer.keyPoints],
  };
}

/** ROUGE per source and system, plus the TL;DRs that are the text's first sentence. */
export async function evaluateSummaries(docs: readonly ReferenceDoc[] = loadReferenceDocs(), summarizer: Summarizer = SERVICE): Promise<Record<string, { docs: number; tldrIsFirst: number; systems: Record<SystemName, RougeRow> }>> {
  const acc = new Map<string, { docs: number; tldrIsFirst: number; sums: Map<SystemName, number[]> }>();
  for (const doc of docs) {
    const out = await systemOutputs(doc.text, summarizer);
    const a = acc.get(doc.source) ?? acc.set(doc.source, { docs: 0, tldrIsFirst: 0, sums: new Map() }).get(doc.source)!;
    a.docs++;
    if (out['service TL;DR'][0] === out['LEAD-1'][0]) a.tldrIsFirst++;
    for (const name of SYSTEMS) {
      const c = out[name];
      const r1 = rougeN(c, doc.reference, 1);
      const r2 = rougeN(c, doc.reference, 2);
      const rl = rougeL(c, doc.reference);
      const v = [r1.p, r1.r, r1.f, r2.p, r2.r, r2.f, rl.p, rl.r, rl.f, c.length];
      const s = a.sums.get(name) ?? a.sums.set(name, new Array<number>(v.length).fill(0)).get(name)!;
      v.forEach((x, i) => (s[i] += x));
    }
  }
  const result: Record<string, { docs: number; tldrIsFirst: number; systems: Record<SystemName, RougeRow> }> = {};
  for (const [source, a] of acc) {
    const systems = {} as Record<SystemName, RougeRow>;
    for (const [name, s] of a.sums) {
      const m = s.map((x) => x / a.docs);
      systems[name] = { r1: { p: m[0], r: m[1], f: m[2] }, r2: { p: m[3], r: m[4], f: m[5] }, rl: { p: m[6], r: m[7], f: m[8] }, sentences: m[9] };
    }
    result[source] = { docs: a.docs, tldrIsFirst: a.tldrIsFirst, systems };
  }
  return result;
}

const pc = (x: number) => (100 * x).toFixed(1);

/** Section 4 of the quality bench: prints ROUGE per source and returns the figures. */
export async function summarizeQuality(): Promise<Awaited<ReturnType<typeof evaluateSummaries>>> {
  const docs = loadReferenceDocs();
  const figures = await evaluateSummaries(docs);
  console.log(`\n4. Summaries: ${docs.length} documents with human reference summaries (bench/quality-data/summarize/: BBC News Summary, XSum), ROUGE F1 / recall in %`);
  for (const [source, f] of Object.entries(figures)) {
    console.log(`   ${source} (${f.docs} documents${source === 'bbc-dev' ? ', the part the method was chosen on' : ', held out'}); the TL;DR is the first sentence in ${f.tldrIsFirst}`);
    for (const name of SYSTEMS) {
      const s = f.systems[name];
      console.log(`     ${name.padEnd(15)} R-1 ${pc(s.r1.f)} / ${pc(s.r1.r)}   R-2 ${pc(s.r2.f)} / ${pc(s.r2.r)}   R-L ${pc(s.rl.f)} / ${pc(s.rl.r)}   (${s.sentences.toFixed(1)} sentences)`);
    }
  }
  return figures;
}
