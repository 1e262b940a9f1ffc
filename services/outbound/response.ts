/**
 * What an outbound hop's answer becomes (client.ts): headers, the decoded body stream
 * (gzip/br/deflate), the content-type check and the `OutboundResponse` with its charset-aware
 * `text()` and coded `json()`.
 */
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { truncate } from './target.js';
import { OutboundError, OutboundErrorCode, type OutboundResponse } from './types.js';

/** Whether a content type (lower case, no parameters) matches one of the accepted prefixes. */
export function accepted(contentType: string, accept: readonly string[] | undefined): boolean {
  if (!accept || accept.length === 0) return true;
  return accept.some((a) => contentType.startsWith(a.toLowerCase()));
}

function charsetOf(header: string | undefined): string {
  const m = /charset\s*=\s*"?([^";\s]+)/i.exec(header ?? '');
  return m ? m[1].toLowerCase() : 'utf-8';
}

export function makeResponse(status: number, url: string, headers: Record<string, string>, body: Uint8Array, remoteAddress: string | undefined, elapsedMs: number): OutboundResponse {
  const contentType = (headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  const text = () => {
    try {
      return new TextDecoder(charsetOf(headers['content-type'])).decode(body);
    } catch {
      // An unknown charset label: UTF-8 is the web's default.
      return new TextDecoder('utf-8').decode(body);
    }
  };
  return {
    status,
    url,
    headers,
    contentType,
    body,
    text,
    json() {
      try {
        return JSON.parse(text()) as unknown;
      } catch (e) {
        throw new OutboundError(OutboundErrorCode.INVALID_JSON, `${truncate(url, 120)} did not answer JSON: ${(e as Error).message}`);
      }
    },
    remoteAddress,
    elapsedMs,
  };
}

export function headersOf(res: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

export function decoded(res: IncomingMessage): Readable {
  const enc = (res.headers['content-encoding'] ?? '').toString().trim().toLowerCase();
  if (enc === 'gzip' || enc === 'x-gzip') return res.pipe(createGunzip());
  if (enc === 'br') return res.pipe(createBrotliDecompress());
  if (enc === 'deflate') return res.pipe(createInflate());
  return res;
}
