/**
 * The Automatic1111 Stable Diffusion web UI API (`--api`): `POST /sdapi/v1/txt2img` answers
 * `{images: [base64 PNG…], parameters, info}`; `GET /sdapi/v1/sd-models` is the health probe.
 */
import { z } from 'zod';
import type { OutboundClient } from '../outbound/types.js';
import { badResponse, bearer, joinUrl, providerJson, providerPostJson } from './call.js';
import { decodeBase64, IMAGE_SIZE, type ImageProvider } from './openAi.js';
import type { OpenAiCompatibleOptions } from './options.js';

const PROVIDER = 'Automatic1111';
const txt2imgSchema = z.object({ images: z.array(z.string()).min(1), info: z.string().optional() });
const modelsSchema = z.array(z.object({ title: z.string(), model_name: z.string().optional() }));

/** Sampling steps asked for (the web UI's default is 20). */
export const A1111_STEPS = 25;

/** Creates the adapter of a web UI at `url` (its root, without `/sdapi`); `model` picks a checkpoint by title. */
export function createA1111(opts: OpenAiCompatibleOptions & { url: string }, outbound: OutboundClient): ImageProvider {
  // The web UI has no keys of its own; a reverse proxy in front of it may want a bearer token.
  const headers = bearer(opts.apiKey);
  return {
    kind: 'a1111',
    async generate(prompt, o) {
      const body: Record<string, unknown> = { prompt, width: IMAGE_SIZE, height: IMAGE_SIZE, steps: A1111_STEPS, batch_size: 1, n_iter: 1, send_images: true, save_images: false };
      if (opts.model) body.override_settings = { sd_model_checkpoint: opts.model };
      const doc = await providerPostJson(outbound, PROVIDER, joinUrl(opts.url, 'sdapi/v1/txt2img'), body, { headers, signal: o.signal, timeoutMs: o.timeoutMs, maxBytes: 16 << 20 }, txt2imgSchema);
      // The web UI may prefix a data: URL header depending on version and extensions.
      const bytes = decodeBase64(doc.images[0].replace(/^data:image\/png;base64,/, ''));
      if (!bytes) throw badResponse(PROVIDER, 'images[0] is not base64');
      let model: string | null = opts.model ?? null;
      try {
        const info = JSON.parse(doc.info ?? '{}') as { sd_model_name?: unknown };
        if (typeof info.sd_model_name === 'string') model = info.sd_model_name;
      } catch {
        // `info` is informative only.
      }
      return { bytes, model, revisedPrompt: null };
    },
    async probe(signal) {
      await providerJson(outbound, PROVIDER, { url: joinUrl(opts.url, 'sdapi/v1/sd-models'), headers, signal, maxBytes: 1 << 20 }, modelsSchema);
    },
  };
}
