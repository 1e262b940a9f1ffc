/** A signer thread of `startFloodSigners` (test/helpers/floodKeys.ts): signs batches of flood transfers. */
import { parentPort } from 'node:worker_threads';
import { fromHex } from '../../consensus/hash.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import { createFastTransferBuilder, floodKey, type FloodSignAnswer, type FloodSignRequest } from './floodKeys.js';

const build = await createFastTransferBuilder();
const keys = new Map<string, HybridKeyPair>();

parentPort!.on('message', (req: FloodSignRequest) => {
  try {
    const to = fromHex(req.to);
    const txs = req.specs.map((s) => {
      const name = `${s.label}-${s.index}`;
      let key = keys.get(name);
      if (!key) keys.set(name, (key = floodKey(s.label, s.index)));
      return build({ key, chainId: req.chainId, to, amount: s.amount, nonce: s.nonce, includeKey: s.includeKey, fee: s.fee, feeRate: s.feeRate });
    });
    const buffer = new ArrayBuffer(txs.reduce((n, t) => n + t.bytes.length, 0));
    const all = new Uint8Array(buffer);
    const ends: number[] = [];
    for (const t of txs) {
      all.set(t.bytes, ends.at(-1) ?? 0);
      ends.push((ends.at(-1) ?? 0) + t.bytes.length);
    }
    const answer: FloodSignAnswer = { id: req.id, ids: txs.map((t) => t.id), ends, buffer };
    parentPort!.postMessage(answer, [buffer]);
  } catch (e) {
    const answer: FloodSignAnswer = { id: req.id, error: (e as Error).stack ?? String(e) };
    parentPort!.postMessage(answer);
  }
});
