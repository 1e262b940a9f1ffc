/**
 * The text-analysis engines, loaded once at first use: wink-nlp with its English model
 * (wink-eng-lite-web-model: sentences, tokens, lemmas, part of speech, sentiment, pattern
 * entities), compromise (people, places, organizations) and eld (language identification made
 * for short text, 60 languages, ISO 639-1; loaded at first use: ~1.4 s and ~100 MB).
 */
import { createRequire } from 'node:module';
import type { Document, WinkMethods } from 'wink-nlp';
import type { HealthReport } from '../types.js';

// Each engine is imported at its first use, not when the node starts: together they are a
// second of CPU and ~60 MB that a node selling none of the text services never needs.
let wink: Promise<WinkMethods> | undefined;
let winkLoaded: WinkMethods | undefined;
/** Why the last load failed (cleared by a load that succeeds): the text services are down meanwhile. */
let winkLoadError: unknown;
let compromise: Promise<typeof import('compromise').default> | undefined;

/** Loads wink-nlp with the English model (once); `winkNlp()` and `readDoc()` work after it. */
export function loadWinkNlp(): Promise<WinkMethods> {
  wink ??= Promise.all([import('wink-nlp'), import('wink-eng-lite-web-model')]).then(([w, m]) => {
    winkLoadError = undefined;
    return (winkLoaded = w.default(m.default));
  });
  // A failed load is tried again at the next use; the services say they are down until then.
  wink.catch((e: unknown) => {
    wink = undefined;
    winkLoadError = e;
  });
  return wink;
}

/** The wink-nlp instance over the English model; `loadWinkNlp()` must have resolved. */
export function winkNlp(): WinkMethods {
  if (!winkLoaded) throw new Error('wink-nlp is not loaded yet (await loadWinkNlp() first)');
  return winkLoaded;
}

/** Reads `text` with wink-nlp (`loadWinkNlp()` must have resolved). */
export function readDoc(text: string): Document {
  return winkNlp().readDoc(text);
}

/** People, places and organizations found by compromise. */
export async function namedEntities(text: string): Promise<{ people: string[]; places: string[]; organizations: string[] }> {
  compromise ??= import('compromise').then((m) => m.default);
  compromise.catch(() => (compromise = undefined));
  const d = (await compromise)(text);
  const uniq = (a: string[]) => [...new Set(a.map((s) => s.replace(/[\s,.;:!?'’"]+$/u, '').trim()).filter(Boolean))];
  return { people: uniq(d.people().out('array') as string[]), places: uniq(d.places().out('array') as string[]), organizations: uniq(d.organizations().out('array') as string[]) };
}

/** The detected language of a text. */
export interface LanguageGuess {
  /** ISO 639-1 code (`en`), or `und` when the text gives too little to tell. */
  readonly code: string;
  /** English name (`English`), or `undetermined`. */
  readonly name: string;
  /** Whether this node's English models apply (English, or undetermined). */
  readonly english: boolean;
}

const names = new Intl.DisplayNames(['en'], { type: 'language' });

interface LanguageDetector {
  detect(text: string): { language: string; getScores(): Record<string, number> };
}

/**
 * Short text is thin evidence for an n-gram detector: "Excellent performance." scores French
 * 0.770 and English 0.769 with eld. Up to SHORT_TEXT_WORDS words, English is taken when its score
 * is within ENGLISH_MARGIN of the best candidate's (at least 95 % of it). Measured with
 * `npm run bench -- quality`: of the 18 English review sentences eld refused, 11 are kept (all
 * of 2-6 words); on the UDHR sentences no other-language text more is taken for English (the
 * sentences of up to 8 words included), and short non-English reviews stay refused ("Das Essen
 * war lecker." English at 77 % of German, "Excelente servicio." 67 % of Spanish).
 */
const SHORT_TEXT_WORDS = 8;
const ENGLISH_MARGIN = 0.05;

/** The words of a text (runs with a letter), for the short-text rule. */
const wordCount = (text: string): number => text.split(/\s+/u).filter((w) => /\p{L}/u.test(w)).length;
let detector: Promise<LanguageDetector> | undefined;

/**
 * The language detector, eld's medium n-gram database (Apache-2.0). Chosen over franc-min, which
 * read "I absolutely love this product, it made my day wonderful." as French. Measured by
 * `npm run bench -- quality` (docs/benchmarks.md) on 1,056 UDHR sentences of 20-100 characters
 * in the 38 languages the text services name (bench/quality-data/): eld 94.2 % right (98.6 % on the 36
 * of them it has a model of; Irish and Indonesian it has not), franc-min 69.0 %; the
 * serve-English-refuse-the-rest decision right on 99.7 %.
 */
export function languageDetector(): Promise<LanguageDetector> {
  detector ??= import('eld/medium').then((m) => m.eld as LanguageDetector);
  return detector;
}

/** The language of `text` (eld; `und` when it finds none; English when a short text is a near tie with English, see SHORT_TEXT_WORDS). */
export async function detectLanguage(text: string): Promise<LanguageGuess> {
  const result = (await languageDetector()).detect(text);
  let code = result.language || 'und';
  if (code === 'und') return { code, name: 'undetermined', english: true };
  if (code !== 'en' && wordCount(text) <= SHORT_TEXT_WORDS) {
    const scores = result.getScores();
    const best = Math.max(0, ...Object.values(scores));
    if (best > 0 && (scores.en ?? 0) >= (1 - ENGLISH_MARGIN) * best) code = 'en';
  }
  let name = code;
  try {
    name = names.of(code) ?? code;
  } catch {
    // A code ICU does not know stands for itself.
  }
  return { code, name, english: code === 'en' };
}

/** The languages a text service serves (ISO 639-1), and the refusal of a text in another one. */
export async function refuseUnservedLanguage(text: string, served: readonly string[], what: string): Promise<string | undefined> {
  const lang = await detectLanguage(text);
  if (lang.code === 'und' || served.includes(lang.code)) return undefined;
  return `${what} serves ${served.map((c) => names.of(c) ?? c).join(', ')} text only; this text is ${lang.name} (${lang.code})`;
}

/**
 * Health of the text services: down once a load of the English model failed (until one succeeds),
 * else active when wink-nlp and its model are installed. The probe does not load the model itself
 * (~0.5 s of CPU and ~60 MB at every node start, for services a node may never sell); the first
 * call does, and a call whose load fails is refunded.
 */
export async function textHealth(): Promise<'active' | HealthReport> {
  const down = (e: unknown): HealthReport => ({ status: 'down', reason: { code: 'model_not_loaded', message: `the English language model did not load: ${e instanceof Error ? e.message : String(e)}` } });
  if (winkLoadError !== undefined) return down(winkLoadError);
  if (winkLoaded) return 'active';
  try {
    const require = createRequire(import.meta.url);
    require.resolve('wink-nlp');
    require.resolve('wink-eng-lite-web-model');
    return 'active';
  } catch (e) {
    return down(e);
  }
}

/** Rounds to 3 decimals. */
export const round3 = (x: number): number => Math.round(x * 1000) / 1000;
