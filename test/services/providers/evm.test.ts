/**
 * The EVM services against two local EVM nodes (anvil from the npm package: chain 8453 as Base,
 * chain 1 as Ethereum) through the real outbound client: gas prices with Base's L1 data fee from
 * a GasPriceOracle at its predeploy address, ETH and USDC balances with a USDC stand-in at the
 * Base USDC address, ENS forward, reverse (verified) and avatar with a registry at the ENS
 * registry address and a resolver, all answering in their real ABI encoding.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { encodeAbiParameters, encodeFunctionData, getAddress, namehash, parseAbi, parseEther, type Address } from 'viem';
import { silentLogger } from '../../../chain/types.js';
import { createDevnetChainParams } from '../../../consensus/devnet.js';
import { createServiceRegistry } from '../../../services/index.js';
import { createOutboundClient } from '../../../services/outbound/client.js';
import { executeService } from '../../../services/execute.js';
import { ENS_REGISTRY, GAS_PRICE_ORACLE, standardTransferBytes, USDC_BASE } from '../../../services/providers/evm.js';
import { ServiceError, type HealthReport, type ServiceContext } from '../../../services/types.js';
import { createReferencePriceSource } from '../../../x402/core/pricing.js';
import { startAnvil, type Anvil } from '../../helpers/anvil.js';
import { startProviderFake, type ProviderFake } from './fakeProviders.js';
import { startFake } from '../outboundFakes.js';

const params = createDevnetChainParams({ genesisBits: 0x207fffff });
const registry = createServiceRegistry();
const HOLDER: Address = getAddress('0x1111111111111111111111111111111111111111');
const ALICE: Address = getAddress('0xa11ce00000000000000000000000000000000a11');
const BOB: Address = getAddress('0xb0b0000000000000000000000000000000000b0b');
const RESOLVER: Address = getAddress('0x4976fb03c32e5b8cfe2b6ccb31c09ba78ebaba41');
const BASE_FEE = 1_000_000_000n; // no blocks are mined: anvil's fees stay put
let gasPrice: bigint; // eth_gasPrice: the base fee plus anvil's suggested tip
const L1_FEE = 123_456_789_012n;

let base: Anvil;
let eth: Anvil;
let fake: ProviderFake;

const erc20 = parseAbi(['function balanceOf(address) view returns (uint256)']);
const ens = parseAbi(['function resolver(bytes32) view returns (address)', 'function addr(bytes32) view returns (address)', 'function name(bytes32) view returns (string)', 'function text(bytes32, string) view returns (string)']);
const oracle = parseAbi(['function getL1Fee(bytes) view returns (uint256)']);
const word = (t: 'address' | 'uint256' | 'string', v: unknown) => encodeAbiParameters([{ type: t }], [v as never]);
const reverseNode = (a: Address) => namehash(`${a.slice(2).toLowerCase()}.addr.reverse`);

beforeAll(async () => {
  [base, eth, fake] = await Promise.all([startAnvil(8453, ['--block-base-fee-per-gas', String(BASE_FEE)]), startAnvil(1, ['--block-base-fee-per-gas', String(BASE_FEE)]), startProviderFake()]);
  // Base: a USDC stand-in at the real address, the gas oracle predeploy, a funded holder.
  await base.plantTable(USDC_BASE);
  await base.teach(USDC_BASE, encodeFunctionData({ abi: erc20, functionName: 'balanceOf', args: [HOLDER] }), word('uint256', 2_500_123_456n));
  await base.rpc('anvil_setBalance', [HOLDER, `0x${parseEther('1.5').toString(16)}`]);
  gasPrice = BigInt(await base.rpc<string>('eth_gasPrice'));
  await base.plantTable(GAS_PRICE_ORACLE);
  await base.teach(GAS_PRICE_ORACLE, encodeFunctionData({ abi: oracle, functionName: 'getL1Fee', args: [await standardTransferBytes(gasPrice)] }), word('uint256', L1_FEE));
  // Ethereum: the ENS registry at its address, one resolver; alice.eth ↔ ALICE (primary), bob.eth → BOB whose reverse claims alice.eth.
  await eth.plantTable(ENS_REGISTRY);
  await eth.plantTable(RESOLVER);
  const teachEns = (fn: 'resolver' | 'addr' | 'name', node: `0x${string}`, type: 'address' | 'string', v: unknown, at: Address) => eth.teach(at, encodeFunctionData({ abi: ens, functionName: fn, args: [node] }), word(type, v));
  for (const node of [namehash('alice.eth'), namehash('bob.eth'), reverseNode(ALICE), reverseNode(BOB)]) await teachEns('resolver', node, 'address', RESOLVER, ENS_REGISTRY);
  await teachEns('addr', namehash('alice.eth'), 'address', ALICE, RESOLVER);
  await teachEns('addr', namehash('bob.eth'), 'address', BOB, RESOLVER);
  await teachEns('name', reverseNode(ALICE), 'string', 'alice.eth', RESOLVER);
  await teachEns('name', reverseNode(BOB), 'string', 'alice.eth', RESOLVER);
  await eth.teach(RESOLVER, encodeFunctionData({ abi: ens, functionName: 'text', args: [namehash('alice.eth'), 'avatar'] }), word('string', 'ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/avatar.png'));
}, 120_000);

afterAll(async () => {
  await Promise.all([base?.stop(), eth?.stop(), fake?.close()]);
});

function contextOf(over: Record<string, string> = {}): ServiceContext {
  return {
    params,
    now: () => Date.UTC(2026, 10, 24, 6),
    log: silentLogger,
    registry,
    nativeUsd: createReferencePriceSource(params),
    signal: new AbortController().signal,
    outbound: createOutboundClient({ timeoutMs: 2000, connectTimeoutMs: 1000 }),
    providers: { coingeckoUrl: `${fake.url}/cg/api/v3`, baseRpcUrl: base.url, ethereumRpcUrl: eth.url, ...over },
  } as unknown as ServiceContext;
}

async function call(id: string, request: string | undefined, ctx = contextOf()): Promise<Record<string, unknown>> {
  const def = registry.get(id)!;
  const v = registry.validateInput(def, request);
  if (!v.ok) throw new Error(`input refused: ${v.error.message}`);
  await def.precheck?.(ctx, v.input);
  return (await executeService(def, ctx, v.input)) as Record<string, unknown>;
}

describe('native-gas-price', () => {
  test('both networks: gwei, base fee, a standard transfer in wei, ETH and USD (Base with its L1 data fee)', async () => {
    const out = await call('native-gas-price', undefined);
    const [b, e] = out.networks as Record<string, unknown>[];
    expect(gasPrice).toBe(2_000_000_000n);
    expect(b).toMatchObject({ network: 'base', chainId: 8453, gasPriceGwei: '2', gasPriceWei: '2000000000', baseFeeGwei: '1' });
    expect(b.standardTransfer).toMatchObject({ gas: 21000, l1DataFeeWei: L1_FEE.toString(), feeWei: (21_000n * gasPrice + L1_FEE).toString(), feeEth: '0.000042123456789012', feeUsd: 0.124446 });
    expect(e).toMatchObject({ network: 'ethereum', chainId: 1, gasPriceGwei: '2' });
    expect(e.standardTransfer).toMatchObject({ l1DataFeeWei: null, feeWei: '42000000000000', feeEth: '0.000042', feeUsd: 0.124081 });
    expect(out.ethUsd).toBe(2954.31);
  });

  test('one network; an unknown network is refused before payment', async () => {
    const out = await call('native-gas-price', 'Ethereum');
    expect((out.networks as unknown[]).length).toBe(1);
    expect(registry.validateInput(registry.get('native-gas-price')!, 'polygon').ok).toBe(false);
  });
});

describe('native-evm-balance', () => {
  test('ETH and USDC (6 decimals, the Base USDC contract) at one block', async () => {
    const out = await call('native-evm-balance', HOLDER.toLowerCase());
    expect(out).toMatchObject({ address: HOLDER, network: 'base', eth: { wei: '1500000000000000000', balance: '1.5' }, usdc: { contract: USDC_BASE, atomic: '2500123456', balance: '2500.123456', decimals: 6 } });
    expect(await call('native-evm-balance', BOB)).toMatchObject({ eth: { balance: '0' }, usdc: { balance: '0' } });
  });

  test('a bad checksum is refused before payment; so is an empty request', async () => {
    expect(registry.validateInput(registry.get('native-evm-balance')!, '0xA11ce00000000000000000000000000000000a11').ok).toBe(false);
    await expect(registry.get('native-evm-balance')!.precheck!(contextOf(), undefined)).rejects.toMatchObject({ code: 'invalid_request', callerFault: true });
  });
});

describe('native-ens-resolve', () => {
  test('forward: address, resolver, avatar (ipfs through a gateway URL), and whether it is the primary name', async () => {
    const out = await call('native-ens-resolve', 'Alice.eth');
    expect(out).toMatchObject({ type: 'forward', name: 'alice.eth', address: ALICE, resolver: RESOLVER, registered: true, isPrimaryName: true });
    expect(out.avatar).toEqual({ record: 'ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/avatar.png', url: 'https://ipfs.io/ipfs/bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/avatar.png', nft: null });
    expect(await call('native-ens-resolve', 'bob.eth')).toMatchObject({ address: BOB, isPrimaryName: false, avatar: null });
  });

  test('an unregistered name resolves to nothing (a real answer, not an error)', async () => {
    expect(await call('native-ens-resolve', 'nobody-here.eth')).toMatchObject({ type: 'forward', address: null, resolver: null, registered: false });
  });

  test('reverse: a primary name counts only when it resolves back', async () => {
    expect(await call('native-ens-resolve', ALICE)).toMatchObject({ type: 'reverse', address: ALICE, name: 'alice.eth', verified: true, avatar: { url: expect.stringContaining('https://ipfs.io/ipfs/') } });
    expect(await call('native-ens-resolve', BOB)).toMatchObject({ type: 'reverse', name: null, reverseRecord: 'alice.eth', verified: false, avatar: null });
    expect(await call('native-ens-resolve', HOLDER)).toMatchObject({ name: null, reverseRecord: null, verified: false });
  });

  test('names ENSIP-15 refuses are refused before payment', () => {
    const def = registry.get('native-ens-resolve')!;
    for (const bad of ['ali ce.eth', 'a..eth', 'xn--bad-.eth', 'alice\u200d.eth']) expect(registry.validateInput(def, bad).ok).toBe(false);
    expect(registry.validateInput(def, 'vitalik.eth').ok).toBe(true);
  });
});

describe('RPC failures', () => {
  test('an RPC error on a resolver read is the provider’s failure, never "no address"', async () => {
    // A JSON-RPC endpoint that answers the registry and then rate-limits the resolver read (-32005).
    const rpc = await startFake((req, res) => {
      let raw = '';
      req.on('data', (d: Buffer) => (raw += d.toString()));
      req.on('end', () => {
        const { id, method, params } = JSON.parse(raw) as { id: number; method: string; params: { to: string }[] };
        const to = method === 'eth_call' ? params[0].to.toLowerCase() : '';
        const body = to === ENS_REGISTRY.toLowerCase() ? { jsonrpc: '2.0', id, result: word('address', RESOLVER) } : { jsonrpc: '2.0', id, error: { code: -32005, message: 'limit exceeded' } };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      });
    }, '127.0.0.1');
    try {
      await expect(executeService(registry.get('native-ens-resolve')!, contextOf({ ethereumRpcUrl: rpc.url }), 'alice.eth')).rejects.toMatchObject({ code: 'provider_error' });
    } finally {
      await rpc.close();
    }
  });

  test('a wrong chain is down; an unreachable RPC is down and a call fails provider_error; a non-JSON-RPC answer is provider_bad_response', async () => {
    const health = (id: string, ctx: ServiceContext) => registry.get(id)!.health!(ctx) as Promise<HealthReport>;
    expect((await health('native-evm-balance', contextOf({ baseRpcUrl: eth.url }))).status).toBe('down');
    expect((await health('native-ens-resolve', contextOf())).status).toBe('active');
    const dead = contextOf({ baseRpcUrl: 'http://127.0.0.1:9' });
    expect((await health('native-evm-balance', dead)).status).toBe('down');
    await expect(registry.get('native-evm-balance')!.precheck!(dead, HOLDER)).rejects.toMatchObject({ code: 'provider_down' });
    await expect(executeService(registry.get('native-evm-balance')!, dead, HOLDER)).rejects.toMatchObject({ code: 'provider_error' });
    const wrong = contextOf({ baseRpcUrl: `${fake.url}/cg/api/v3/ping` });
    await expect(executeService(registry.get('native-evm-balance')!, wrong, HOLDER)).rejects.toBeInstanceOf(ServiceError);
    await expect(executeService(registry.get('native-evm-balance')!, wrong, HOLDER)).rejects.toMatchObject({ code: 'provider_bad_response' });
  });
});
