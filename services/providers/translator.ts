/**
 * Translation providers: an OpenAI-compatible chat model told to translate, or a LibreTranslate
 * server (`POST /translate` `{q, source: "auto", target, format: "text"}` →
 * `{translatedText, detectedLanguage}`; `GET /languages` lists what it can translate into).
 */
import { z } from 'zod';
import type { OutboundClient } from '../outbound/types.js';
import { ServiceError } from '../types.js';
import { joinUrl, ProviderCallErrorCode, providerJson, providerPostJson } from './call.js';
import type { ChatProvider } from './openAi.js';
import type { TranslateProviderOptions } from './options.js';

/** The target languages the service accepts (code → English name); codes are ISO 639-1, with region where the script or usage differs. */
export const TARGET_LANGUAGES: Readonly<Record<string, string>> = Object.freeze({
  ar: 'Arabic', bg: 'Bulgarian', ca: 'Catalan', cs: 'Czech', da: 'Danish', de: 'German', el: 'Greek', en: 'English', es: 'Spanish', et: 'Estonian',
  fa: 'Persian', fi: 'Finnish', fr: 'French', ga: 'Irish', he: 'Hebrew', hi: 'Hindi', hu: 'Hungarian', id: 'Indonesian', it: 'Italian', ja: 'Japanese',
  ko: 'Korean', lt: 'Lithuanian', lv: 'Latvian', ms: 'Malay', nb: 'Norwegian Bokmål', nl: 'Dutch', pl: 'Polish', pt: 'Portuguese', 'pt-BR': 'Brazilian Portuguese',
  ro: 'Romanian', ru: 'Russian', sk: 'Slovak', sl: 'Slovenian', sq: 'Albanian', sv: 'Swedish', th: 'Thai', tr: 'Turkish', uk: 'Ukrainian', ur: 'Urdu',
  vi: 'Vietnamese', zh: 'Chinese (Simplified)', 'zh-TW': 'Chinese (Traditional)',
});

/** LibreTranslate's codes for ours, in the order tried (its codes changed between releases). */
const LIBRE_ALIASES: Readonly<Record<string, readonly string[]>> = Object.freeze({ zh: ['zh-Hans', 'zh'], 'zh-TW': ['zh-Hant', 'zt'], 'pt-BR': ['pb', 'pt-BR', 'pt'], nb: ['nb', 'no'] });

/** A translation. */
export interface Translation {
  readonly text: string;
  /** Source language as the provider detected it, when it says. */
  readonly detectedSource: string | null;
  readonly confidence: number | null;
  readonly provider: 'openai' | 'libretranslate';
  readonly model: string | null;
}

/** The translation provider. */
export interface Translator {
  translate(text: string, target: string, opts: { readonly signal?: AbortSignal; readonly timeoutMs?: number }): Promise<Translation>;
  probe(signal?: AbortSignal): Promise<void>;
}

/** Translation by an OpenAI-compatible chat model. */
export function createChatTranslator(chat: ChatProvider): Translator {
  return {
    async translate(text, target, o) {
      const language = TARGET_LANGUAGES[target];
      const out = await chat.complete(
        [
          { role: 'system', content: `You are a translation engine. Translate the user's message into ${language} (${target}). Reply with the translation only: no quotes, no notes, no explanations. Keep formatting, numbers and names.` },
          { role: 'user', content: text },
        ],
        { temperature: 0, maxTokens: Math.min(4096, 64 + text.length * 2), signal: o.signal, timeoutMs: o.timeoutMs },
      );
      return { text: out.text.trim(), detectedSource: null, confidence: null, provider: 'openai', model: out.model };
    },
    probe: (signal) => chat.probe(signal),
  };
}

const libreLanguagesSchema = z.array(z.object({ code: z.string(), name: z.string().optional(), targets: z.array(z.string()).optional() }));
const libreTranslateSchema = z.object({ translatedText: z.string(), detectedLanguage: z.object({ language: z.string(), confidence: z.number() }).optional() });

/** Translation by a LibreTranslate server at `url`. */
export function createLibreTranslate(opts: TranslateProviderOptions & { url: string }, outbound: OutboundClient): Translator {
  const provider = 'LibreTranslate';
  const languages = (signal?: AbortSignal) => providerJson(outbound, provider, { url: joinUrl(opts.url, 'languages'), signal, cacheTtlMs: 3_600_000, maxBytes: 512 * 1024 }, libreLanguagesSchema);
  return {
    async translate(text, target, o) {
      const known = new Set((await languages(o.signal)).map((l) => l.code));
      const code = (LIBRE_ALIASES[target] ?? [target]).find((c) => known.has(c));
      if (!code) throw new ServiceError(ProviderCallErrorCode.NOT_FOUND, `this node's LibreTranslate server has no ${TARGET_LANGUAGES[target]} (${target}) model`);
      const body: Record<string, unknown> = { q: text, source: 'auto', target: code, format: 'text' };
      if (opts.apiKey) body.api_key = opts.apiKey;
      const doc = await providerPostJson(outbound, provider, joinUrl(opts.url, 'translate'), body, { signal: o.signal, timeoutMs: o.timeoutMs, maxBytes: 1 << 20 }, libreTranslateSchema);
      return { text: doc.translatedText, detectedSource: doc.detectedLanguage?.language ?? null, confidence: doc.detectedLanguage?.confidence ?? null, provider: 'libretranslate', model: null };
    },
    async probe(signal) {
      await languages(signal);
    },
  };
}
