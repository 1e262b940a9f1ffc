/**
 * native-image-gen: a 1024x1024 PNG (base64) from a text prompt, by the operator's image provider
 * (an OpenAI-compatible images endpoint or Automatic1111). The provider's image is checked to be a
 * well-formed 1024x1024 PNG before it is sold; anything else is refunded.
 */
import { defineService } from './define.js';
import { textInput } from './inputs.js';
import { badResponse } from './providers/call.js';
import { callProvider, configured, providersHealth, providersReady } from './providers/index.js';
import { IMAGE_SIZE } from './providers/openAi.js';
import { readPngInfo } from './providers/png.js';
import type { ServiceContext } from './types.js';

const TIMEOUT_MS = 60_000;

async function run(ctx: ServiceContext, input: unknown) {
  const prompt = String(input);
  return callProvider(ctx, 'image', async (p) => {
    const provider = configured(p, 'image', 'image provider');
    const img = await provider.generate(prompt, { signal: ctx.signal, timeoutMs: TIMEOUT_MS - 2000 });
    const info = readPngInfo(img.bytes);
    if ('error' in info) throw badResponse('image provider', info.error);
    if (info.width !== IMAGE_SIZE || info.height !== IMAGE_SIZE) throw badResponse('image provider', `the image is ${info.width}x${info.height}, not ${IMAGE_SIZE}x${IMAGE_SIZE}`);
    return { image: Buffer.from(img.bytes).toString('base64'), mimeType: 'image/png', width: info.width, height: info.height, bytes: img.bytes.length, prompt, revisedPrompt: img.revisedPrompt, model: img.model, provider: provider.kind };
  });
}

/** native-image-gen. */
export const imageGen = defineService({
  id: 'native-image-gen',
  name: 'Image Generation',
  category: 'compute',
  priceBase: 2_000_000n,
  description: '1024x1024 PNG as base64 from a text prompt',
  tags: ['image', 'generation', 'png', 'ai', 'prompt', 'art'],
  requestFormat: 'text prompt describing the image (3 to 1000 characters)',
  requestRequired: true,
  inputSchema: textInput('Text prompt describing the image.', 1000, 3),
  timeoutMs: TIMEOUT_MS,
  run,
  health: providersHealth('image'),
  precheck: providersReady('image'),
});
