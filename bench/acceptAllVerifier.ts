/**
 * The benches' verifier that accepts every signature: for chains whose signatures are not what a
 * bench measures (a serving peer's seed import, Stratum and miner job latency, the services'
 * market chain with zero-byte signatures). Never used by the node.
 */
import type { SignatureVerifier } from '../chain/types.js';

/** Accepts every signature. */
export const acceptAllVerifier: SignatureVerifier = { verifyBatch: async (jobs) => jobs.map(() => true) };
