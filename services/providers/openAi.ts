/**
 * OpenAI-compatible endpoints (OpenAI, Ollama, llama.cpp `llama-server`, vLLM, LocalAI…), as the
 * OpenAI API reference documents them: `POST /chat/completions` (the first choice's message),
 * `POST /images/generations` (`b64_json`, 1024x1024), and `GET /models` as the health probe.
 */
import { z } from 'zod';
import type { OutboundClient } from '../outbound/types.js';
import { ServiceError } from '../types.js';
import { badResponse, bearer, joinUrl, ProviderCallErrorCode, providerJson, providerPostJson } from './call.js';
import type { OpenAiCompatibleOptions } from './options.js';

/** One chat message. */
export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/** A completion: the text, the model that wrote it, why it stopped, token counts when given. */
export interface ChatCompletion {
  readonly text: string;
  readonly model: string;
  readonly finishReason: string | null;
  readonly usage: { readonly promptTokens: number; readonly completionTokens: number; readonly totalTokens: number } | null;
}

const chatSchema = z.object({
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        message: z.object({ role: z.string().optional(), content: z.string().nullable() }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
  usage: z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() }).nullable().optional(),
});

const imagesSchema = z.object({
  data: z.array(z.object({ b64_json: z.string().min(1).optional(), url: z.string().optional(), revised_prompt: z.string().optional() })).min(1),
});

const modelsSchema = z.object({ data: z.array(z.object({ id: z.string() })) });

/** Chat completions of one configured endpoint. */
export interface ChatProvider {
  readonly model: string | undefined;
  complete(messages: readonly ChatMessage[], opts: { readonly maxTokens?: number; readonly temperature?: number; readonly signal?: AbortSignal; readonly timeoutMs?: number }): Promise<ChatCompletion>;
  probe(signal?: AbortSignal): Promise<void>;
}

/** The models probe: the endpoint lists its models, and the configured one among them. */
async function probeModels(provider: string, opts: OpenAiCompatibleOptions & { url: string }, outbound: OutboundClient, signal?: AbortSignal): Promise<void> {
  const list = await providerJson(outbound, provider, { url: joinUrl(opts.url, 'models'), headers: bearer(opts.apiKey), signal, maxBytes: 4 << 20 }, modelsSchema);
  // Ollama lists tags (`llama3.2:latest`) and serves the bare name as the `latest` tag.
  if (opts.model && !list.data.some((m) => m.id === opts.model || m.id === `${opts.model}:latest`)) throw new ServiceError(ProviderCallErrorCode.FAILED, `${provider} does not serve the model ${opts.model}`);
}

/** Creates the chat provider of an endpoint whose `url` is set. */
export function createChatProvider(opts: OpenAiCompatibleOptions & { url: string }, outbound: OutboundClient, provider = 'chat provider'): ChatProvider {
  return {
    model: opts.model,
    async complete(messages, o) {
      const body: Record<string, unknown> = { messages, stream: false };
      if (opts.model) body.model = opts.model;
      if (o.maxTokens !== undefined) body.max_tokens = o.maxTokens;
      if (o.temperature !== undefined) body.temperature = o.temperature;
      const doc = await providerPostJson(outbound, provider, joinUrl(opts.url, 'chat/completions'), body, { headers: bearer(opts.apiKey), signal: o.signal, timeoutMs: o.timeoutMs, maxBytes: 1 << 20 }, chatSchema);
      const choice = doc.choices[0];
      const text = choice.message.content;
      if (text === null || text.trim() === '') throw badResponse(provider, 'the completion is empty');
      const u = doc.usage;
      return { text, model: doc.model ?? opts.model ?? 'unknown', finishReason: choice.finish_reason ?? null, usage: u ? { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens, totalTokens: u.total_tokens } : null };
    },
    probe: (signal) => probeModels(provider, opts, outbound, signal),
  };
}

/** One generated image, still to be checked. */
export interface GeneratedImage {
  readonly bytes: Uint8Array;
  readonly model: string | null;
  readonly revisedPrompt: string | null;
}

/** Image generation of one configured endpoint. */
export interface ImageProvider {
  readonly kind: 'openai' | 'a1111';
  generate(prompt: string, opts: { readonly signal?: AbortSignal; readonly timeoutMs?: number }): Promise<GeneratedImage>;
  probe(signal?: AbortSignal): Promise<void>;
}

/** Image side size asked for and required. */
export const IMAGE_SIZE = 1024;

/** Strict base64 (RFC 4648 alphabet, padding) to bytes; undefined when it is not. */
export function decodeBase64(text: string): Uint8Array | undefined {
  const s = text.replace(/\s+/g, '');
  if (s.length === 0 || s.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(s)) return undefined;
  return new Uint8Array(Buffer.from(s, 'base64'));
}

/** Creates the OpenAI-compatible image provider of an endpoint whose `url` is set. */
export function createOpenAiImages(opts: OpenAiCompatibleOptions & { url: string }, outbound: OutboundClient): ImageProvider {
  const provider = 'image provider';
  return {
    kind: 'openai',
    async generate(prompt, o) {
      const body: Record<string, unknown> = { prompt, n: 1, size: `${IMAGE_SIZE}x${IMAGE_SIZE}` };
      if (opts.model) body.model = opts.model;
      // gpt-image models always answer base64 and refuse the parameter; DALL·E and compatible servers need it.
      if (!opts.model?.startsWith('gpt-image')) body.response_format = 'b64_json';
      const doc = await providerPostJson(outbound, provider, joinUrl(opts.url, 'images/generations'), body, { headers: bearer(opts.apiKey), signal: o.signal, timeoutMs: o.timeoutMs, maxBytes: 16 << 20 }, imagesSchema);
      const first = doc.data[0];
      if (!first.b64_json) throw badResponse(provider, 'no b64_json image in the answer');
      const bytes = decodeBase64(first.b64_json);
      if (!bytes) throw badResponse(provider, 'b64_json is not base64');
      return { bytes, model: opts.model ?? null, revisedPrompt: first.revised_prompt ?? null };
    },
    probe: (signal) => probeModels(provider, opts, outbound, signal),
  };
}
