/** native-whale-watch: large-transfer scan over blocks. Not runnable yet: its block-range transfer index does not exist yet (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { nativeAmountInput } from './inputs.js';

/** native-whale-watch. */
export const whaleWatch = defineService({
  id: 'native-whale-watch',
  name: 'Whale Watch',
  category: 'whale-watch',
  priceBase: 2_000_000n,
  description: 'large-transfer scan over blocks',
  tags: ['whale', 'large-transfer', 'scan', 'blocks', 'alerts'],
  requestFormat: 'threshold in NATIVE, e.g. 10000; empty: the default threshold',
  requestRequired: false,
  inputSchema: nativeAmountInput(true, 'Threshold in NATIVE (positive decimal, at most 8 decimals).'),
});
