/**
 * Types of this vendored subset of @oqs/liboqs-js 0.15.1: ML-DSA-87 only (abridged from the
 * package's `src/types/algorithms.d.ts`).
 */

/** A generated key pair. */
export interface SIGResult {
  readonly publicKey: Uint8Array;
  readonly secretKey: Uint8Array;
}

/** Algorithm constants. */
export interface AlgorithmInfo {
  readonly name: string;
  readonly identifier: string;
  readonly type: 'sig';
  readonly securityLevel: number;
  readonly standardized: boolean;
  readonly description: string;
  readonly keySize: { readonly publicKey: number; readonly secretKey: number; readonly signature: number };
}

/** ML-DSA-87 (FIPS 204) over liboqs compiled to WebAssembly. */
export declare class MLDSA87 {
  generateKeyPair(): SIGResult;
  sign(message: Uint8Array, secretKey: Uint8Array): Uint8Array;
  verify(message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array): boolean;
  destroy(): void;
  readonly info: Readonly<AlgorithmInfo>;
}

/** Loads the WASM module and returns an ML-DSA-87 instance. */
export declare function createMLDSA87(): Promise<MLDSA87>;
/** ML-DSA-87 constants. */
export declare const ML_DSA_87_INFO: Readonly<AlgorithmInfo>;
