/**
 * Sentiment, keywords and extractive summaries over wink-nlp's reading of a text (services/text/nlp.ts).
 *
 * - Sentiment: wink-nlp's lexicon-based sentiment (AFINN-style scores with negation and emoji
 *   handling) per sentence and overall, in [-1, 1]; label positive above 0.05, negative below
 *   −0.05, else neutral; confidence = 0.5 × |polarity| scaled to 1 at 0.5 + 0.5 × the share of
 *   sentences that agree with the overall label.
 * - Keywords: lemmas of nouns, proper nouns and adjectives (stop words out) and two- or three-word
 *   noun phrases, scored by frequency relative to the most frequent; topics are the top nouns.
 * - Summaries: sentences scored by the mean frequency of their content lemmas with a small lead
 *   bonus; TL;DR = the best sentence, key points = the next 3-5 in text order.
 */
import type { ItemSentence, ItemToken } from 'wink-nlp';
import { emotionsOf, EMOTION_METHOD } from './emotions.js';
import { ServiceError } from '../types.js';
import { detectLanguage, namedEntities, readDoc, round3, winkNlp, type LanguageGuess } from './nlp.js';

/** A sentence as the analyses see it. */
interface SentenceView {
  readonly text: string;
  readonly sentiment: number;
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
    s.tokens().each((t: ItemToken, at: number) => {
      const type = t.out(its.type);
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
    sentences.push({ text: s.out().trim(), sentiment: Number(s.out(its.sentiment)), content, affective, tagged });
  });
  const entities = (doc.entities().out(its.detail) as unknown as { value: string; type: string }[]).map((e) => ({ value: e.value, type: e.type }));
  return { sentences, overall: Number(doc.out(its.sentiment)), entities };
}

const labelOf = (x: number): 'positive' | 'negative' | 'neutral' => (x > 0.05 ? 'positive' : x < -0.05 ? 'negative' : 'neutral');

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
      sentiment: 'wink-nlp lexicon sentiment (wink-eng-lite-web-model) per sentence and overall, in [-1, 1]; positive > 0.05, negative < -0.05',
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
  const named = language.english ? namedEntities(text) : { people: [], places: [], organizations: [] };
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

/** native-summarize's result for `text` (extractive; see module comment). */
export async function summarizeText(text: string) {
  const language = await detectLanguage(text);
  const { sentences } = read(text);
  const freq = new Map<string, number>();
  for (const s of sentences) for (const l of s.content) freq.set(l, (freq.get(l) ?? 0) + 1);
  const scored = sentences.map((s, i) => {
    const base = s.content.length ? s.content.reduce((n, l) => n + (freq.get(l) ?? 0), 0) / Math.sqrt(s.content.length) : 0;
    // The lead of a text usually states its subject: a small bonus to the first sentences.
    return { i, text: s.text, score: base * (i === 0 ? 1.2 : i === 1 ? 1.1 : 1) };
  });
  const ranked = [...scored].sort((a, b) => b.score - a.score || a.i - b.i);
  const tldr = ranked[0]?.text ?? '';
  const want = Math.min(5, Math.max(3, Math.round(sentences.length / 4)));
  const points = ranked.slice(1, 1 + want).sort((a, b) => a.i - b.i).map((s) => s.text);
  const limitations: string[] = [];
  if (points.length < 3) limitations.push(`the text has ${sentences.length} sentence(s): ${points.length} key point(s) besides the TL;DR`);
  if (!language.english) limitations.push(`sentence splitting and lemmas use an English model; the text is ${language.name} (${language.code}): the summary may be rougher`);
  return {
    language,
    tldr,
    keyPoints: points,
    sentences: sentences.length,
    characters: text.length,
    limitations,
    method: 'extractive: sentences scored by the frequency of their content lemmas (sum / √length, lead bonus); TL;DR = best sentence, key points = the next best in text order',
  };
}
