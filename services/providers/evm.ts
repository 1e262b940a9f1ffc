/**
 * EVM reads over the operator's JSON-RPC endpoints (Base and Ethereum) with viem public clients
 * whose transport is the outbound client's `fetchProvider` (its timeouts and size cap apply to
 * every RPC call): gas prices (with Base's L1 data fee from the OP-stack GasPriceOracle), native
 * and USDC balances on Base, and ENS forward, reverse and avatar lookups through the ENS registry.
 *
 * ENS follows the registry path (ENSIP-1/3/19): `registry.resolver(namehash)`, then the
 * resolver's `addr`, `name` or `text("avatar")`; a reverse name counts only when its forward
 * address points back (the rule every ENS client applies). Off-chain (CCIP-read) names are not
 * followed: they would make the node fetch URLs chosen by a name's owner.
 */
import type { Address, Hex, PublicClient } from 'viem';
import { BASE_USDC } from '../../common/baseUsdc.js';
import type { OutboundClient } from '../outbound/types.js';
import { ServiceError } from '../types.js';
import { badResponse, ProviderCallErrorCode, providerFetch } from './call.js';
import type { EvmProviderOptions } from './options.js';

/** The EVM networks read. */
export type EvmNetwork = 'base' | 'ethereum';
/** Chain ids of the networks. */
export const EVM_CHAIN_IDS: Readonly<Record<EvmNetwork, number>> = Object.freeze({ base: 8453, ethereum: 1 });
/** USDC on Base (6 decimals). */
export const USDC_BASE: Address = BASE_USDC.asset;
/** The ENS registry (same address on every network ENS runs on). */
export const ENS_REGISTRY: Address = '0x00000000000C2E074eC69A0dFb2997BA6C7d2e1e';
/** The OP-stack GasPriceOracle predeploy (Base). */
export const GAS_PRICE_ORACLE: Address = '0x420000000000000000000000000000000000000F';
/** Gas of a plain native-coin transfer. */
export const TRANSFER_GAS = 21_000n;

const ZERO: Address = '0x0000000000000000000000000000000000000000';
// The ABIs as JSON (what viem's parseAbi makes of `function balanceOf(address) view returns (uint256)`
// and the like), so that this module loads without viem; viem itself (~600 modules) is imported
// with the first RPC call (`loadViem`), not when the node starts.
const view = (name: string) => ({ type: 'function', name, stateMutability: 'view' }) as const;
const erc20Abi = [{ ...view('balanceOf'), inputs: [{ type: 'address' }], outputs: [{ type: 'uint256' }] }] as const;
const registryAbi = [{ ...view('resolver'), inputs: [{ type: 'bytes32', name: 'node' }], outputs: [{ type: 'address' }] }] as const;
const resolverAbi = [
  { ...view('addr'), inputs: [{ type: 'bytes32', name: 'node' }], outputs: [{ type: 'address' }] },
  { ...view('name'), inputs: [{ type: 'bytes32', name: 'node' }], outputs: [{ type: 'string' }] },
  { ...view('text'), inputs: [{ type: 'bytes32', name: 'node' }, { type: 'string', name: 'key' }], outputs: [{ type: 'string' }] },
] as const;
const oracleAbi = [{ ...view('getL1Fee'), inputs: [{ type: 'bytes', name: 'data' }], outputs: [{ type: 'uint256' }] }] as const;

type Viem = typeof import('viem') & Pick<typeof import('viem/ens'), 'namehash'>;
let viemLoad: Promise<Viem> | undefined;

/** viem, imported once at the first use. */
export function loadViem(): Promise<Viem> {
  viemLoad ??= Promise.all([import('viem'), import('viem/ens')]).then(([v, e]) => ({ ...v, namehash: e.namehash }));
  viemLoad.catch(() => (viemLoad = undefined));
  return viemLoad;
}

/** Gas figures of one network at one block. */
export interface GasReading {
  readonly blockNumber: bigint;
  /** eth_gasPrice, wei. */
  readonly gasPriceWei: bigint;
  /** The block's EIP-1559 base fee, wei (null before London). */
  readonly baseFeeWei: bigint | null;
  /** OP-stack L1 data fee of a standard transfer, wei (Base only; null where no oracle answers). */
  readonly l1FeeWei: bigint | null;
}

/** Balances of an address on Base at one block. */
export interface BaseBalances {
  readonly blockNumber: bigint;
  readonly ethWei: bigint;
  /** USDC atomic units (6 decimals). */
  readonly usdcAtomic: bigint;
}

/** ENS records of a name (null where unset). */
export interface EnsForward {
  readonly resolver: Address | null;
  readonly address: Address | null;
  readonly avatar: string | null;
}

/** The EVM reader of one network. */
export interface EvmReader {
  readonly network: EvmNetwork;
  gas(signal?: AbortSignal): Promise<GasReading>;
  /** Base only. */
  balances(address: Address, signal?: AbortSignal): Promise<BaseBalances>;
  /** Ethereum only: a normalized name's resolver, address and avatar record. */
  ensForward(name: string, signal?: AbortSignal): Promise<EnsForward>;
  /** Ethereum only: the primary name of an address, verified forward; null when none. */
  ensReverse(address: Address, signal?: AbortSignal): Promise<string | null>;
  probe(signal?: AbortSignal): Promise<void>;
}

interface RpcAnswer {
  result?: unknown;
  error?: { code?: unknown; message?: unknown; data?: unknown };
}

/** An error the JSON-RPC endpoint itself reported (viem maps its code, e.g. a revert). */
class RpcAnswerError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data: unknown) {
    super(message);
    this.name = 'RpcAnswerError';
    this.code = code;
    this.data = data;
  }
}

/** The ServiceError the transport threw, found inside viem's wrapping, if that is what failed. */
function transportFault(e: unknown): ServiceError | undefined {
  for (let cur: unknown = e, depth = 0; cur && depth < 8; cur = (cur as { cause?: unknown }).cause, depth++) {
    if (cur instanceof ServiceError) return cur;
  }
  return undefined;
}

/** The ServiceError behind a viem error, or a provider error naming the call (a revert, an answer viem could not decode). */
function unwrap(provider: string, e: unknown): ServiceError {
  const fault = transportFault(e);
  if (fault) return fault;
  const msg = e instanceof Error ? ((e as { shortMessage?: string }).shortMessage ?? e.message) : String(e);
  return new ServiceError(ProviderCallErrorCode.FAILED, `${provider}: ${msg.split('\n')[0].slice(0, 300)}`);
}

/** viem errors that mean "the contract has no such answer": a revert, no data, or data that does not decode as the ABI says. */
const NO_ANSWER = new Set(['ContractFunctionRevertedError', 'ContractFunctionZeroDataError', 'ExecutionRevertedError', 'AbiDecodingZeroDataError', 'AbiDecodingDataSizeTooSmallError', 'PositionOutOfBoundsError', 'InvalidBytesBooleanError', 'SliceOffsetOutOfBoundsError']);

function isNoAnswer(e: unknown): boolean {
  for (let cur: unknown = e, depth = 0; cur && depth < 8; cur = (cur as { cause?: unknown }).cause, depth++) {
    if (cur instanceof Error && NO_ANSWER.has(cur.name)) return true;
  }
  return false;
}

/** `p`'s value, or `fallback` when the contract reverted or returned nothing (an unset record); transport faults and other RPC errors still throw. */
async function unlessReverted<T>(p: Promise<T>, fallback: T): Promise<T> {
  try {
    return await p;
  } catch (e) {
    if (transportFault(e) || !isNoAnswer(e)) throw e;
    return fallback;
  }
}

/** A viem public client over `url` whose transport is the outbound client (its limits apply). */
export async function createClient(provider: string, url: string, outbound: OutboundClient, signal: AbortSignal | undefined): Promise<PublicClient> {
  const { createPublicClient, custom } = await loadViem();
  return createPublicClient({ transport: custom({ request: rpcRequester(provider, url, outbound, signal) }, { retryCount: 0 }) }) as PublicClient;
}

/** One JSON-RPC call at a time over the outbound client: the transport of `createClient`, and the probe's own. */
function rpcRequester(provider: string, url: string, outbound: OutboundClient, signal: AbortSignal | undefined): (call: { method: string; params?: unknown }) => Promise<unknown> {
  let id = 0;
  const request = async ({ method, params }: { method: string; params?: unknown }) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params: params ?? [] });
    const res = await providerFetch(outbound, provider, { url, method: 'POST', body, headers: { 'content-type': 'application/json', accept: 'application/json' }, accept: ['application/json'], signal, maxBytes: 512 * 1024 });
    let answer: RpcAnswer;
    try {
      answer = res.json() as RpcAnswer;
    } catch {
      throw badResponse(provider, 'the JSON-RPC answer is not JSON');
    }
    if (typeof answer !== 'object' || answer === null) throw badResponse(provider, 'the JSON-RPC answer is not an object');
    if (answer.error) throw new RpcAnswerError(typeof answer.error.code === 'number' ? answer.error.code : -32603, String(answer.error.message ?? 'RPC error'), answer.error.data);
    if (!('result' in answer)) throw badResponse(provider, 'the JSON-RPC answer has no result');
    return answer.result;
  };
  return request;
}

/** A serialized unsigned EIP-1559 transfer on Base: what the GasPriceOracle prices for the L1 data fee. */
export async function standardTransferBytes(gasPriceWei: bigint): Promise<Hex> {
  const { serializeTransaction } = await loadViem();
  return serializeTransaction({ type: 'eip1559', chainId: EVM_CHAIN_IDS.base, nonce: 100, to: '0x00000000000000000000000000000000deadbeef', value: 10n ** 15n, gas: TRANSFER_GAS, maxFeePerGas: gasPriceWei * 2n, maxPriorityFeePerGas: gasPriceWei / 10n + 1n });
}

/** Creates the reader of `network` at `rpcUrl`. */
export function createEvmReader(network: EvmNetwork, rpcUrl: string, outbound: OutboundClient): EvmReader {
  const provider = `${network} RPC`;
  // viem actions take no signal: each call gets a client whose transport carries the call's signal.
  const run = async <T>(signal: AbortSignal | undefined, fn: (client: PublicClient) => Promise<T>): Promise<T> => {
    try {
      return await fn(await createClient(provider, rpcUrl, outbound, signal));
    } catch (e) {
      throw unwrap(provider, e);
    }
  };
  const only = (n: EvmNetwork, what: string) => {
    if (network !== n) throw new Error(`${what} is read on ${n}, not ${network}`);
  };
  const resolverOf = async (client: PublicClient, node: Hex): Promise<Address | null> => {
    const r = await client.readContract({ address: ENS_REGISTRY, abi: registryAbi, functionName: 'resolver', args: [node] });
    return r === ZERO ? null : r;
  };
  return {
    network,
    gas: (signal) =>
      run(signal, async (client) => {
        const block = await client.getBlock({ blockTag: 'latest' });
        const gasPriceWei = await client.getGasPrice();
        let l1FeeWei: bigint | null = null;
        if (network === 'base') {
          // A revert or an empty answer means no oracle on this chain (reported as null); a transport fault is the provider's.
          const fee = await unlessReverted(client.readContract({ address: GAS_PRICE_ORACLE, abi: oracleAbi, functionName: 'getL1Fee', args: [await standardTransferBytes(gasPriceWei)], blockNumber: block.number }), null);
          l1FeeWei = fee;
        }
        return { blockNumber: block.number, gasPriceWei, baseFeeWei: block.baseFeePerGas ?? null, l1FeeWei };
      }),
    balances: (address, signal) =>
      run(signal, async (client) => {
        only('base', 'balances');
        const blockNumber = await client.getBlockNumber({ cacheTime: 0 });
        const ethWei = await client.getBalance({ address, blockNumber });
        const usdcAtomic = await client.readContract({ address: USDC_BASE, abi: erc20Abi, functionName: 'balanceOf', args: [address], blockNumber });
        return { blockNumber, ethWei, usdcAtomic };
      }),
    ensForward: (name, signal) =>
      run(signal, async (client) => {
        only('ethereum', 'ENS');
        const node = (await loadViem()).namehash(name);
        const resolver = await resolverOf(client, node);
        if (!resolver) return { resolver: null, address: null, avatar: null };
        const address = await unlessReverted(client.readContract({ address: resolver, abi: resolverAbi, functionName: 'addr', args: [node] }), ZERO);
        const avatar = await unlessReverted(client.readContract({ address: resolver, abi: resolverAbi, functionName: 'text', args: [node, 'avatar'] }), '');
        return { resolver, address: address === ZERO ? null : address, avatar: avatar || null };
      }),
    ensReverse: (address, signal) =>
      run(signal, async (client) => {
        only('ethereum', 'ENS');
        const node = (await loadViem()).namehash(`${address.slice(2).toLowerCase()}.addr.reverse`);
        const resolver = await resolverOf(client, node);
        if (!resolver) return null;
        const name = await unlessReverted(client.readContract({ address: resolver, abi: resolverAbi, functionName: 'name', args: [node] }), '');
        return name || null;
      }),
    // The probe is one eth_chainId call: it needs no viem, so a node's health rounds do not load it.
    probe: async (signal) => {
      let chainId: number;
      try {
        const answer = await rpcRequester(provider, rpcUrl, outbound, signal)({ method: 'eth_chainId' });
        if (typeof answer !== 'string' || !/^0x[0-9a-fA-F]{1,16}$/.test(answer)) throw badResponse(provider, 'eth_chainId did not answer a hex quantity');
        chainId = Number.parseInt(answer, 16);
      } catch (e) {
        throw unwrap(provider, e);
      }
      if (chainId !== EVM_CHAIN_IDS[network]) throw new ServiceError(ProviderCallErrorCode.BAD_RESPONSE, `${provider} serves chain ${chainId}, not ${network} (${EVM_CHAIN_IDS[network]})`);
    },
  };
}

/** The readers of both networks. */
export function createEvmReaders(opts: EvmProviderOptions, outbound: OutboundClient): Record<EvmNetwork, EvmReader> {
  return { base: createEvmReader('base', opts.baseRpcUrl, outbound), ethereum: createEvmReader('ethereum', opts.ethereumRpcUrl, outbound) };
}
