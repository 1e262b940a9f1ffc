/**
 * native-summarize: extractive TL;DR plus 3-5 key points (`summarizeText`,
 * services/text/analyse.ts) of a text of 80+ characters, or of the readable text of a public
 * http(s) URL, fetched through the SSRF-safe outbound client (`fetchReadableText`, the same
 * extraction as native-web-fetch). A URL whose host is not public is refused with a coded 400
 * before any payment; a page that yields fewer than 80 characters of text fails after payment
 * (`page_text_too_short`, refunded).
 */
import { defineService, EXTERNAL_TIMEOUT_MS } from './define.js';
import { isHttpUrl } from './inputs.js';
import { precheckPublicUrl } from './outbound/index.js';
import { warmTextEngines, summarizeText } from './text/analyse.js';
import { textHealth } from './text/nlp.js';
import { ServiceError } from './types.js';
import { asServiceError, fetchReadableText, outboundOf, requireUpstreamOk } from './web/readable.js';

/** Shortest text summarised, characters (the spec's Limits table). */
export const MIN_SUMMARY_TEXT = 80;

/** A request that is one absolute http(s) URL and nothing else. */
function urlOf(request: string): string | undefined {
  const s = request.trim();
  return /^\S+$/.test(s) && isHttpUrl(s) ? s : undefined;
}

/** native-summarize. */
export const summarize = defineService({
  id: 'native-summarize',
  name: 'Summarize',
  category: 'compute',
  priceBase: 600_000n,
  description: 'TL;DR plus 3-5 key points',
  tags: ['summarize', 'summary', 'tldr', 'key-points', 'text', 'url'],
  requestFormat: 'text of at least 80 characters, or a public http(s) URL',
  requestRequired: false,
  needsInput: true,
  timeoutMs: EXTERNAL_TIMEOUT_MS,
  inputSchema: { type: 'string', minLength: 1, maxLength: 20_000, 'x-text-or-url': MIN_SUMMARY_TEXT, description: 'Text of at least 80 characters, or a public http(s) URL whose readable text is summarised.' },
  // A URL is checked like every caller URL before any quote; text needs nothing more than the schema.
  precheck: async (ctx, input) => {
    await warmTextEngines();
    const url = urlOf(input as string);
    if (url !== undefined) await precheckPublicUrl(ctx, url);
  },
  run: async (ctx, input) => {
    const url = urlOf(input as string);
    if (url === undefined) return summarizeText(input as string);
    const page = requireUpstreamOk(await fetchReadableText(outboundOf(ctx), url, { signal: ctx.signal }).catch(asServiceError));
    const text = page.text?.trim() ?? '';
    if (text.length < MIN_SUMMARY_TEXT) throw new ServiceError('page_text_too_short', `${page.url} has ${text.length} characters of readable text (${page.contentType || 'no content type'}); at least ${MIN_SUMMARY_TEXT} are needed`);
    return { source: { url: page.url, status: page.status, title: page.title, extraction: page.extraction, truncated: page.truncated }, ...(await summarizeText(text)) };
  },
  health: textHealth,
});
