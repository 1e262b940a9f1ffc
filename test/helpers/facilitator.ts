/**
 * A test x402 facilitator on 127.0.0.1 speaking the facilitator HTTP API (`POST /verify`,
 * `POST /settle`, `GET /supported`) for `exact` EIP-3009 payments on Base, x402 v1 and v2.
 * It checks what a real one checks, independently of the node's code: the EIP-712 signature
 * (viem), payee, exact amount, validity window, nonce not used before, the payer's balance; a
 * settlement returns a fresh transaction hash.
 *
 * It can be told to refuse, fail or hang (`POST /_test/mode`), and reports the calls it got
 * (`GET /_test/calls`). Runs in-process (`startTestFacilitator`) or as its own process
 * (`startFacilitatorProcess`, entry `facilitatorMain.ts`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { childEnv, ROOT } from './nodeProcess.js';
import { EIP3009_TYPES, requireViem } from './facilitatorPayments.js';

type Hex = `0x${string}`;

/**
 * How the facilitator answers one endpoint. `hangIfUsed` (`/settle`): as `ok`, but a settlement of
 * an authorization already used (a duplicate, or reverted on chain) is never answered — the
 * losing seller of a race sees a timeout, not a refusal.
 */
export type FacilitatorMode = 'ok' | 'hang' | 'error500' | 'garbage' | { readonly reject: string } | 'hangAfterSubmit' | 'failAfterSubmit' | 'hangIfUsed';

/** The modes of both endpoints. */
export interface FacilitatorModes {
  verify: FacilitatorMode;
  settle: FacilitatorMode;
}

/** What the facilitator saw. */
export interface FacilitatorCalls {
  verify: number;
  settle: number;
  supported: number;
  /** Successful settlements: payer, nonce, value, transaction. */
  settled: { payer: string; nonce: string; value: string; transaction: string }[];
  /** Bodies of the last /verify and /settle requests. */
  lastVerify?: unknown;
  lastSettle?: unknown;
  /** Requests without the expected auth header. */
  unauthorized: number;
  /** Its own handling time of each answered /verify and /settle, ms (body read to answer sent; benchmarks read it). */
  handledMs: { verify: number[]; settle: number[] };
}

/** Options of the test facilitator. */
export interface TestFacilitatorOptions {
  /** Header every API request must carry (`[name, value]`), else 401. */
  readonly auth?: readonly [string, string];
  /** USDC atomic balance of every payer (default: plenty). */
  readonly balance?: bigint;
  /**
   * Submits a settlement on a chain (e.g. anvil) and returns its transaction hash; without it a
   * settlement's hash is random. `/settle` modes `hangAfterSubmit` (submits, never answers) and
   * `failAfterSubmit` (submits, answers `success: false`) need it.
   */
  readonly submit?: (auth: { from: string; to: string; nonce: string; value: string }) => Promise<string>;
  /** Pause before each /settle is handled, ms (lets two sellers' calls of one authorization both pass /verify first). */
  readonly settleDelayMs?: number;
}


interface Auth {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}

/** Normalised view of a /verify or /settle body of either version. */
interface Normalised {
  network: string;
  scheme: string;
  amount: string;
  payTo: string;
  asset: string;
  name: string;
  version: string;
  auth: Auth;
  signature: string;
}

function normalise(body: Record<string, unknown>): Normalised | string {
  const payment = body.paymentPayload as Record<string, unknown> | undefined;
  const req = body.paymentRequirements as Record<string, unknown> | undefined;
  if (!payment || !req) return 'invalid_payload';
  const inner = payment.payload as { signature?: string; authorization?: Auth } | undefined;
  if (!inner?.authorization || typeof inner.signature !== 'string') return 'invalid_payload';
  const v2 = body.x402Version === 2;
  const extra = (req.extra ?? {}) as { name?: string; version?: string };
  return {
    network: String(v2 ? (payment.accepted as { network?: string } | undefined)?.network : payment.network),
    scheme: String(v2 ? (payment.accepted as { scheme?: string } | undefined)?.scheme : payment.scheme),
    amount: String(v2 ? req.amount : req.maxAmountRequired),
    payTo: String(req.payTo),
    asset: String(req.asset),
    name: String(extra.name),
    version: String(extra.version),
    auth: inner.authorization,
    signature: inner.signature,
  };
}

/** The in-process facilitator. */
export class TestFacilitator {
  readonly modes: FacilitatorModes = { verify: 'ok', settle: 'ok' };
  readonly calls: FacilitatorCalls = { verify: 0, settle: 0, supported: 0, settled: [], unauthorized: 0, handledMs: { verify: [], settle: [] } };
  private readonly usedNonces = new Set<string>();
  private server?: Server;
  private boundUrl?: string;

  constructor(private readonly opts: TestFacilitatorOptions = {}) {}

  get url(): string {
    if (!this.boundUrl) throw new Error('facilitator not listening');
    return this.boundUrl;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.boundUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((r) => server.close(() => r()));
    server.closeAllConnections();
    await closed;
  }

  reset(): void {
    this.modes.verify = 'ok';
    this.modes.settle = 'ok';
    Object.assign(this.calls, { verify: 0, settle: 0, supported: 0, settled: [], unauthorized: 0, lastVerify: undefined, lastSettle: undefined, handledMs: { verify: [], settle: [] } });
  }

  /** The x402 checks of an `exact` EIP-3009 payment; undefined when valid, else the reason. */
  async check(body: Record<string, unknown>): Promise<{ reason?: string; payer?: string }> {
    const n = normalise(body);
    if (typeof n === 'string') return { reason: n };
    const payer = n.auth.from;
    if (n.scheme !== 'exact') return { reason: 'unsupported_scheme', payer };
    if (n.network !== 'base' && n.network !== 'eip155:8453') return { reason: 'invalid_network', payer };
    let valid = false;
    try {
      valid = await requireViem().verifyTypedData({
        address: n.auth.from as Hex,
        domain: { name: n.name, version: n.version, chainId: 8453, verifyingContract: n.asset as Hex },
        types: EIP3009_TYPES,
        primaryType: 'TransferWithAuthorization',
        message: { from: n.auth.from as Hex, to: n.auth.to as Hex, value: BigInt(n.auth.value), validAfter: BigInt(n.auth.validAfter), validBefore: BigInt(n.auth.validBefore), nonce: n.auth.nonce as Hex },
        signature: n.signature as Hex,
      });
    } catch {
      valid = false;
    }
    if (!valid) return { reason: 'invalid_exact_evm_payload_signature', payer };
    if (!requireViem().isAddressEqual(n.auth.to as Hex, n.payTo as Hex)) return { reason: 'invalid_exact_evm_payload_recipient_mismatch', payer };
    const now = Math.floor(Date.now() / 1000);
    if (BigInt(n.auth.validBefore) < BigInt(now + 6)) return { reason: 'invalid_exact_evm_payload_authorization_valid_before', payer };
    if (BigInt(n.auth.validAfter) > BigInt(now)) return { reason: 'invalid_exact_evm_payload_authorization_valid_after', payer };
    if (BigInt(n.auth.value) !== BigInt(n.amount)) return { reason: 'invalid_exact_evm_payload_authorization_value', payer };
    if ((this.opts.balance ?? 10n ** 12n) < BigInt(n.amount)) return { reason: 'insufficient_funds', payer };
    if (this.usedNonces.has(`${n.auth.from}:${n.auth.nonce}`.toLowerCase())) return { reason: 'duplicate_settlement', payer };
    return { payer };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const path = (req.url ?? '/').split('?')[0];
    const t0 = performance.now();
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
      if (path === '/verify' || path === '/settle') this.calls.handledMs[path === '/verify' ? 'verify' : 'settle'].push(performance.now() - t0);
    };
    try {
      if (path === '/_test/mode' && req.method === 'POST') {
        Object.assign(this.modes, JSON.parse(text) as Partial<FacilitatorModes>);
        return send(200, this.modes);
      }
      if (path === '/_test/calls' && req.method === 'GET') return send(200, this.calls);
      if (path === '/_test/reset' && req.method === 'POST') {
        this.reset();
        return send(200, {});
      }
      if (this.opts.auth && req.headers[this.opts.auth[0].toLowerCase()] !== this.opts.auth[1]) {
        this.calls.unauthorized++;
        return send(401, { error: 'unauthorized' });
      }
      if (path === '/supported' && req.method === 'GET') {
        this.calls.supported++;
        return send(200, { kinds: [{ x402Version: 1, scheme: 'exact', network: 'base' }, { x402Version: 2, scheme: 'exact', network: 'eip155:8453' }] });
      }
      if ((path === '/verify' || path === '/settle') && req.method === 'POST') {
        const endpoint = path === '/verify' ? 'verify' : 'settle';
        const body = JSON.parse(text) as Record<string, unknown>;
        if (endpoint === 'settle' && this.opts.settleDelayMs) await new Promise((r) => setTimeout(r, this.opts.settleDelayMs));
        this.calls[endpoint]++;
        if (endpoint === 'verify') this.calls.lastVerify = body;
        else this.calls.lastSettle = body;
        const mode = this.modes[endpoint];
        if (mode === 'hang') return; // never answers; stop() closes the socket
        if (mode === 'error500') return send(500, { error: 'internal' });
        if (mode === 'garbage') return send(200, '<html>not json</html>');
        if ((mode === 'hangAfterSubmit' || mode === 'failAfterSubmit') && endpoint === 'settle') {
          const checked = await this.check(body);
          if (checked.reason) return send(200, { success: false, errorReason: checked.reason, transaction: '', network: 'base', payer: checked.payer });
          const n = normalise(body) as Normalised;
          this.usedNonces.add(`${n.auth.from}:${n.auth.nonce}`.toLowerCase());
          if (!this.opts.submit) throw new Error(`mode ${mode} needs the submit option`);
          const transaction = await this.opts.submit(n.auth);
          this.calls.settled.push({ payer: requireViem().getAddress(n.auth.from), nonce: n.auth.nonce, value: n.auth.value, transaction });
          if (mode === 'hangAfterSubmit') return; // submitted, never answers
          return send(200, { success: false, errorReason: 'unexpected_settle_error', transaction: '', network: n.network, payer: n.auth.from });
        }
        const network = String((body.paymentPayload as { network?: string; accepted?: { network?: string } } | undefined)?.network ?? (body.paymentPayload as { accepted?: { network?: string } } | undefined)?.accepted?.network ?? 'base');
        const checked = typeof mode === 'object' ? { reason: mode.reject, payer: undefined } : await this.check(body);
        if (endpoint === 'verify') return send(200, checked.reason ? { isValid: false, invalidReason: checked.reason, payer: checked.payer } : { isValid: true, payer: checked.payer });
        if (checked.reason === 'duplicate_settlement' && mode === 'hangIfUsed') return; // used already: never answers
        if (checked.reason) return send(200, { success: false, errorReason: checked.reason, transaction: '', network, payer: checked.payer });
        const n = normalise(body) as Normalised;
        this.usedNonces.add(`${n.auth.from}:${n.auth.nonce}`.toLowerCase());
        const { keccak256, getAddress } = requireViem();
        let transaction: string;
        try {
          transaction = this.opts.submit ? await this.opts.submit(n.auth) : keccak256(randomBytes(32));
        } catch (e) {
          // Reverted on chain (e.g. the nonce used meanwhile by another settlement): the reference's answer, with the reverted tx.
          const reverted = (e as { txHash?: unknown }).txHash;
          if (typeof reverted !== 'string') throw e;
          if (mode === 'hangIfUsed') return; // the nonce was used meanwhile: never answers
          return send(200, { success: false, errorReason: 'invalid_exact_evm_transaction_failed', transaction: reverted, network, payer: getAddress(n.auth.from) });
        }
        this.calls.settled.push({ payer: getAddress(n.auth.from), nonce: n.auth.nonce, value: n.auth.value, transaction });
        return send(200, { success: true, transaction, network, payer: getAddress(n.auth.from) });
      }
      send(404, { error: 'not found' });
    } catch (e) {
      send(400, { error: (e as Error).message });
    }
  }
}

/** Starts an in-process test facilitator on 127.0.0.1 (port 0). */
export async function startTestFacilitator(opts: TestFacilitatorOptions = {}): Promise<TestFacilitator> {
  const f = new TestFacilitator(opts);
  await f.start();
  return f;
}

/** Talks to a facilitator (in-process or child) through its `/_test` endpoints. */
export class FacilitatorControl {
  constructor(readonly url: string) {}
  async setMode(modes: Partial<FacilitatorModes>): Promise<void> {
    await fetch(`${this.url}/_test/mode`, { method: 'POST', body: JSON.stringify(modes) });
  }
  async calls(): Promise<FacilitatorCalls> {
    return (await (await fetch(`${this.url}/_test/calls`)).json()) as FacilitatorCalls;
  }
  async reset(): Promise<void> {
    await fetch(`${this.url}/_test/reset`, { method: 'POST' });
  }
}

/** A facilitator running as its own process. */
export interface FacilitatorProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly control: FacilitatorControl;
  stop(): Promise<void>;
}

/** Starts `facilitatorMain.ts` as a child process and waits (bounded) for its URL. */
export function startFacilitatorProcess(opts: { auth?: readonly [string, string]; timeoutMs?: number } = {}): Promise<FacilitatorProcess> {
  const args = ['--import', 'tsx', join(ROOT, 'test', 'helpers', 'facilitatorMain.ts')];
  const env: Record<string, string> = opts.auth ? { FACILITATOR_AUTH: `${opts.auth[0]}: ${opts.auth[1]}` } : {};
  const child = spawn(process.execPath, args, { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const timeoutMs = opts.timeoutMs ?? 20_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`facilitator did not start within ${timeoutMs} ms: ${stderr}`));
    }, timeoutMs);
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      const url = String((JSON.parse(buf.slice(0, nl)) as { url: string }).url);
      resolve({
        child,
        url,
        control: new FacilitatorControl(url),
        async stop() {
          child.kill('SIGTERM');
          await exited;
        },
      });
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`facilitator exited before listening: ${stderr}`));
    });
  });
}
