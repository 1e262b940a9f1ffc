/**
 * The text-analysis engines, loaded once at first use: wink-nlp with its English model
 * (wink-eng-lite-web-model: sentences, tokens, lemmas, part of speech, sentiment, pattern
 * entities), compromise (people, places, organizations) and franc-min (language, ISO 639-3).
 */
import { franc } from 'franc-min';
import nlpCompromise from 'compromise';
import winkNLP, { type Document, type WinkMethods } from 'wink-nlp';
import model from 'wink-eng-lite-web-model';

let wink: WinkMethods | undefined;

/** The wink-nlp instance over the English model. */
export function winkNlp(): WinkMethods {
  wink ??= winkNLP(model);
  return wink;
}

/** Reads `text` with wink-nlp. */
export function readDoc(text: string): Document {
  return winkNlp().readDoc(text);
}

/** People, places and organizations found by compromise. */
export function namedEntities(text: string): { people: string[]; places: string[]; organizations: string[] } {
  const d = nlpCompromise(text);
  const uniq = (a: string[]) => [...new Set(a.map((s) => s.replace(/[\s,.;:!?'’"]+$/u, '').trim()).filter(Boolean))];
  return { people: uniq(d.people().out('array') as string[]), places: uniq(d.places().out('array') as string[]), organizations: uniq(d.organizations().out('array') as string[]) };
}

/** The detected language of a text. */
export interface LanguageGuess {
  /** ISO 639-3 code (`eng`), or `und` when the text is too short or unclear. */
  readonly code: string;
  /** English name (`English`), or `undetermined`. */
  readonly name: string;
  /** Whether this node's English models apply. */
  readonly english: boolean;
}

const names = new Intl.DisplayNames(['en'], { type: 'language' });

/** The language of `text` (franc-min: the ~80 languages with 8M+ speakers; 10 characters at least). */
export function detectLanguage(text: string): LanguageGuess {
  const code = franc(text, { minLength: 10 });
  if (code === 'und') return { code, name: 'undetermined', english: true };
  let name = code;
  try {
    name = names.of(code) ?? code;
  } catch {
    // ICU does not know every ISO 639-3 code: the code stands for itself.
  }
  return { code, name, english: code === 'eng' || code === 'sco' };
}

/** Health of the text services: active once the English model has loaded (loads it at the first probe). */
export async function textHealth(): Promise<'active' | 'down'> {
  try {
    winkNlp();
    return 'active';
  } catch {
    return 'down';
  }
}

/** Rounds to 3 decimals. */
export const round3 = (x: number): number => Math.round(x * 1000) / 1000;
