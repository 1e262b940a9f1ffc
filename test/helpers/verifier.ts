/**
 * An in-thread SignatureVerifier, counting its work. It checks with the node's fast verifier
 * (consensus/fastVerify.ts: liboqs ML-DSA-87 and OpenSSL Ed25519, which test/consensus and
 * test/chain/verifyPool hold to the @noble reference bit for bit): the reference in pure JS cost
 * the suite's in-process chains seconds of CPU per test file.
 */
import { createFastVerifier, type HybridVerifier } from '../../consensus/fastVerify.js';
import type { SignatureVerifier } from '../../chain/types.js';

let fast: Promise<HybridVerifier> | undefined;

export class CountingVerifier implements SignatureVerifier {
  calls = 0;
  async verifyBatch(jobs: Parameters<SignatureVerifier['verifyBatch']>[0]): Promise<boolean[]> {
    this.calls += jobs.length;
    const v = await (fast ??= createFastVerifier());
    return jobs.map((j) => v.verify(j.pub, j.msg, j.sig));
  }
}
