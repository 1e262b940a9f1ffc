/**
 * Test-only loopback fake of every HTTP provider (127.0.0.1, port 0), answering in the
 * providers' real wire formats (./fixtures.ts). Each provider family sits under its own path
 * prefix and can be switched to a failure mode: an HTTP error with the provider's error body, a
 * slow answer, an oversized body, malformed JSON/XML, a well-formed answer of the wrong shape,
 * and for the image providers a PNG of the wrong size or bytes that are no PNG.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startFake, type Fake } from '../outboundFakes.js';
import {
  A1111_MODELS,
  chatCompletion,
  COINGECKO_429,
  COINGECKO_GLOBAL,
  COINGECKO_PING,
  COINGECKO_SIMPLE_PRICE,
  ECB_DAILY_XML,
  FORECAST_BERLIN,
  GEOCODING_BERLIN,
  GEOCODING_NONE,
  imagesAnswer,
  LIBRE_LANGUAGES,
  libreTranslation,
  makePng,
  modelList,
  OPEN_METEO_ERROR,
  OPENAI_ERROR,
  txt2imgAnswer,
} from './fixtures.js';

/** Provider families, each under `/<family>/`. */
export type Family = 'geo' | 'om' | 'ecb' | 'cg' | 'oai' | 'lt' | 'a1111';
/** How a family answers. */
export type Mode = 'ok' | 'error' | 'slow' | 'huge' | 'malformed' | 'wrong-shape' | 'small-image' | 'not-png';

/** Milliseconds a `slow` answer waits. */
export const SLOW_MS = 4_000;
/** Bytes of a `huge` answer (above every provider's cap). */
export const HUGE_BYTES = 20 * 1024 * 1024;

/** The running fake. */
export interface ProviderFake {
  readonly url: string;
  /** Requests per family. */
  readonly hits: Map<Family, number>;
  /** Bodies of POST requests, in order, with their path. */
  readonly posts: { path: string; body: Record<string, unknown> }[];
  /** Request headers, in order, with their path. */
  readonly headers: { path: string; url: string; headers: Record<string, string | string[] | undefined> }[];
  set(family: Family, mode: Mode): void;
  reset(): void;
  /** Provider settings (`ctx.providers`) pointing every provider at this fake. */
  settings(over?: Record<string, string>): Record<string, string>;
  close(): Promise<void>;
}

const PNG_1024 = makePng(1024, 1024).toString('base64');
const PNG_512 = makePng(512, 512).toString('base64');

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
  });
}

function send(res: ServerResponse, status: number, body: unknown, type = 'application/json; charset=utf-8'): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Streams a body larger than any cap; stops when the client goes away. */
function sendHuge(res: ServerResponse, type: string): void {
  res.writeHead(200, { 'content-type': type });
  const block = Buffer.alloc(64 * 1024, 0x61);
  let sent = 0;
  const pump = () => {
    while (sent < HUGE_BYTES) {
      sent += block.length;
      if (!res.write(block)) return void res.once('drain', pump);
    }
    res.end();
  };
  res.on('close', () => (sent = HUGE_BYTES));
  pump();
}

/** The normal answer of a route (status, body, content type). */
function answer(family: Family, path: string, url: URL, body: Record<string, unknown>, mode: Mode): [number, unknown, string?] {
  switch (family) {
    case 'geo':
      return [200, url.searchParams.get('name') === 'Berlin' ? GEOCODING_BERLIN : GEOCODING_NONE];
    case 'om':
      return [200, FORECAST_BERLIN];
    case 'ecb':
      return [200, ECB_DAILY_XML, 'text/xml'];
    case 'cg': {
      if (path.endsWith('/ping')) return [200, COINGECKO_PING];
      if (path.endsWith('/global')) return [200, COINGECKO_GLOBAL];
      const ids = (url.searchParams.get('ids') ?? '').split(',');
      const out: Record<string, unknown> = {};
      for (const id of ids) if (id in COINGECKO_SIMPLE_PRICE) out[id] = COINGECKO_SIMPLE_PRICE[id as keyof typeof COINGECKO_SIMPLE_PRICE];
      return [200, out];
    }
    case 'oai': {
      if (path.endsWith('/models')) return [200, modelList('test-model', 'dall-e-3', 'llama3.2:latest')];
      if (path.endsWith('/images/generations')) return [200, imagesAnswer(mode === 'small-image' ? PNG_512 : mode === 'not-png' ? Buffer.from('GIF89a not a png at all').toString('base64') : PNG_1024)];
      const messages = body.messages as { role: string; content: string }[];
      const last = messages[messages.length - 1].content;
      const system = messages.find((m) => m.role === 'system')?.content;
      return [200, chatCompletion(system ? `[translated] ${last}` : `Echo: ${last}`, String(body.model ?? 'test-model'))];
    }
    case 'lt':
      if (path.endsWith('/languages')) return [200, LIBRE_LANGUAGES];
      return [200, libreTranslation(`${String(body.target)}: ${String(body.q)}`)];
    case 'a1111':
      if (path.endsWith('/sd-models')) return [200, A1111_MODELS];
      return [200, txt2imgAnswer(mode === 'small-image' ? PNG_512 : PNG_1024)];
  }
}

/** The provider's own error answer of a family. */
function errorOf(family: Family): [number, unknown, string?] {
  switch (family) {
    case 'geo':
    case 'om':
      return [400, OPEN_METEO_ERROR];
    case 'ecb':
      return [503, '<html><body>Service Unavailable</body></html>', 'text/html'];
    case 'cg':
      return [429, COINGECKO_429];
    case 'oai':
      return [503, OPENAI_ERROR];
    case 'lt':
      return [400, { error: 'Invalid request: missing q parameter' }];
    case 'a1111':
      return [500, { error: 'RuntimeError', detail: 'CUDA out of memory', body: '', errors: '' }];
  }
}

/** Starts the fake on 127.0.0.1. */
export async function startProviderFake(): Promise<ProviderFake> {
  const modes = new Map<Family, Mode>();
  const hits = new Map<Family, number>();
  const posts: ProviderFake['posts'] = [];
  const headers: ProviderFake['headers'] = [];
  const fake: Fake = await startFake((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const family = url.pathname.split('/')[1] as Family;
      hits.set(family, (hits.get(family) ?? 0) + 1);
      headers.push({ path: url.pathname, url: req.url ?? '', headers: req.headers });
      const raw = req.method === 'POST' ? await readBody(req) : '';
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      if (req.method === 'POST') posts.push({ path: url.pathname, body });
      const mode = modes.get(family) ?? 'ok';
      const xml = family === 'ecb';
      if (mode === 'slow') await new Promise((r) => setTimeout(r, SLOW_MS).unref());
      if (res.destroyed) return;
      if (mode === 'error') return void send(res, ...errorOf(family));
      if (mode === 'huge') return sendHuge(res, xml ? 'text/xml' : 'application/json');
      if (mode === 'malformed') return void send(res, 200, xml ? '<?xml version="1.0"?><gesmes:Envelope xmlns="eurofxref"><Cube><Cube time=' : '{"results": [{"name": "Ber', xml ? 'text/xml' : 'application/json');
      if (mode === 'wrong-shape') return void send(res, 200, xml ? '<?xml version="1.0"?><html><body>moved</body></html>' : { hello: 'world', data: 42, choices: 'none', images: 'none' }, xml ? 'text/xml' : 'application/json');
      if (family === 'oai' && url.pathname.endsWith('/images/generations') && body.size !== '1024x1024') return void send(res, 400, { error: { message: 'Invalid size', type: 'invalid_request_error', param: 'size', code: null } });
      send(res, ...answer(family, url.pathname, url, body, mode));
    })();
  }, '127.0.0.1');
  const u = fake.url;
  return {
    url: u,
    hits,
    posts,
    headers,
    set: (family, mode) => void modes.set(family, mode),
    reset: () => {
      modes.clear();
      hits.clear();
      posts.length = 0;
      headers.length = 0;
    },
    settings: (over = {}) => ({
      weatherGeocodingUrl: `${u}/geo/v1/search`,
      weatherForecastUrl: `${u}/om/v1/forecast`,
      fxUrl: `${u}/ecb/stats/eurofxref/eurofxref-daily.xml`,
      coingeckoUrl: `${u}/cg/api/v3`,
      llmUrl: `${u}/oai/v1`,
      llmModel: 'test-model',
      translateProvider: 'libretranslate',
      translateUrl: `${u}/lt`,
      imageProvider: 'openai',
      imageUrl: `${u}/oai/v1`,
      imageModel: 'dall-e-3',
      ...over,
    }),
    close: () => fake.close(),
  };
}
