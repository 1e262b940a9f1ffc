/**
 * The provider agents' commands of `native-node`:
 *
 *   agent register <name> --description <text> [--capabilities a,b] [--payout <addr>] [--contact <c>] [--wait]
 *   agent update <name> …same flags…
 *   agent show [--name <name or address>]
 *   agent serve --service <id> (--exec "<command>" | --forward http://127.0.0.1:PORT/path)
 *   service register <id> --name <n> --description <d> --category <c> --price <NATIVE> [--tags a,b]
 *       [--request-format <text>] [--request-required] [--json-input] [--schema <JSON or @file>] [--timeout <s>] [--wait]
 *   service update <id> …same flags…   service retire <id>   service list
 *   moderate approve|suspend|reject <serviceId> [--reason <text>]   moderate label <address> <label> [--reason <text>]
 *
 * Transactions are signed with the wallet (on the devnet the dev wallet, which is also the
 * devnet's moderator). `agent serve` long-polls the node's inbox with signed requests, runs each
 * job (the request on the command's stdin, its stdout the result, a non-zero exit a failure; or
 * a POST of `{request, input}` to the local URL, its JSON answer the result) and posts the answer,
 * reconnecting forever with a bounded back-off.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { NodeError } from '../consensus/errors.js';
import { formatAmount, parsePositiveAmount } from '../consensus/amount.js';
import { tryDecodeAddress } from '../consensus/address.js';
import { createAgentTx, createModerationTx, createServiceRetireTx, createServiceTx } from '../consensus/registryTxBuilder.js';
import type { BuiltTx, EnvelopeOptions } from '../consensus/txBuilder.js';
import type { HybridKeyPair } from '../consensus/keys.js';
import { checkInputSchema } from '../consensus/txTypes/agents.js';
import { signInboxRequest } from '../x402/providers/inboxAuth.js';
import type { NodeClient, StatusResponse } from '../node/client.js';
import type { OpenedWallet } from '../node/wallet.js';

/** Error codes of these commands. */
export const AgentCliErrorCode = {
  USAGE: 'cli_usage',
  NOT_FOUND: 'not_found',
} as const;

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** What the agent commands get from the command line's core (cli/cli.ts). */
export interface AgentCliContext {
  readonly out: { readonly json: boolean; print(human: string, data: unknown): void };
  readonly client: NodeClient;
  readonly values: Values;
  readonly positionals: readonly string[];
  status(): Promise<StatusResponse & { network: string }>;
  wallet(): Promise<OpenedWallet>;
  waitMined(txId: string): Promise<{ height: number | null; blockHash: string | null }>;
  readonly env: Record<string, string | undefined>;
}

type Flag = { readonly type: 'string' | 'boolean' };
const STRING = { type: 'string' } as const;
const BOOLEAN = { type: 'boolean' } as const;
/** The flags of every command that submits a transaction. */
const SUBMIT: Readonly<Record<string, Flag>> = { wait: BOOLEAN, timeout: STRING };
const AGENT_FIELDS = { ...SUBMIT, description: STRING, capabilities: STRING, payout: STRING, contact: STRING };
const SERVICE_FIELDS = { ...SUBMIT, name: STRING, description: STRING, category: STRING, price: STRING, tags: STRING, 'request-format': STRING, 'request-required': BOOLEAN, 'json-input': BOOLEAN, schema: STRING, 'job-timeout': STRING };
const MODERATION = { ...SUBMIT, reason: STRING };

/**
 * The flags of each agent, service and moderate subcommand beyond the common ones (parseArgs
 * options): its parser reads its own table, and its --help lists that table. `common` is the
 * subset of the common flags it takes when not all (those that list what is on chain sign nothing).
 */
export const AGENT_CLI_TABLES: Readonly<Record<string, { readonly flags: Readonly<Record<string, Flag>>; readonly common?: 'node-read' }>> = {
  'agent register': { flags: AGENT_FIELDS },
  'agent update': { flags: AGENT_FIELDS },
  'agent show': { flags: { name: STRING } },
  'agent serve': { flags: { service: STRING, exec: STRING, forward: STRING } },
  'service register': { flags: SERVICE_FIELDS },
  'service update': { flags: SERVICE_FIELDS },
  'service retire': { flags: SUBMIT },
  'service list': { flags: {}, common: 'node-read' },
  'moderate approve': { flags: MODERATION },
  'moderate suspend': { flags: MODERATION },
  'moderate reject': { flags: MODERATION },
  'moderate label': { flags: MODERATION },
};

/** How many positionals each subcommand takes. */
export function agentCliPositionals(group: string, sub: string | undefined): number {
  if (group === 'agent') return sub === 'register' || sub === 'update' ? 1 : 0;
  if (group === 'service') return sub === 'list' ? 0 : 1;
  return sub === 'label' ? 2 : 1;
}

const usage = (m: string) => new NodeError(AgentCliErrorCode.USAGE, m);
const str = (v: Values, k: string): string | undefined => (typeof v[k] === 'string' ? (v[k] as string) : undefined);
const list = (v: Values, k: string): string[] => (str(v, k) ?? '').split(',').map((x) => x.trim()).filter(Boolean);

async function submit(ctx: AgentCliContext, build: (o: EnvelopeOptions) => BuiltTx, summary: Record<string, unknown>): Promise<number> {
  const status = await ctx.status();
  const w = await ctx.wallet();
  const acc = await ctx.client.account(w.address);
  const built = build({ key: w.keyPair, chainId: status.chainId, nonce: BigInt(acc.pendingNonce), includeKey: !acc.publicKeyKnown, feeRate: BigInt(status.minFeeRate ?? '1') });
  const res = await ctx.client.submitTx(Buffer.from(built.bytes).toString('hex'));
  const data: Record<string, unknown> = { ...summary, txId: res.txId, from: w.address, fee: formatAmount(built.tx.fee), status: 'pending' };
  if (ctx.values.wait) {
    const mined = await ctx.waitMined(res.txId);
    Object.assign(data, { status: 'mined', height: mined.height, blockHash: mined.blockHash });
  }
  ctx.out.print(`${res.txId}${data.status === 'mined' ? ` mined in block ${String(data.height)}` : ' submitted (mined in about 3 s; add --wait to wait)'}`, data);
  return 0;
}

async function agentFields(ctx: AgentCliContext, name: string) {
  const status = await ctx.status();
  const w = await ctx.wallet();
  const payoutText = str(ctx.values, 'payout') ?? w.address;
  const payout = tryDecodeAddress(payoutText, status.hrp);
  if (!payout) throw usage(`--payout ${payoutText} is not a ${status.network} address`);
  const description = str(ctx.values, 'description');
  if (!description) throw usage('--description is required');
  return { name, description, capabilities: list(ctx.values, 'capabilities'), payout, contact: str(ctx.values, 'contact') ?? '' };
}

function serviceFields(ctx: AgentCliContext, id: string) {
  const v = ctx.values;
  const need = (k: string) => str(v, k) ?? (() => { throw usage(`--${k} is required`); })();
  let schema = str(v, 'schema') ?? JSON.stringify({ type: 'string', maxLength: 4096 });
  if (schema.startsWith('@')) schema = readFileSync(schema.slice(1), 'utf8');
  // The chain's own rule, checked here so a bad schema costs no fee.
  checkInputSchema(schema);
  const timeoutS = str(v, 'job-timeout') ?? '15';
  if (!/^\d{1,2}$/.test(timeoutS)) throw usage('--job-timeout is whole seconds (1-30)');
  return {
    id,
    name: need('name'),
    description: need('description'),
    category: need('category'),
    price: parsePositiveAmount(need('price'), '--price'),
    tags: list(v, 'tags'),
    requestFormat: str(v, 'request-format') ?? '',
    requestRequired: v['request-required'] === true,
    inputIsJson: v['json-input'] === true,
    inputSchema: schema,
    timeoutMs: Number(timeoutS) * 1000,
  };
}

interface RegistryView {
  agents: { name: string; address: string; description: string; capabilities: string[]; payout: string; contact: string; online: boolean; lastPollAt: number }[];
  services: { serviceId: string; agent: string | null; name: string; category: string; priceBase: string; status: string; listed: boolean; reason: string; available: boolean }[];
}

/** Runs `agent …`, `service …` or `moderate …`. */
export async function runAgentCommand(group: 'agent' | 'service' | 'moderate', sub: string | undefined, ctx: AgentCliContext): Promise<number> {
  const [p0, p1] = ctx.positionals;
  if (group === 'agent') {
    if (sub === 'register' || sub === 'update') {
      const fields = await agentFields(ctx, p0);
      return submit(ctx, (o) => createAgentTx(o, fields, sub === 'update'), { action: `agent_${sub}`, name: p0 });
    }
    if (sub === 'show') {
      const reg = await ctx.client.request<RegistryView>('GET', '/api/v1/registry');
      const me = str(ctx.values, 'name') ?? (await ctx.wallet()).address;
      const agent = reg.agents.find((a) => a.name === me || a.address === me);
      if (!agent) throw new NodeError(AgentCliErrorCode.NOT_FOUND, `no agent ${me} on this chain (npx native-node agent register <name> --description …)`);
      const services = reg.services.filter((s) => s.agent === agent.name);
      const lines = [`${agent.name}  ${agent.address}  ${agent.online ? 'online' : 'offline'}`, agent.description, `payout ${agent.payout}`, ...services.map((s) => `  ${s.serviceId}  ${s.status}${s.listed ? ' (listed)' : ''}  ${formatAmount(BigInt(s.priceBase))} NATIVE`)];
      ctx.out.print(lines.join('\n'), { ...agent, services });
      return 0;
    }
    if (sub === 'serve') return serve(ctx);
    throw usage(`unknown agent command ${sub ?? '(none)'}; try: agent register | update | show | serve`);
  }
  if (group === 'service') {
    if (sub === 'register' || sub === 'update') {
      const fields = serviceFields(ctx, p0);
      return submit(ctx, (o) => createServiceTx(o, fields, sub === 'update'), { action: `service_${sub}`, serviceId: p0 });
    }
    if (sub === 'retire') return submit(ctx, (o) => createServiceRetireTx(o, p0), { action: 'service_retire', serviceId: p0 });
    if (sub === 'list') {
      const reg = await ctx.client.request<RegistryView>('GET', '/api/v1/registry');
      ctx.out.print(reg.services.map((s) => `${s.serviceId}  ${s.agent ?? '?'}  ${s.status}${s.listed ? ' listed' : ''}${s.available ? ' available' : ''}  ${formatAmount(BigInt(s.priceBase))} NATIVE`).join('\n') || '(no provider services)', reg.services);
      return 0;
    }
    throw usage(`unknown service command ${sub ?? '(none)'}; try: service register | update | retire | list`);
  }
  const reason = str(ctx.values, 'reason') ?? '';
  if (sub === 'approve' || sub === 'suspend' || sub === 'reject') {
    return submit(ctx, (o) => createModerationTx(o, { action: sub, serviceId: p0, reason }), { action: sub, serviceId: p0, reason });
  }
  if (sub === 'label') {
    const status = await ctx.status();
    const address = tryDecodeAddress(p0, status.hrp);
    if (!address) throw usage(`${p0} is not a ${status.network} address`);
    return submit(ctx, (o) => createModerationTx(o, { action: 'label', address, label: p1, reason }), { action: 'label', address: p0, label: p1, reason });
  }
  throw usage(`unknown moderate command ${sub ?? '(none)'}; try: moderate approve | suspend | reject | label`);
}

/** A job as the inbox hands it out. */
export interface Job {
  jobId: string;
  serviceId: string;
  request: string | null;
  input: unknown;
  deadline: number;
}

/** Where `agent serve` signs for: the node's base URL and the id its signatures name (learnt from the node). */
export interface InboxSession {
  readonly base: string;
  readonly key: HybridKeyPair;
  readonly address: string;
  /** The node's (fleet's) id, from the X-Native-Node header of its inbox answers; undefined until known. */
  nodeId?: string;
}

/** The node id an answer of the inbox names (X-Native-Node), when it is one. */
function nodeIdOf(res: Response): string | undefined {
  const id = res.headers.get('x-native-node') ?? '';
  return /^[0-9a-f]{16}$/.test(id) ? id : undefined;
}

/**
 * Sends one signed inbox request; resolves with status and JSON body. The node id is asked once
 * (an unsigned request answers with it) and asked again when the node says the signature names
 * another node (the URL now reaches another node or fleet), then the request is signed afresh.
 */
export async function signedFetch(s: InboxSession, method: 'GET' | 'POST', path: string, body: unknown, timeoutMs: number, signal?: AbortSignal): Promise<{ status: number; json: unknown }> {
  const text = body === undefined ? '' : JSON.stringify(body);
  const send = (headers: Record<string, string>) =>
    fetch(`${s.base}${path}`, { method, headers, body: body === undefined ? undefined : text, signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs) });
  if (s.nodeId === undefined) {
    const probe = await fetch(`${s.base}/api/x402/inbox`, { signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs) });
    await probe.arrayBuffer();
    s.nodeId = nodeIdOf(probe);
    if (s.nodeId === undefined) return { status: probe.status, json: { error: { code: 'inbox_node_unknown', message: `${s.base} names no node id (X-Native-Node): is it a native-node?` } } };
  }
  let res: Response | undefined;
  for (let attempt = 0; attempt < 2; attempt++) {
    const headers = { ...signInboxRequest(s.key, { address: s.address, nodeId: s.nodeId!, method, path, body: new TextEncoder().encode(text) }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
    res = await send(headers);
    const named = nodeIdOf(res);
    if (res.status !== 401 || named === undefined || named === s.nodeId) break;
    await res.arrayBuffer();
    s.nodeId = named;
  }
  const raw = await res!.text();
  let json: unknown = null;
  try {
    json = raw ? JSON.parse(raw) : null;
  } catch {
    json = raw;
  }
  return { status: res!.status, json };
}

/** Runs a job with `--exec` (exported for tests): the request on stdin, stdout the result (JSON when it parses, else text), exit ≠ 0 a failure. */
export function runExec(command: string, job: Job, timeoutMs: number): Promise<{ result: unknown } | { error: { message: string } }> {
  return new Promise((resolve) => {
    // Its own process group, so that the deadline kills the shell and everything it started.
    const child = spawn(command, { shell: true, detached: true, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NATIVE_JOB_ID: job.jobId, NATIVE_SERVICE_ID: job.serviceId } });
    let done = false;
    const finish = (r: { result: unknown } | { error: { message: string } }) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(r);
    };
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
      finish({ error: { message: `the command did not finish within ${timeoutMs} ms` } });
    }, timeoutMs);
    child.stdout.on('data', (d: Buffer) => {
      if (out.length < 1 << 20) out += d.toString('utf8');
    });
    child.stderr.on('data', (d: Buffer) => {
      if (err.length < 4096) err += d.toString('utf8');
    });
    child.on('error', (e) => finish({ error: { message: e.message } }));
    child.on('close', (code) => {
      if (code !== 0) return finish({ error: { message: `exit ${code ?? 'signal'}${err ? `: ${err.trim().slice(0, 400)}` : ''}` } });
      const text = out.trim();
      try {
        finish({ result: JSON.parse(text) as unknown });
      } catch {
        finish({ result: text });
      }
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(job.request ?? '');
  });
}

/** Runs a job with `--forward` (exported for tests): POST {jobId, serviceId, request, input} to the local URL; a 2xx JSON answer is the result. */
export async function runForward(url: string, job: Job, timeoutMs: number): Promise<{ result: unknown } | { error: { message: string } }> {
  try {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jobId: job.jobId, serviceId: job.serviceId, request: job.request, input: job.input }), signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    if (!res.ok) return { error: { message: `the local endpoint answered ${res.status}` } };
    try {
      return { result: JSON.parse(text) as unknown };
    } catch {
      return { result: text };
    }
  } catch (e) {
    return { error: { message: `the local endpoint failed: ${(e as Error).message}` } };
  }
}

/** `agent serve`: pulls jobs forever (see module comment). */
async function serve(ctx: AgentCliContext): Promise<number> {
  const service = str(ctx.values, 'service');
  const exec = str(ctx.values, 'exec');
  const forward = str(ctx.values, 'forward');
  if (!service) throw usage('--service <id> is required');
  if ((exec === undefined) === (forward === undefined)) throw usage('give exactly one of --exec "<command>" or --forward http://127.0.0.1:PORT/path');
  if (forward !== undefined && !/^https?:\/\//.test(forward)) throw usage('--forward takes an http(s) URL');
  const w = await ctx.wallet();
  const base = ctx.client.baseUrl;
  const session: InboxSession = { base, key: w.keyPair, address: w.address };
  const log = (msg: string, data: Record<string, unknown> = {}) => process.stderr.write(`${ctx.out.json ? JSON.stringify({ msg, ...data }) : `${msg}${Object.keys(data).length ? ` ${JSON.stringify(data)}` : ''}`}\n`);
  log(`serving ${service} as ${w.address} from ${base}`);
  let backoff = 500;
  let stopping = false;
  // SIGINT/SIGTERM end the long poll at once; jobs being answered finish first.
  const polling = new AbortController();
  const stop = () => {
    stopping = true;
    polling.abort();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  while (!stopping) {
    try {
      const { status, json } = await signedFetch(session, 'GET', `/api/x402/inbox?wait=20&service=${encodeURIComponent(service)}`, undefined, 30_000, polling.signal);
      if (status !== 200) {
        log('inbox refused', { status, body: json });
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 10_000);
        continue;
      }
      backoff = 500;
      const jobs = ((json as { jobs?: Job[] }).jobs ?? []).filter((j) => j.serviceId === service);
      await Promise.all(
        jobs.map(async (job) => {
          const left = Math.max(500, job.deadline - Date.now());
          const answer = exec !== undefined ? await runExec(exec, job, left) : await runForward(forward!, job, left);
          const r = await signedFetch(session, 'POST', `/api/x402/inbox/${job.jobId}`, answer, 15_000);
          log('job answered', { jobId: job.jobId, ok: 'result' in answer, status: r.status });
        }),
      );
    } catch (e) {
      if (stopping) break;
      // The node restarted or the network failed: reconnect, forever, with a bounded back-off.
      log('inbox unreachable, retrying', { err: (e as Error).message });
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, 10_000);
    }
  }
  return 0;
}
