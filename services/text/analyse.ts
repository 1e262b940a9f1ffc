/**
 * Sentiment, keywords and extractive summaries over wink-nlp's reading of a text (services/text/nlp.ts).
 *
 * - Sentiment, per sentence and overall, in [-1, 1]: the mean of a classifier's vote and two
 *   published lexicon scorers (`polarityOf`). The classifier (services/text/sentimentModel.ts) is
 *   multinomial naive Bayes over unigrams and bigrams with negation marking, trained offline on
 *   the Large Movie Review Dataset (services/data/sentiment/: weights, provenance, licence); its
 *   vote is 2·P(positive) − 1, or 0 when P is between 1/3 and 2/3. The lexicon score is the mean
 *   of wink-nlp's (AFINN-style valences with negation and emoji handling) and VADER's compound
 *   (Hutto & Gilbert 2014, the authors' JavaScript port `vader-sentiment`: its own lexicon, with
 *   negation scope, boosters and dampeners, "but" clauses, ALL-CAPS and "!" emphasis; words
 *   outside its lexicon backed off to their lemma or a negated stem, `vaderWord`). Label positive
 *   above 0.01, negative below −0.01, else neutral (a text without opinion words on which the
 *   classifier is undecided scores 0 and stays neutral); confidence = 0.5 × |polarity| scaled to 1
 *   at 0.5 + 0.5 × the share of sentences that agree with the overall label.
 * - Keywords: lemmas of nouns, proper nouns and adjectives (stop words out) and two- or three-word
 *   noun phrases, scored by frequency relative to the most frequent; topics are the top nouns.
 * - Summaries: sentences scored by their centrality in the graph of TF-ISF similarities between
 *   sentences, their share of the key terms and length and position priors, asides without a key
 *   term and a narrator's short scene-setting scored down (see `scoreSentences`); TL;DR = the
 *   best sentence, key points = up to 5 of the next best that carry a key term, have at least half
 *   the best's support and repeat no chosen one, in text order.
 */
import type { ItemSentence, ItemToken } from 'wink-nlp';
import { emotionsOf, EMOTION_METHOD } from './emotions.js';
import { ServiceError } from '../types.js';
import { detectLanguage, loadWinkNlp, namedEntities, readDoc, round3, winkNlp, type LanguageGuess } from './nlp.js';
import { classifierVote, loadSentimentModel } from './sentimentModel.js';

type Vader = typeof import('vader-sentiment').SentimentIntensityAnalyzer;
let vaderLoad: Promise<Vader> | undefined;
let vaderLoaded: Vader | undefined;

/**
 * Loads the engines `read` uses (wink-nlp and its model, VADER, the sentiment classifier), each
 * once. The services' prechecks call it, so a node's first paid text call does not spend its run
 * time budget loading models (about a second on a quiet machine, far more on a busy one).
 */
export async function loadTextEngines(): Promise<void> {
  vaderLoad ??= import('vader-sentiment').then((m) => (vaderLoaded = m.SentimentIntensityAnalyzer));
  vaderLoad.catch(() => (vaderLoad = undefined));
  await Promise.all([loadWinkNlp(), vaderLoad, loadSentimentModel()]);
}

/** `loadTextEngines` for a precheck: warmed before payment; a failed load is the run's to report. */
export function warmTextEngines(): Promise<void> {
  return loadTextEngines().catch(() => undefined);
}

/** VADER's analyzer (`loadTextEngines()` must have resolved). */
function vaderScores(text: string): { compound: number } {
  if (!vaderLoaded) throw new Error('vader-sentiment is not loaded yet');
  return vaderLoaded.polarity_scores(text);
}

/** A sentence as the analyses see it. */
interface SentenceView {
  readonly text: string;
  /** The sentence's polarity: mean of the classifier's vote and the lexicons' score (`polarityOf`). */
  readonly sentiment: number;
  /** The scores it is made of: wink-nlp's, VADER's, the classifier's vote. */
  readonly wink: number;
  readonly vader: number;
  readonly classifier: number;
  /** Lemmas of the content words (no stop words, no punctuation, no numbers), lower case. */
  readonly content: readonly string[];
  /** The content lemmas not under a negation ("not good": not `good`): what the emotion lexicon reads. */
  readonly affective: readonly string[];
  /** Lemmas of nouns/proper nouns/adjectives with their part of speech and token position in the sentence. */
  readonly tagged: readonly { lemma: string; pos: string; at: number }[];
}

/** Words that negate what follows them in their clause. */
const NEGATIONS: ReadonlySet<string> = new Set(['not', "n't", 'n’t', 'no', 'never', 'nothing', 'nobody', 'none', 'neither', 'nor', 'without', 'hardly', 'barely', 'cannot', 'cant', 'dont', 'isnt', 'wasnt', 'doesnt', 'didnt', 'wont']);
/** How many words after a negation it reaches ("not very good": good is negated). */
const NEGATION_SCOPE = 3;

function read(text: string): { sentences: SentenceView[]; overall: number; entities: { value: string; type: string }[] } {
  const nlp = winkNlp();
  const its = nlp.its;
  const doc = readDoc(text);
  const sentences: SentenceView[] = [];
  doc.sentences().each((s: ItemSentence) => {
    const content: string[] = [];
    const affective: string[] = [];
    const tagged: { lemma: string; pos: string; at: number }[] = [];
    // Words since the last negation ("not", "n't", "never", …) in this clause; punctuation ends its scope.
    let sinceNegation = Infinity;
    // The sentence as VADER reads it: its tokens, words outside VADER's lexicon backed off (`vaderWord`).
    const vaderParts: string[] = [];
    s.tokens().each((t: ItemToken, at: number) => {
      const type = t.out(its.type);
      vaderParts.push(String(t.out(its.precedingSpaces)) + (type === 'word' ? vaderWord(String(t.out()), String((t.out as (f: unknown) => unknown)(its.lemma))) : String(t.out())));
      if (type === 'punctuation') sinceNegation = Infinity;
      if (type !== 'word') return;
      const raw = String(t.out()).toLowerCase();
      if (NEGATIONS.has(raw)) {
        sinceNegation = 0;
        return;
      }
      sinceNegation++;
      if (t.out(its.stopWordFlag)) return;
      // The typings of its.lemma do not fit ItemToken.out's overloads; at run time it is an its function like the others.
      const lemma = String((t.out as (f: unknown) => unknown)(its.lemma)).toLowerCase();
      if (lemma.length < 2) return;
      content.push(lemma);
      if (sinceNegation > NEGATION_SCOPE) affective.push(lemma);
      const pos = String(t.out(its.pos));
      if (pos === 'NOUN' || pos === 'PROPN' || pos === 'ADJ') tagged.push({ lemma, pos, at });
    });
    const sentenceText = s.out().trim();
    const wink = Number(s.out(its.sentiment));
    const vader = vaderScores(vaderInput(vaderParts.join('').trim())).compound;
    const classifier = classifierVote(sentenceText);
    sentences.push({ text: sentenceText, sentiment: polarityOf(wink, vader, classifier), wink, vader, classifier, content, affective, tagged });
  });
  const entities = (doc.entities().out(its.detail) as unknown as { value: string; type: string }[]).map((e) => ({ value: e.value, type: e.type }));
  // Overall: wink-nlp's reading of the whole text with the mean of VADER's sentence scores (VADER is a sentence scorer).
  const vaderOverall = sentences.length ? sentences.reduce((a, x) => a + x.vader, 0) / sentences.length : 0;
  return { sentences, overall: polarityOf(Number(doc.out(its.sentiment)), vaderOverall, classifierVote(text)), entities };
}

/** VADER's negations (its NEGATE list, as published) and its contrastive "but". */
const VADER_CUES: ReadonlySet<string> = new Set([
  'aint', 'arent', 'cannot', 'cant', 'couldnt', 'darent', 'didnt', 'doesnt', 'dont', 'hadnt', 'hasnt', 'havent', 'isnt', 'mightnt', 'mustnt', 'neither', 'neednt', 'never', 'none', 'nope', 'nor',
  'not', 'nothing', 'nowhere', 'oughtnt', 'shant', 'shouldnt', 'uhuh', 'uh-uh', 'wasnt', 'werent', 'without', 'wont', 'wouldnt', 'rarely', 'seldom', 'despite', 'but',
]);

/**
 * A sentence as the vader-sentiment port should see it. The reference implementation (Python
 * vaderSentiment) looks negations and "but" up in lower case; the JavaScript port compares them as
 * written, so "Not impressed." read as praise and a sentence-initial "But" was no contrast. Those
 * cue words (and any word with "n't") are lower-cased here, typographic apostrophes made plain; the
 * other words keep their case, which VADER reads as emphasis.
 */
export function vaderInput(text: string): string {
  return text.replace(/’/gu, "'").replace(/[\p{L}'-]+/gu, (w) => {
    const lower = w.toLowerCase();
    return VADER_CUES.has(lower) || lower.includes("n't") ? lower : w;
  });
}

/** Whether VADER scores a word on its own (it is in VADER's lexicon), remembered per word (bounded). */
const vaderKnows = new Map<string, boolean>();
function inVaderLexicon(word: string): boolean {
  let known = vaderKnows.get(word);
  if (known === undefined) {
    known = vaderScores(word).compound !== 0;
    if (vaderKnows.size >= 50_000) vaderKnows.clear();
    vaderKnows.set(word, known);
  }
  return known;
}

/**
 * A word as VADER should read it. VADER looks words up as written, so an inflection its lexicon
 * lacks counts for nothing; and it has no rule for negating prefixes. A word that is not in
 * VADER's lexicon is read as its lemma (wink-nlp's) when the lemma is, or else, for a word of
 * "un" + at least 4 letters whose stem is in the lexicon, as "not <stem>" (VADER's own negation
 * rule then applies: "unhelpful" reads as "not helpful"). Words in the lexicon stay as written.
 * Chosen on the IMDb development split: 76.5 % without either, 77.2 % with the lemma, 77.5 %
 * with both.
 */
export function vaderWord(word: string, lemma: string): string {
  const lower = word.toLowerCase();
  if (inVaderLexicon(lower)) return word;
  const caps = word.length > 1 && word === word.toUpperCase();
  const base = lemma.toLowerCase();
  if (base !== lower && inVaderLexicon(base)) return caps ? base.toUpperCase() : base;
  if (/^un\p{L}{4,}$/u.test(lower) && inVaderLexicon(lower.slice(2))) return `not ${caps ? lower.slice(2).toUpperCase() : lower.slice(2)}`;
  return word;
}

/**
 * The polarity of a sentence or text, in [-1, 1]: the mean of the classifier's vote
 * (services/text/sentimentModel.ts, 2·P(positive) − 1, 0 when undecided) and the lexicons' score
 * (the mean of wink-nlp's and VADER's). The lexicon mean was chosen on the IMDb third of the UCI
 * review sentences before that set became evaluation-only (wink-nlp alone 71.6 %, VADER alone
 * 69.3 %, their mean with VADER's lexicon back-off 77.3 %); the classifier and this mean were
 * chosen on the classifier's own development split (the last sentence of 2,448 held-out
 * reviews of its training corpus, labelled by their review, neutral counted wrong): the
 * classifier's vote alone 71.1 %, the lexicons alone 52.7 % (many such sentences have no lexicon
 * word), this mean 74.8 %, the lexicons whenever they find an opinion and the vote otherwise
 * 63.5-67.2 %. The lexicons keep
 * their rules ("but" clauses, caps, "!") where the bag of n-grams has none.
 */
const polarityOf = (wink: number, vader: number, classifier: number): number => ((wink + vader) / 2 + classifier) / 2;

/**
 * Polarities within ±NEUTRAL_BAND are neutral. A sentence without any opinion word scores exactly
 * 0; the band only decides near-cancellations. Looked at on the development split (IMDb) over 0,
 * 0.005, 0.01, 0.02, 0.03, 0.05, 0.1: 77.5 %, 77.4 %, 77.3 %, 76.7 %, 75.9 %, 75.5 % (the former
 * band), 73.4 %. 0.01 is kept: 1-2 sentences of 1,000 from the best, and a polarity that rounds to
 * ±0.00 in the answer is not labelled positive or negative.
 */
export const NEUTRAL_BAND = 0.01;

const labelOf = (x: number): 'positive' | 'negative' | 'neutral' => (x > NEUTRAL_BAND ? 'positive' : x < -NEUTRAL_BAND ? 'negative' : 'neutral');

/** What could not be done for a non-English text. */
function notEnglish(lang: LanguageGuess, what: string): string[] {
  return lang.english ? [] : [`${what} use English models and lexicons; the text is ${lang.name} (${lang.code}), so they were not computed`];
}

/** The coded failure of a run over a language the service does not serve (refused before payment by its precheck; refunded if it gets here). */
function unserved(language: LanguageGuess, what: string): ServiceError {
  return new ServiceError('language_not_served', `${what} serves English text only; this text is ${language.name} (${language.code})`);
}

/** native-sentiment's result for `text` (English; other languages are refused, never answered empty). */
export async function analyseSentiment(text: string) {
  const language = await detectLanguage(text);
  if (!language.english) throw unserved(language, 'native-sentiment');
  await loadTextEngines();
  const { sentences, overall } = read(text);
  const limitations: string[] = [];
  const label = labelOf(overall);
  const agree = sentences.length ? sentences.filter((s) => labelOf(s.sentiment) === label).length / sentences.length : 0;
  const confidence = round3(0.5 * Math.min(1, Math.abs(overall) * 2) + 0.5 * agree);
  const allAffective = sentences.flatMap((s) => s.affective);
  return {
    language,
    label,
    polarity: round3(overall),
    confidence,
    emotions: emotionsOf(allAffective),
    sentences: sentences.map((s) => ({ text: s.text, label: labelOf(s.sentiment), polarity: round3(s.sentiment), emotions: emotionsOf(s.affective).map((e) => e.emotion) })),
    limitations,
    method: {
      sentiment: `mean of a classifier's vote and a lexicon score, per sentence and overall, in [-1, 1]. Classifier: multinomial naive Bayes over word unigrams and bigrams with negation marking, trained on the Large Movie Review Dataset (Maas et al. 2011, 43,114 reviews); vote = 2·P(positive) − 1, 0 when P is between 1/3 and 2/3. Lexicon score: mean of wink-nlp's lexicon sentiment (wink-eng-lite-web-model, AFINN-style with negation) and VADER's compound score (Hutto & Gilbert 2014: negation, boosters, "but" clauses, caps and "!" emphasis; words outside its lexicon read as their lemma, un- + a lexicon word as its negation); positive > ${NEUTRAL_BAND}, negative < -${NEUTRAL_BAND}, else neutral`,
      confidence: '0.5 × min(1, 2·|polarity|) + 0.5 × share of sentences agreeing with the overall label',
      emotions: EMOTION_METHOD,
    },
  };
}

/** Frequencies of the candidate keywords (lemmas and 2-3 word phrases of nouns/adjectives ending in a noun). */
function keywordCounts(sentences: readonly SentenceView[]): { words: Map<string, number>; phrases: Map<string, number>; nouns: Map<string, number> } {
  const words = new Map<string, number>();
  const phrases = new Map<string, number>();
  const nouns = new Map<string, number>();
  const inc = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  for (const s of sentences) {
    for (const t of s.tagged) {
      inc(words, t.lemma);
      if (t.pos !== 'ADJ') inc(nouns, t.lemma);
    }
    // Phrases: 2-3 adjacent tokens of the sentence, all nouns/adjectives, ending in a noun.
    for (let i = 0; i + 1 < s.tagged.length; i++) {
      for (const n of [2, 3]) {
        const run = s.tagged.slice(i, i + n);
        const adjacent = run.every((r, k) => k === 0 || r.at === run[k - 1].at + 1);
        if (run.length === n && adjacent && run[n - 1].pos !== 'ADJ') inc(phrases, run.map((r) => r.lemma).join(' '));
      }
    }
  }
  return { words, phrases, nouns };
}

/** native-keywords' result for `text` (English; other languages are refused, never answered empty). */
export async function analyseKeywords(text: string) {
  const language = await detectLanguage(text);
  if (!language.english) throw unserved(language, 'native-keywords');
  await loadTextEngines();
  const { sentences, entities } = read(text);
  const { words, phrases, nouns } = keywordCounts(sentences);
  const max = Math.max(1, ...words.values());
  const keywords = [...words.entries()]
    .map(([keyword, count]) => ({ keyword, count, score: round3(count / max) }))
    .sort((a, b) => b.count - a.count || a.keyword.localeCompare(b.keyword))
    .slice(0, 15);
  const keyphrases = [...phrases.entries()]
    .map(([phrase, count]) => ({ phrase, count, score: round3(count / max) }))
    .sort((a, b) => b.count - a.count || a.phrase.localeCompare(b.phrase))
    .slice(0, 10);
  const topics = [...nouns.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 5).map(([t]) => t);
  const named = language.english ? await namedEntities(text) : { people: [], places: [], organizations: [] };
  const pattern: Record<string, string[]> = {};
  for (const e of entities) pattern[e.type.toLowerCase()] = [...new Set([...(pattern[e.type.toLowerCase()] ?? []), e.value])];
  return {
    language,
    keywords: language.english ? keywords : [],
    keyphrases: language.english ? keyphrases : [],
    topics: language.english ? topics : [],
    entities: { ...named, ...pattern },
    limitations: notEnglish(language, 'keywords, topics and people/places/organizations'),
    method: {
      keywords: 'lemmas of nouns, proper nouns and adjectives (wink-nlp POS tags, stop words removed); score = count / count of the most frequent',
      keyphrases: 'runs of 2-3 such words ending in a noun, same score',
      topics: 'the five most frequent noun lemmas',
      entities: 'people, places, organizations: compromise; dates, times, money, percentages, emails, URLs, hashtags, mentions, numbers: wink-nlp pattern entities',
    },
  };
}

/** Most key points besides the TL;DR. */
const MAX_KEY_POINTS = 5;
/** A sentence with fewer content words than this and no key term is an aside ("Lunch was pizza."). */
const SHORT_SENTENCE = 6;
/** A key point has at least this share of the TL;DR's support (centrality and coverage); below, a sentence is an aside to the text's point. */
const KEY_POINT_SHARE = 0.5;
/** Power iterations of the sentence centrality (converged well before on texts of the service's 20,000 characters). */
const CENTRALITY_ITERATIONS = 100;
/** A candidate key point this similar (cosine) to a sentence already chosen repeats it. */
const REDUNDANT = 0.6;

/** Sparse vector of lemma weights. */
type TermVector = Map<string, number>;
const dot = (a: TermVector, b: TermVector): number => {
  let s = 0;
  for (const [k, v] of a) s += v * (b.get(k) ?? 0);
  return s;
};
const norm = (a: TermVector): number => Math.sqrt(dot(a, a));
const cosine = (a: TermVector, b: TermVector): number => {
  const d = norm(a) * norm(b);
  return d === 0 ? 0 : dot(a, b) / d;
};

/** The weights of `scoreSentences` (the first four sum to 1). */
export interface SentenceWeights {
  readonly centrality: number;
  readonly coverage: number;
  readonly length: number;
  readonly position: number;
  /** Factor on the weight of a narrator's scene-setting words in every sentence (see `scoreSentences`). */
  readonly sceneSetting: number;
}

/**
 * The weights native-summarize uses. Chosen on the development part of the quality bench's
 * reference summaries (10 BBC News Summary articles, bench/quality-data/summarize/; ROUGE-1/2/L
 * F1 of the best three sentences, mean 66.9 % against 63.6 % with the former 0.76 / 0.19 / 0.04 /
 * 0.01) over position 0.01-0.6, length 0-0.1 and centrality:coverage 1, 0.8, 0.5, 0.2; the held-out
 * figures are in docs/benchmarks/quality.md. The scene-setting factor is the aside factor, not tuned.
 */
export const SENTENCE_WEIGHTS: SentenceWeights = { centrality: 0.56, coverage: 0.14, length: 0.1, position: 0.2, sceneSetting: 0.2 };

/** A first-person word ("I got to the office…", "we met…"). */
const FIRST_PERSON = /(?:^|[^\p{L}'’])(?:I|I'm|I’m|I've|I’ve|I'd|I’d|[Mm]e|[Mm]y|[Ww]e|[Uu]s|[Oo]ur)(?=$|[^\p{L}'’])/u;
/** Whether the sentence speaks in the first person outside quotation marks (a narrator, not a quoted speaker). */
const isNarrator = (text: string): boolean => FIRST_PERSON.test(text.replace(/["“][^"”]*(?:["”]|$)/gu, ' '));

/**
 * Scores the sentences of a text for an extractive summary, in text order:
 *  - each sentence is a TF-ISF vector of its content lemmas (count × ln(1 + n / sentences containing it));
 *  - centrality: the sentence's share of the principal eigenvector of the sentence-similarity
 *    graph (cosine between sentences, none with itself; power iteration on S + I), scaled to 1 at
 *    the most central: a sentence the others echo stands for the text wherever it is, while an
 *    anecdote that shares a word or two with another aside ("the meeting room") stays low;
 *  - coverage: its share of the key terms' weight (lemmas of at least two sentences, weighted by
 *    their total TF-ISF), scaled to 1 at the best;
 *  - priors: length (its content words, scaled to 1 at the longest sentence) and position (1 at
 *    the first sentence, 1/n at the last): news puts its point first, and in a story told with
 *    pronouns and synonyms no sentence echoes another and the one that carries the news is the
 *    longest, not the opening aside;
 *  - scene-setting: a sentence of fewer than SHORT_SENTENCE content words in the first person
 *    outside quotation marks ("I got to the office at eight this morning.") sets the scene; its
 *    words weigh `sceneSetting` × as much in every sentence and count as no key term, so the asides
 *    that repeat them ("The office was quiet that morning.") do not gather around the scene;
 *  - support = centrality and coverage weighted (`SENTENCE_WEIGHTS`), score = support + the
 *    priors weighted; a sentence without any key term is an aside (both × 0.2), and a short one
 *    more so (× 0.1);
 *  - isolated: it shares no content lemma with any other sentence (no evidence either way).
 */
export function scoreSentences(sentences: readonly SentenceView[], weights: SentenceWeights = SENTENCE_WEIGHTS): { i: number; text: string; score: number; support: number; key: boolean; isolated: boolean; words: number; vector: TermVector }[] {
  const n = sentences.length;
  const sf = new Map<string, number>();
  for (const s of sentences) for (const l of new Set(s.content)) sf.set(l, (sf.get(l) ?? 0) + 1);
  // The narrator's short scene-setting sentences and the words they set the scene with ("office",
  // "morning"): asides that repeat those words echo the scene, not the news.
  const scene = sentences.map((s) => s.content.length < SHORT_SENTENCE && isNarrator(s.text));
  const sceneTerms = new Set(sentences.flatMap((s, i) => (scene[i] ? s.content : [])));
  const vectors = sentences.map((s) => {
    const v: TermVector = new Map();
    for (const l of s.content) v.set(l, (v.get(l) ?? 0) + Math.log(1 + n / sf.get(l)!) * (sceneTerms.has(l) ? weights.sceneSetting : 1));
    return v;
  });
  const norms = vectors.map(norm);
  const sim = vectors.map((a, i) => vectors.map((b, j) => (i === j || norms[i] === 0 || norms[j] === 0 ? 0 : dot(a, b) / (norms[i] * norms[j]))));
  let centrality = vectors.map(() => 1);
  for (let it = 0; it < CENTRALITY_ITERATIONS; it++) {
    const next = centrality.map((c, i) => c + sim[i].reduce((a, s, j) => a + s * centrality[j], 0));
    const max = Math.max(...next);
    centrality = next.map((x) => x / max);
  }
  // Without any similarity between sentences, the iteration leaves them all at 1: nothing is central.
  if (sim.every((row) => row.every((x) => x === 0))) centrality = centrality.map(() => 0);
  const keyWeight = new Map<string, number>();
  vectors.forEach((v) => {
    for (const [k, w] of v) if (sf.get(k)! >= 2) keyWeight.set(k, (keyWeight.get(k) ?? 0) + w);
  });
  const coverage = sentences.map((s) => [...new Set(s.content)].reduce((a, l) => a + (keyWeight.get(l) ?? 0), 0));
  const maxCoverage = Math.max(0, ...coverage);
  const maxWords = Math.max(1, ...sentences.map((s) => s.content.length));
  return sentences.map((s, i) => {
    // A key term the scene-setting gave is no evidence of the point ("Detectives spent the morning…").
    const key = s.content.some((l) => keyWeight.has(l) && !sceneTerms.has(l));
    const length = s.content.length / maxWords;
    const position = 1 - i / n;
    let support = weights.centrality * centrality[i] + weights.coverage * (maxCoverage > 0 ? coverage[i] / maxCoverage : 0);
    let score = support + weights.length * length + weights.position * position;
    const aside = key ? 1 : s.content.length < SHORT_SENTENCE ? 0.1 : 0.2;
    score *= aside;
    support *= aside;
    return { i, text: s.text, score, support, key, isolated: sim[i].every((x) => x === 0), words: s.content.length, vector: vectors[i] };
  });
}

/** The sentences of `text` as native-summarize scores them (`scoreSentences`), in text order. */
export async function rankSentences(text: string, weights: SentenceWeights = SENTENCE_WEIGHTS): Promise<ReturnType<typeof scoreSentences>> {
  await loadTextEngines();
  return scoreSentences(read(text).sentences, weights);
}

/** native-summarize's result for `text` (extractive; see `scoreSentences`). */
export async function summarizeText(text: string) {
  const language = await detectLanguage(text);
  const sentences = await rankSentences(text);
  const ranked = [...sentences].sort((a, b) => b.score - a.score || a.i - b.i);
  const best = ranked[0];
  const tldr = best?.text ?? '';
  // Key points: the next best sentences that carry a key term, have at least KEY_POINT_SHARE of the best's support (the priors rank, they are no evidence) and repeat no chosen one, in text order.
  const want = Math.min(MAX_KEY_POINTS, Math.max(3, Math.round(sentences.length / 4)));
  const chosen = best ? [best] : [];
  for (const s of ranked.slice(1)) {
    if (chosen.length > want) break;
    if (!s.key || s.support < KEY_POINT_SHARE * best.support) continue;
    if (chosen.some((c) => cosine(c.vector, s.vector) >= REDUNDANT)) continue;
    chosen.push(s);
  }
  // A text that names its subject with pronouns and synonyms links few sentences: one that shares
  // nothing with any other is no evidence of an aside, so the longest of those (never a short
  // one, "Lunch was pizza.") fill up to the 3 key points the service promises.
  for (const s of [...sentences].sort((a, b) => b.words - a.words || a.i - b.i)) {
    if (chosen.length > 3) break;
    if (s.isolated && s.words >= SHORT_SENTENCE && !chosen.includes(s)) chosen.push(s);
  }
  const points = chosen.slice(1).sort((a, b) => a.i - b.i).map((s) => s.text);
  const asides = sentences.length - chosen.length;
  const limitations: string[] = [];
  if (points.length < 3) limitations.push(`the text has ${sentences.length} sentence(s)${asides ? `, ${asides} of them asides to its point` : ''}: ${points.length} key point(s) besides the TL;DR`);
  if (!language.english) limitations.push(`sentence splitting and lemmas use an English model; the text is ${language.name} (${language.code}): the summary may be rougher`);
  return {
    language,
    tldr,
    keyPoints: points,
    sentences: sentences.length,
    characters: text.length,
    limitations,
    method: 'extractive: sentences as TF-ISF vectors of their content lemmas; score = 0.56 × eigenvector centrality in the sentence-similarity graph + 0.14 × share of the key terms (lemmas of 2+ sentences) it carries + 0.1 × length prior (content words / the longest sentence\'s) + 0.2 × position prior (1 first, 1/n last); asides without a key term scored down, and a narrator\'s short first-person scene-setting ("I got to the office at eight this morning.") scored down with its words; TL;DR = best sentence, key points = up to 5 of the next best that carry a key term, have at least half the TL;DR\'s centrality-and-coverage support and repeat no chosen one (cosine < 0.6), topped up to 3 with the longest sentences that share no word with any other (6+ content words), in text order; weights chosen on BBC News Summary articles against human reference summaries (ROUGE)',
  };
}
