/** An in-thread SignatureVerifier over the reference (@noble) implementation, counting its work. */
import { verifyHybridReference } from '../../consensus/keys.js';
import type { SignatureVerifier } from '../../chain/types.js';

export class CountingVerifier implements SignatureVerifier {
  calls = 0;
  async verifyBatch(jobs: Parameters<SignatureVerifier['verifyBatch']>[0]): Promise<boolean[]> {
    this.calls += jobs.length;
    return jobs.map((j) => verifyHybridReference(j.pub, j.msg, j.sig));
  }
}
