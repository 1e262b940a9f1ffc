/**
 * Emotion labels by lexicon: the eight basic emotions of Plutchik's wheel, each with a word list
 * written for this project (MIT, like the rest of the repository; not derived from NRC EmoLex,
 * whose licence forbids commercial use). A sentence's emotions are the lists its lemmas hit;
 * intensity = hits / content words. Words up to three after a negation in the same clause
 * ("not good", "never really happy", "don't love") are left out (services/text/analyse.ts): the
 * method is stated in each result.
 */

/** Emotion → lemmas (lower case, as wink-nlp lemmatises them). */
export const EMOTION_LEXICON: Readonly<Record<string, readonly string[]>> = {
  joy: ['happy', 'happiness', 'joy', 'joyful', 'glad', 'delight', 'delighted', 'delightful', 'pleased', 'cheerful', 'love', 'lovely', 'enjoy', 'fun', 'wonderful', 'great', 'excellent', 'fantastic', 'amazing', 'celebrate', 'smile', 'laugh', 'proud', 'pride', 'thrilled', 'excited', 'awesome', 'satisfied', 'satisfy', 'win', 'success', 'successful', 'perfect', 'beautiful', 'good'],
  trust: ['trust', 'trustworthy', 'reliable', 'reliably', 'rely', 'honest', 'honesty', 'faith', 'faithful', 'loyal', 'loyalty', 'confident', 'confidence', 'depend', 'dependable', 'safe', 'secure', 'sure', 'certain', 'credible', 'integrity', 'promise', 'support', 'guarantee', 'exactly', 'accurate', 'consistent', 'transparent', 'fair'],
  fear: ['fear', 'afraid', 'scared', 'scary', 'frighten', 'frightening', 'terrified', 'terror', 'panic', 'anxious', 'anxiety', 'worry', 'worried', 'nervous', 'dread', 'threat', 'threaten', 'danger', 'dangerous', 'risk', 'risky', 'alarm', 'alarming', 'horror', 'unsafe', 'vulnerable', 'crash', 'collapse', 'uncertain'],
  surprise: ['surprise', 'surprised', 'surprising', 'unexpected', 'unexpectedly', 'sudden', 'suddenly', 'astonish', 'astonished', 'astonishing', 'amaze', 'amazed', 'shock', 'shocked', 'shocking', 'stun', 'stunned', 'stunning', 'wow', 'incredible', 'unbelievable', 'startle', 'remarkable'],
  sadness: ['sad', 'sadness', 'unhappy', 'sorrow', 'grief', 'grieve', 'cry', 'tear', 'depressed', 'depression', 'miserable', 'lonely', 'loss', 'lose', 'regret', 'disappoint', 'disappointed', 'disappointing', 'disappointment', 'hopeless', 'gloomy', 'heartbroken', 'mourn', 'pain', 'painful', 'hurt', 'sorry', 'fail', 'failure'],
  disgust: ['disgust', 'disgusted', 'disgusting', 'gross', 'nasty', 'revolting', 'repulsive', 'sick', 'sickening', 'vile', 'filthy', 'dirty', 'awful', 'horrible', 'terrible', 'rotten', 'foul', 'loathe', 'hate', 'despise', 'creepy', 'scam', 'fraud', 'spam'],
  anger: ['anger', 'angry', 'mad', 'furious', 'fury', 'rage', 'outrage', 'outraged', 'annoy', 'annoyed', 'annoying', 'irritate', 'irritated', 'frustrate', 'frustrated', 'frustrating', 'hostile', 'hate', 'resent', 'unfair', 'insult', 'attack', 'fight', 'blame', 'yell', 'scream', 'broken', 'useless', 'worst'],
  anticipation: ['expect', 'expectation', 'anticipate', 'await', 'hope', 'hopeful', 'eager', 'soon', 'plan', 'prepare', 'upcoming', 'future', 'look', 'wait', 'tomorrow', 'next', 'forward', 'ready', 'launch', 'will', 'intend', 'predict', 'forecast'],
};

const byLemma = new Map<string, string[]>();
for (const [emotion, words] of Object.entries(EMOTION_LEXICON)) {
  for (const w of words) byLemma.set(w, [...(byLemma.get(w) ?? []), emotion]);
}

/** One emotion found in a text. */
export interface EmotionScore {
  readonly emotion: string;
  /** Lexicon hits. */
  readonly hits: number;
  /** hits / content words, 3 decimals. */
  readonly intensity: number;
  /** The words that hit, as written in the lexicon. */
  readonly words: readonly string[];
}

/** Emotions of a list of lemmas (content words of a sentence or text), strongest first. */
export function emotionsOf(lemmas: readonly string[]): EmotionScore[] {
  const hits = new Map<string, string[]>();
  for (const l of lemmas) for (const e of byLemma.get(l.toLowerCase()) ?? []) hits.set(e, [...(hits.get(e) ?? []), l.toLowerCase()]);
  const n = Math.max(1, lemmas.length);
  return [...hits.entries()]
    .map(([emotion, words]) => ({ emotion, hits: words.length, intensity: Math.round((words.length / n) * 1000) / 1000, words: [...new Set(words)] }))
    .sort((a, b) => b.hits - a.hits || a.emotion.localeCompare(b.emotion));
}

/** How the emotions are found, as stated in results. */
export const EMOTION_METHOD = "lexicon of Plutchik's eight emotions written for this project (services/text/emotions.ts, MIT); labels = emotions whose words appear among the lemmas; intensity = hits / content words; words up to 3 after a negation (not, n't, never, no, without…) in the same clause are left out";
