/** native-image-gen: 1024x1024 PNG as base64 from a text prompt. Not runnable yet: it needs an image-generation provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { textInput } from './inputs.js';

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
  timeoutMs: 60_000,
});
