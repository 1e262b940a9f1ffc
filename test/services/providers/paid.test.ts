/**
 * Paid calls of the provider-backed services end to end through the real HTTP app (koa app of
 * node/http.ts with the x402 routes, on 127.0.0.1 port 0) over a real chain, mempool, ledger,
 * refunds and native settlement (the shared test/services/paidHarness.ts): quote, agent_invoke,
 * block, settle, result. One service per
 * provider family (Open-Meteo, ECB, CoinGecko, an EVM RPC on anvil, OpenAI-compatible chat,
 * LibreTranslate, OpenAI-compatible images and Automatic1111); an unconfigured provider answers
 * 503 with no quote; a provider failing after payment is refunded on-chain exactly once.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { encodeAbiParameters, encodeFunctionData, parseAbi } from 'viem';
import { getDevKeyPair } from '../../../consensus/devnet.js';
import { fromHex } from '../../../consensus/hash.js';
import { createAgentInvokeTx } from '../../../consensus/txBuilder.js';
import { USDC_BASE } from '../../../services/providers/evm.js';
import { requestCommitment } from '../../../x402/core/wire.js';
import { readPngInfo } from '../../../services/providers/png.js';
import { startAnvil, type Anvil } from '../../helpers/anvil.js';
import { testKey } from '../../helpers/keys.js';
import { mineFromPool } from '../../helpers/mine.js';
import { cleanupTmp } from '../../helpers/tmp.js';
import { tableResolver } from '../outboundFakes.js';
import { startPaidHarness, type PaidHarness } from '../paidHarness.js';
import { startProviderFake, type ProviderFake } from './fakeProviders.js';

const HOLDER = '0x1111111111111111111111111111111111111111';

let fake: ProviderFake;
let anvil: Anvil;
let h: PaidHarness;

/** Points every provider at the fake (Base at anvil), replacing what the harness's settings held. */
function configure(over: Record<string, string> = {}): void {
  for (const k of Object.keys(h.providers)) delete h.providers[k];
  Object.assign(h.providers, fake.settings({ baseRpcUrl: anvil.url, ...over }));
}

beforeAll(async () => {
  [fake, anvil] = await Promise.all([startProviderFake(), startAnvil(8453)]);
  await anvil.plantTable(USDC_BASE);
  await anvil.teach(USDC_BASE, encodeFunctionData({ abi: parseAbi(['function balanceOf(address) view returns (uint256)']), functionName: 'balanceOf', args: [HOLDER] }), encodeAbiParameters([{ type: 'uint256' }], [42_000_000n]));
  // Providers are reached by IP literal (127.0.0.1): the resolver is never asked.
  h = await startPaidHarness({ resolver: tableResolver({}) });
  configure();
}, 120_000);

afterAll(async () => {
  await h?.close();
  await Promise.all([fake?.close(), anvil?.stop()]);
  await cleanupTmp();
});

const post = (serviceId: string, body: Record<string, unknown>) => h.post(`/api/x402/${serviceId}`, body);

/**
 * Pays the harness's payee `amount` for `serviceId` with a mined agent_invoke committed to this
 * node's seller id, `request` and a salt, without asking for a quote; its tx id and salt.
 */
async function payWithoutQuote(serviceId: string, request: string, amount: bigint, nonce: bigint): Promise<{ txId: string; salt: string }> {
  const salt = '5a'.repeat(32);
  const requestHash = fromHex(requestCommitment({ sellerId: h.ledger.sellerId, serviceId, request, salt }));
  const built = createAgentInvokeTx({ key: getDevKeyPair(), chainId: h.context.params.chainId, serviceId, payTo: testKey('payee').address, amount, requestHash, nonce, includeKey: false, fee: 30_000n });
  await h.pool.add(built.bytes);
  await mineFromPool(h.chain, h.pool, testKey('miner').address);
  return { txId: built.id, salt };
}

describe('paid calls over HTTP, one per provider family', () => {
  test('native-weather (Open-Meteo)', async () => {
    const r = await h.paidCall('native-weather', 'Berlin');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ paid: true, result: { location: { name: 'Berlin' }, current: { conditions: 'overcast' } }, receipt: { serviceId: 'native-weather', txId: r.txId } });
  });

  test('native-fx-rates (ECB)', async () => {
    const r = await h.paidCall('native-fx-rates', '100 USD to EUR');
    expect(r.body).toMatchObject({ paid: true, result: { result: '86.490227', date: '2026-11-23' } });
  });

  test('native-crypto-price (CoinGecko)', async () => {
    const r = await h.paidCall('native-crypto-price', 'SOL');
    expect(r.body).toMatchObject({ paid: true, result: { symbol: 'SOL', usd: 139.77 } });
  });

  test('native-evm-balance (EVM RPC)', async () => {
    const r = await h.paidCall('native-evm-balance', HOLDER);
    expect(r.body).toMatchObject({ paid: true, result: { usdc: { balance: '42' }, eth: { balance: '0' } } });
  });

  test('native-llm-chat (OpenAI-compatible chat)', async () => {
    const r = await h.paidCall('native-llm-chat', 'Hello there');
    expect(r.body).toMatchObject({ paid: true, result: { text: 'Echo: Hello there', model: 'test-model' } });
  });

  test('native-translate (LibreTranslate)', async () => {
    const r = await h.paidCall('native-translate', 'fr|Good evening');
    expect(r.body).toMatchObject({ paid: true, result: { target: 'fr', translation: 'fr: Good evening' } });
  });

  test('native-image-gen (OpenAI-compatible images, then Automatic1111)', async () => {
    const r = await h.paidCall('native-image-gen', 'a lighthouse at dusk');
    expect(r.status).toBe(200);
    const img = Buffer.from((r.body.result as { image: string }).image, 'base64');
    expect(readPngInfo(img)).toMatchObject({ width: 1024, height: 1024 });
    configure({ imageProvider: 'a1111', imageUrl: `${fake.url}/a1111`, imageModel: '' });
    const a = await h.paidCall('native-image-gen', 'a lighthouse at dawn');
    expect(a.body).toMatchObject({ paid: true, result: { provider: 'a1111', width: 1024, height: 1024 } });
  });
});

describe('unconfigured and failing providers', () => {
  test('no provider configured: 503 service_unavailable and no quote', async () => {
    configure({ llmUrl: '', translateProvider: 'openai', translateUrl: '' });
    for (const id of ['native-llm-chat', 'native-translate']) {
      const r = await post(id, { request: id === 'native-translate' ? 'de|Hi' : 'Hi' });
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ error: { code: 'service_unavailable' } });
      expect(r.body.accepts).toBeUndefined();
    }
    configure();
  });

  test('bad input: 400 before any quote', async () => {
    const r = await post('native-fx-rates', { request: '100 XYZ to EUR' });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: { code: 'invalid_request' } });
  });

  test('a provider failing after payment: 502, refunded on-chain exactly once; the service is down until the provider answers again', async () => {
    // The LLM's last call succeeded, so the quote is given; the provider then fails the paid run.
    fake.set('oai', 'error');
    const before = await h.agentBalance();
    const r = await h.paidCall('native-llm-chat', 'Will this fail?');
    expect(r.status).toBe(502);
    expect(r.body).toMatchObject({ paid: true, refunded: true, error: { code: 'provider_error' } });
    expect(h.pool.has(r.body.refundTxId as string)).toBe(true);
    expect(h.pool.count).toBe(1);
    // The same settle again: the stored answer, no second refund.
    const again = await post('native-llm-chat', { request: 'Will this fail?', payment: { txId: r.txId, salt: r.salt } });
    expect(again.body).toEqual(r.body);
    expect(h.pool.count).toBe(1);
    await h.mine();
    expect((await h.ledger.get(r.txId))?.status).toBe('refunded');
    const invoke = (await h.chain.getTx(r.txId))!;
    expect(await h.agentBalance()).toBe(before - invoke.tx.fee);
    // The failure made the service down: the next call is refused before any quote…
    const next = await post('native-llm-chat', { request: 'and now?' });
    expect(next.status).toBe(503);
    // …but a payment already on chain is never refused with a 503 that keeps it: it runs, fails, and is refunded.
    const price = h.context.registry.get('native-llm-chat')!.priceBase;
    const late = await payWithoutQuote('native-llm-chat', 'paid before it went down', price, (await h.chain.getAccount(getDevKeyPair().address)).nonce);
    const lateAnswer = await post('native-llm-chat', { request: 'paid before it went down', payment: late });
    expect(lateAnswer.status).toBe(502);
    expect(lateAnswer.body).toMatchObject({ paid: true, refunded: true, error: { code: 'provider_error' } });
    expect(h.pool.count).toBe(1);
    await h.mine();
    expect((await h.ledger.get(late.txId))?.status).toBe('refunded');
    fake.set('oai', 'ok');
  });
});
