/**
 * The USDC rail as an attacker tries it across sellers, with real node processes: two devnet
 * nodes with their own ledgers and the same `--usdc-pay-to` and `--base-rpc-url` (as the USDC
 * guide allows), the test facilitator settling on anvil (chain 8453, an EIP-3009 stand-in at the
 * USDC address that emits AuthorizationUsed and Transfer and reverts a used nonce), each node
 * reconciling ambiguous settlements from that anvil.
 *
 *   - one authorization sent to both sellers at once — with a random nonce (what the official
 *     clients sign) or a nonce bound to seller A — buys at most one result; the other seller
 *     refuses with a clear code, also after Base shows the authorization used;
 *   - a stranger holding the Base calldata and a guessed request gets no stored result;
 *   - a definitive /settle refusal is final;
 *   - two sellers started with `--usdc-pay-to-shared`, the losing seller's /settle hanging (the
 *     facilitator never answers a settlement of a used authorization): a random nonce is refused
 *     `authorization_unbound` by both before anything runs, so it never buys two results (without
 *     the flag the loser would reconcile the winner's transfer from Base as its own and deliver to
 *     the payer's proven retry); a nonce bound to one of them buys exactly one.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address, Hex } from 'viem';
import { BASE_USDC } from '../../x402/core/quote.js';
import { commitmentExtension, usdcCommitmentNonce } from '../../x402/usdc/commitment.js';
import { EIP3009_STUB_CODE, startAnvil, useAuthorization, type Anvil } from '../helpers/anvil.js';
import { startTestFacilitator, type TestFacilitator } from '../helpers/facilitator.js';
import { decodeHeader, encodeHeader, NODE_PAY_TO, paymentHeader, referenceViem } from '../helpers/facilitatorPayments.js';
import { startNode, type NodeProc } from '../helpers/nodeProcess.js';

const describeUsdc = referenceViem.ok ? describe : describe.skip;
const USDC = BASE_USDC.asset as Address;
const SERVICE = 'native-world-clock';
const REQUEST = 'Europe/Berlin';
const PRICE_ATOMIC = '1000';

let dir: string;
let anvil: Anvil;
let facilitator: TestFacilitator;
let a: NodeProc;
let b: NodeProc;

async function startSeller(name: string, extra: string[] = []): Promise<NodeProc> {
  return startNode(
    ['--dev', '--data-dir', join(dir, name), '--http-port', '0', '--p2p-port', '0', '--no-mine', '--no-stratum', '--usdc-pay-to', NODE_PAY_TO.toLowerCase(), '--facilitator-url', facilitator.url, '--facilitator-timeout', '1500', '--base-rpc-url', anvil.url, ...extra],
    { cwd: dir },
  );
}

beforeAll(async () => {
  if (!referenceViem.ok) return;
  dir = mkdtempSync(join(tmpdir(), 'native-usdc-sellers-'));
  anvil = await startAnvil(8453);
  await anvil.rpc('anvil_setCode', [USDC, EIP3009_STUB_CODE]);
  // Each /settle waits a little, so two sellers' calls of one authorization both pass /verify first.
  facilitator = await startTestFacilitator({ settleDelayMs: 300, submit: (auth) => useAuthorization(anvil, USDC, auth.from as Address, auth.nonce as Hex, { to: auth.to, value: auth.value }) });
  [a, b] = await Promise.all([startSeller('a'), startSeller('b')]);
}, 120_000);

afterAll(async () => {
  for (const n of [a, b]) {
    n?.child.kill('SIGTERM');
    await n?.exited;
  }
  await facilitator?.stop();
  await anvil?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => facilitator?.reset());

interface Answer {
  status: number;
  body: Record<string, any>;
}

async function call(node: NodeProc, header?: string, request = REQUEST): Promise<Answer> {
  const res = await fetch(`${node.url}/api/x402/${SERVICE}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(header ? { 'x-payment': header } : {}) }, body: JSON.stringify({ request }) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

const sellerOf = async (node: NodeProc): Promise<string> => {
  const quote = await call(node);
  return String(quote.body.accepts.find((o: { scheme: string }) => o.scheme === 'exact').extra.sellerId);
};

/** Keeps asking `node` with `header` for `ms`; every answer (none may be a result) and the last one. */
async function askFor(node: NodeProc, header: string, ms: number): Promise<Answer[]> {
  const answers: Answer[] = [];
  const end = Date.now() + ms;
  while (Date.now() < end) {
    answers.push(await call(node, header));
    await new Promise((r) => setTimeout(r, 500));
  }
  return answers;
}

const paymentId = () => ({ 'payment-identifier': { info: { required: false, id: `pay_${randomBytes(12).toString('hex')}` } } });

describeUsdc('one USDC authorization, two sellers sharing a payee', () => {
  test('the quotes name each seller: extra.sellerId and the commitment scheme', async () => {
    const [sa, sb] = await Promise.all([sellerOf(a), sellerOf(b)]);
    expect(sa).toMatch(/^[0-9a-f]{16}$/);
    expect(sb).toMatch(/^[0-9a-f]{16}$/);
    expect(sa).not.toBe(sb);
    const quote = await call(a);
    expect(quote.body.accepts[1].extra).toEqual({ name: 'USD Coin', version: '2', sellerId: sa, commitment: 'native-x402/usdc-commitment/v1' });
  });

  test('a random nonce (official clients) sent to both at once: one result; the other refuses, and still does once Base shows it used', async () => {
    // The payer is the attacker: it even sends a payment-identifier, to collect a late result.
    const header = encodeHeader({ ...decodeHeader<Record<string, unknown>>(await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC })), extensions: paymentId() });
    const [ra, rb] = await Promise.all([call(a, header), call(b, header)]);
    const results = [ra, rb].filter((r) => r.status === 200);
    expect(results).toHaveLength(1);
    const [winner, loser] = ra.status === 200 ? [a, b] : [b, a];
    const refusal = ra.status === 200 ? rb : ra;
    expect({ status: refusal.status, result: refusal.body.result }).toEqual({ status: 402, result: undefined });
    expect(['duplicate_settlement', 'invalid_exact_evm_transaction_failed', 'invalid_exact_evm_nonce_already_used']).toContain(refusal.body.error.code);
    expect(facilitator.calls.settled).toHaveLength(1);
    // Long enough for the losing seller's reconciler (2 s, then 4 s) to have read Base, had it been sent there.
    const later = await askFor(loser, header, 7_000);
    expect(later.filter((r) => r.status === 200)).toEqual([]);
    expect(later.at(-1)).toMatchObject({ status: 402, body: { error: { code: refusal.body.error.code } } });
    // The winner keeps its answer for its proven payer (the same payment-identifier).
    const again = await call(winner, header);
    expect({ status: again.status, receipt: again.body.receipt }).toEqual({ status: 200, receipt: results[0]!.body.receipt });
  }, 60_000);

  test('a nonce bound to seller A sent to both at once: B refuses wrong_seller before anything runs, A delivers', async () => {
    const salt = randomBytes(32).toString('hex');
    const nonce = usdcCommitmentNonce({ sellerId: await sellerOf(a), serviceId: SERVICE, request: REQUEST, salt }) as Hex;
    const header = encodeHeader({ ...decodeHeader<Record<string, unknown>>(await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, nonce })), extensions: commitmentExtension(salt) });
    const [ra, rb] = await Promise.all([call(a, header), call(b, header)]);
    expect({ status: ra.status, result: ra.body.result }).toEqual({ status: 200, result: expect.objectContaining({ timezone: REQUEST }) });
    expect({ status: rb.status, code: rb.body.error.code, result: rb.body.result }).toEqual({ status: 402, code: 'wrong_seller', result: undefined });
    expect(rb.body.error.message).toMatch(/send it to the node that quoted it/);
    expect({ verify: facilitator.calls.verify, settle: facilitator.calls.settle }).toEqual({ verify: 1, settle: 1 });
    // Without the salt (what Base shows), B still refuses: the nonce names A.
    const bare = encodeHeader(decodeHeader<Record<string, unknown>>(header) && { ...decodeHeader<Record<string, unknown>>(header), extensions: undefined });
    expect((await call(b, bare)).body.error.code).toBe('wrong_seller');
  }, 30_000);
});

describeUsdc('a stranger with the Base calldata', () => {
  /** The first call of `header` at A: the facilitator submits the transfer and never answers (504 settlement_pending). */
  async function payAmbiguously(header: string): Promise<void> {
    facilitator.modes.settle = 'hangAfterSubmit';
    const first = await call(a, header);
    expect({ status: first.status, code: first.body.error.code }).toEqual({ status: 504, code: 'settlement_pending' });
  }

  /** Asks A with `header` until `done` says so (bounded): every answer. */
  async function askUntil(header: string, done: (r: Answer) => boolean): Promise<Answer[]> {
    const answers: Answer[] = [];
    for (let i = 0; i < 30; i++) {
      answers.push(await call(a, header));
      if (done(answers.at(-1)!)) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    return answers;
  }

  test('gets no reconciled result of an official client\'s payment with a guessed request', async () => {
    // What the payer sent: an official client's payment (random nonce, no payment-identifier).
    // The stranger rebuilds the very same header from the calldata on Base and guesses the request.
    const header = await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC });
    await payAmbiguously(header);
    expect(facilitator.calls.settled).toHaveLength(1);
    const answers = await askUntil(header, (r) => r.status === 200 || r.body.error?.code === 'payment_already_used');
    expect(answers.filter((r) => r.status === 200).map((r) => r.body.result)).toEqual([]);
    expect(answers.at(-1)).toMatchObject({ status: 409, body: { error: { code: 'payment_already_used' } } });
    expect(answers.at(-1)!.body.error.message).toMatch(/proven payer/);
  }, 60_000);

  test('gets nothing of a bound payment either (commitment_mismatch); its payer gets the result with its salt', async () => {
    const salt = randomBytes(32).toString('hex');
    const nonce = usdcCommitmentNonce({ sellerId: await sellerOf(a), serviceId: SERVICE, request: REQUEST, salt }) as Hex;
    const signed = decodeHeader<Record<string, unknown>>(await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, nonce }));
    const header = encodeHeader({ ...signed, extensions: commitmentExtension(salt) });
    await payAmbiguously(header);
    const payer = await askUntil(header, (r) => r.status === 200);
    expect({ status: payer.at(-1)!.status, result: payer.at(-1)!.body.result }).toEqual({ status: 200, result: expect.objectContaining({ timezone: REQUEST }) });
    expect(payer.at(-1)!.body.receipt.txId).toBe(facilitator.calls.settled.find((x) => x.nonce === nonce)!.transaction);
    const stranger = await call(a, encodeHeader(signed));
    expect({ status: stranger.status, code: stranger.body.error.code, result: stranger.body.result }).toEqual({ status: 402, code: 'commitment_mismatch', result: undefined });
  }, 60_000);
});

describeUsdc('a definitive /settle refusal', () => {
  test('is final: 402 with its reason, nothing kept pending, the same answer later', async () => {
    facilitator.modes.settle = { reject: 'invalid_exact_evm_nonce_already_used' };
    const header = await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC });
    const first = await call(b, header);
    expect({ status: first.status, code: first.body.error.code, result: first.body.result }).toEqual({ status: 402, code: 'invalid_exact_evm_nonce_already_used', result: undefined });
    const status = (await (await fetch(`${b.url}/api/v1/status`)).json()) as { payments: { usdc: Record<string, number> } };
    expect(status.payments.usdc.settlePending).toBe(0);
    const again = await call(b, header);
    expect({ status: again.status, code: again.body.error.code }).toEqual({ status: 402, code: 'invalid_exact_evm_nonce_already_used' });
  }, 30_000);
});

describeUsdc('two sellers sharing a payTo, started with --usdc-pay-to-shared, the losing /settle hanging', () => {
  let c: NodeProc;
  let d: NodeProc;
  beforeAll(async () => {
    [c, d] = await Promise.all([startSeller('c', ['--usdc-pay-to-shared']), startSeller('d', ['--usdc-pay-to-shared'])]);
  }, 120_000);
  afterAll(async () => {
    for (const n of [c, d]) {
      n?.child.kill('SIGTERM');
      await n?.exited;
    }
  });

  test('a random nonce sent to both at once never buys two results: both refuse it authorization_unbound before anything runs', async () => {
    // A settlement of a used authorization is never answered: the loser of the race would see a timeout (ambiguous), not a refusal.
    facilitator.modes.settle = 'hangIfUsed';
    // The payer wants two results: it sends a payment-identifier to prove itself on every retry.
    const header = encodeHeader({ ...decodeHeader<Record<string, unknown>>(await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC })), extensions: paymentId() });
    const first = await Promise.all([call(c, header), call(d, header)]);
    // Long enough for a loser's reconciler (2 s, then 4 s) to have found the winner's transfer on Base, had either settled.
    const later = await Promise.all([askFor(c, header, 7_000), askFor(d, header, 7_000)]);
    // The sellers that handed out a result (the same seller answering a proven retry again is one result).
    const delivered = ['c', 'd'].filter((_, i) => [first[i]!, ...later[i]!].some((r) => r.status === 200));
    expect(delivered.length).toBeLessThanOrEqual(1);
    expect(delivered).toEqual([]);
    for (const r of first) expect({ status: r.status, code: r.body.error?.code, result: r.body.result }).toEqual({ status: 402, code: 'authorization_unbound', result: undefined });
    expect(first[0]!.body.error.message).toMatch(/bound to it/);
    expect({ verify: facilitator.calls.verify, settle: facilitator.calls.settle, settled: facilitator.calls.settled }).toEqual({ verify: 0, settle: 0, settled: [] });
  }, 60_000);

  test('a nonce bound to C sent to both: C delivers once, D refuses wrong_seller; the payer gets it again with its salt', async () => {
    facilitator.modes.settle = 'hangIfUsed';
    const salt = randomBytes(32).toString('hex');
    const nonce = usdcCommitmentNonce({ sellerId: await sellerOf(c), serviceId: SERVICE, request: REQUEST, salt }) as Hex;
    const header = encodeHeader({ ...decodeHeader<Record<string, unknown>>(await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, nonce })), extensions: commitmentExtension(salt) });
    const [rc, rd] = await Promise.all([call(c, header), call(d, header)]);
    expect({ status: rc.status, result: rc.body.result }).toEqual({ status: 200, result: expect.objectContaining({ timezone: REQUEST }) });
    expect({ status: rd.status, code: rd.body.error.code }).toEqual({ status: 402, code: 'wrong_seller' });
    expect(facilitator.calls.settled).toHaveLength(1);
    const again = await call(c, header);
    expect({ status: again.status, receipt: again.body.receipt }).toEqual({ status: 200, receipt: rc.body.receipt });
  }, 30_000);
});
