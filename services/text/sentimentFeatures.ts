/**
 * The features of native-sentiment's classifier (services/text/sentimentModel.ts), the same at
 * training time (services/data/sentiment/train.ts) and at run time: lower-case word tokens, words
 * after a negation marked `not_` up to the end of their clause, and the unigrams and bigrams of
 * that sequence, each counted once per text (binarised, as in Wang & Manning 2012).
 */

/** Words that negate the rest of their clause ("not", "never", "didn't", …). */
const NEGATORS: ReadonlySet<string> = new Set(['not', 'no', 'never', 'nothing', 'nobody', 'none', 'neither', 'nor', 'nowhere', 'without', 'hardly', 'barely', 'cannot', 'cant', 'dont', 'didnt', 'doesnt', 'isnt', 'wasnt', 'werent', 'arent', 'wont', 'wouldnt', 'couldnt', 'shouldnt', 'havent', 'hasnt', 'hadnt', 'aint']);
/** Tokens that end a negation's scope: clause punctuation and a contrast. */
const CLAUSE_END = /^[.,;:!?]$|^but$/;

/** Lower-case tokens of `text`: words (apostrophes kept inside, "n't" joined), numbers, and ! ? . , ; : as their own tokens. */
export function sentimentTokens(text: string): string[] {
  const t = text
    .toLowerCase()
    .replace(/<br\s*\/?>/g, ' ')
    .replace(/[’‘`]/g, "'")
    .replace(/n't\b/g, 'nt');
  return t.match(/[a-z0-9]+(?:'[a-z]+)?|[!?.,;:]/g) ?? [];
}

/** The distinct unigram and bigram features of `text` (negation-marked; punctuation other than ! and ? is only a boundary). */
export function sentimentFeatures(text: string): Set<string> {
  const out = new Set<string>();
  let negated = false;
  let prev: string | undefined;
  for (const tok of sentimentTokens(text)) {
    if (CLAUSE_END.test(tok)) {
      negated = false;
      if (tok === '!' || tok === '?') out.add(tok);
      prev = undefined;
      continue;
    }
    const word = tok.replace(/'s$/, '');
    if (NEGATORS.has(word.replace(/'/g, ''))) {
      out.add(word);
      if (prev) out.add(`${prev} ${word}`);
      negated = true;
      prev = word;
      continue;
    }
    const f = negated ? `not_${word}` : word;
    out.add(f);
    if (prev) out.add(`${prev} ${f}`);
    prev = f;
  }
  return out;
}
