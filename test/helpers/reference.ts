/**
 * The reference x402 stacks (`reference/`: @x402/fetch 2.x, x402-fetch 1.2.0, x402-express on
 * express, and viem, which the tests sign and check USDC payments with), kept out of the root install because they pull in hundreds of MB of wallet SDKs.
 * Tests and benches that need them call `loadReference()`, which installs the folder from its
 * own lock file once (`npm ci --prefix reference`, also run by .ci/run), then imports the
 * packages from there. Types are declared here for the few calls the tests make, so the root
 * `tsc` does not depend on that folder.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureInstalledOnce, npmCi } from './installOnce.js';

/** The reference folder. */
export const REFERENCE_DIR = fileURLToPath(new URL('../../reference', import.meta.url));

/** A viem-style local account, as both clients take it. */
export type ReferenceAccount = object;

/** What the tests use of `x402-fetch` 1.2.0. */
export interface LegacyX402Fetch {
  wrapFetchWithPayment(fetchFn: typeof fetch, account: ReferenceAccount): typeof fetch;
  decodeXPaymentResponse(header: string): { success: boolean; transaction: string; network: string; payer: string };
}

/** The x402 v2 client (`x402Client` of `@x402/fetch`). */
export interface X402Client {
  createPaymentPayload(required: unknown): Promise<unknown>;
}

/** What the tests use of `@x402/fetch` 2.x and `@x402/evm`. */
export interface X402Fetch {
  wrapFetchWithPayment(fetchFn: typeof fetch, client: X402Client): typeof fetch;
  x402Client: new () => X402Client;
  x402HTTPClient: new (client: X402Client) => {
    getPaymentRequiredResponse(getHeader: (name: string) => string | null | undefined, body?: unknown): unknown;
    encodePaymentSignatureHeader(payload: unknown): Record<string, string>;
  };
  decodePaymentResponseHeader(header: string): { success: boolean; transaction: string; network: string; payer?: string };
  registerExactEvmScheme(client: X402Client, opts: { signer: ReferenceAccount }): void;
}

/** EIP-712 typed data as viem takes it (`TransferWithAuthorization` here). */
export interface TypedDataArgs {
  readonly domain: { readonly name: string; readonly version: string; readonly chainId: number; readonly verifyingContract: `0x${string}` };
  readonly types: Record<string, readonly { readonly name: string; readonly type: string }[]>;
  readonly primaryType: string;
  readonly message: Record<string, unknown>;
}

/** A viem local account. */
export interface ViemAccount {
  readonly address: `0x${string}`;
  signTypedData(args: TypedDataArgs): Promise<`0x${string}`>;
}

/** What the tests use of viem, the reference EVM library (installed in reference/ as the clients' dependency). */
export interface ReferenceViem {
  privateKeyToAccount(key: `0x${string}`): ViemAccount;
  verifyTypedData(args: TypedDataArgs & { readonly address: `0x${string}`; readonly signature: `0x${string}` }): Promise<boolean>;
  getAddress(address: string): `0x${string}`;
  isAddressEqual(a: `0x${string}`, b: `0x${string}`): boolean;
  keccak256(bytes: Uint8Array): `0x${string}`;
}

/** Installs `reference/` if needed and loads viem from it; `ok: false` with the reason when that fails. */
export async function loadReferenceViem(): Promise<{ readonly ok: true; readonly viem: ReferenceViem } | { readonly ok: false; readonly reason: string }> {
  try {
    await ensureReferenceInstalled();
    const viem = await importFromReference<Omit<ReferenceViem, 'privateKeyToAccount'>>('viem');
    const accounts = await importFromReference<Pick<ReferenceViem, 'privateKeyToAccount'>>('viem/accounts');
    return { ok: true, viem: { ...viem, privateKeyToAccount: accounts.privateKeyToAccount } };
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
}

/** The loaded reference clients, or why they are not there. */
export type Reference = { readonly ok: true; readonly legacy: LegacyX402Fetch; readonly v2: X402Fetch } | { readonly ok: false; readonly reason: string };

/**
 * Installs `reference/` from its lock file unless already installed; concurrent callers (jest
 * workers, several benches) wait for the one that installs. Throws when npm fails.
 */
export async function ensureReferenceInstalled(log: (msg: string) => void = (m) => process.stderr.write(`${m}\n`)): Promise<void> {
  await ensureInstalledOnce(REFERENCE_DIR, () => {
    log('installing the reference x402 stacks in reference/ (npm ci, about a minute, once)…');
    return npmCi(REFERENCE_DIR);
  });
}

/** Imports a package installed in `reference/` (resolved from there, not from the root). */
export async function importFromReference<T>(specifier: string): Promise<T> {
  const resolved = createRequire(join(REFERENCE_DIR, 'package.json')).resolve(specifier);
  return (await import(pathToFileURL(resolved).href)) as T;
}

/** Installs `reference/` if needed and loads both official x402 clients; `ok: false` with the reason when that fails. */
export async function loadReference(): Promise<Reference> {
  try {
    await ensureReferenceInstalled();
    const legacy = await importFromReference<LegacyX402Fetch>('x402-fetch');
    const fetchV2 = await importFromReference<Omit<X402Fetch, 'registerExactEvmScheme'>>('@x402/fetch');
    const evm = await importFromReference<Pick<X402Fetch, 'registerExactEvmScheme'>>('@x402/evm/exact/client');
    return { ok: true, legacy, v2: { ...fetchV2, registerExactEvmScheme: evm.registerExactEvmScheme } };
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
}
