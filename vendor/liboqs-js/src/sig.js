/**
 * @fileoverview Signature algorithm exports of this vendored subset: ML-DSA-87 only.
 * @module @oqs/liboqs-js/sig
 */
export { createMLDSA87, MLDSA87, ML_DSA_87_INFO } from './algorithms/sig/ml-dsa/ml-dsa-87.js';
