/**
 * A local EVM node for tests: anvil from the `@foundry-rs/anvil` npm package on 127.0.0.1 (a free
 * port), installed in test/tools/ (its own package.json and lock file, kept out of the root
 * install; installed here on first use, and by .ci/run), plus a "answer table" contract to plant at any address: it returns, for exactly the
 * calldata it was taught, the ABI-encoded answer stored for it (and 32 zero bytes otherwise, the
 * answer of an unset mapping), so a test can stand in for ERC-20s, the ENS registry and resolvers
 * or the OP-stack gas oracle with answers in their real ABI encoding.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureInstalledOnce, npmCi } from './installOnce.js';
import { keccak256, numberToHex, padHex, size, slice, type Address, type Hex } from 'viem';

/**
 * Runtime code of the answer table: key = keccak256(calldata); storage[key] = answer length
 * (0: answer 32 zero bytes); storage[key + 1 + i] = word i of the answer.
 *   CALLDATACOPY(0,0,cds) SHA3(0,cds) DUP1 SLOAD [len==0 → 32] then copy words to memory, RETURN(0,len)
 */
export const ANSWER_TABLE_CODE = ('0x36600060003736600020805480601357506020' + '5b6000' + '5b8181101560305780' + '60051c8301600101548152602001601656' + '5b506000f3') as Hex;

/** A running anvil. */
export interface Anvil {
  readonly url: string;
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** Plants the answer table at `address`. */
  plantTable(address: Address): Promise<void>;
  /** Teaches the table at `address` to answer `calldata` with `answer`. */
  teach(address: Address, calldata: Hex, answer: Hex): Promise<void>;
  stop(): Promise<void>;
}

/** The test-only tools' folder. */
export const TEST_TOOLS_DIR = fileURLToPath(new URL('../tools', import.meta.url));

/** Installs test/tools/ once (npm ci from its lock file) and answers the path of anvil's binary for this platform. */
async function anvilBinary(): Promise<string> {
  await ensureInstalledOnce(TEST_TOOLS_DIR, () => {
    process.stderr.write('installing the test tools (anvil) in test/tools/ (npm ci, 43 MB, once)…\n');
    return npmCi(TEST_TOOLS_DIR);
  });
  const require = createRequire(join(TEST_TOOLS_DIR, 'package.json'));
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  return join(dirname(require.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`)), 'bin', 'anvil');
}

/** Starts anvil with `chainId` on 127.0.0.1 (any free port); resolves once it listens. */
export async function startAnvil(chainId: number, extraArgs: readonly string[] = []): Promise<Anvil> {
  const child: ChildProcess = spawn(await anvilBinary(), ['--host', '127.0.0.1', '--port', '0', '--chain-id', String(chainId), '--no-mining', ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`anvil did not start: ${out}`)), 10_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Listening on (127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(`http://${m[1]}`);
      }
    });
    child.once('exit', (code) => reject(new Error(`anvil exited (${code}): ${out}`)));
  });
  child.stdout!.resume();
  child.stderr!.resume();
  let id = 0;
  const rpc = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }) });
    const j = (await res.json()) as { result?: T; error?: { message: string } };
    if (j.error) throw new Error(`${method}: ${j.error.message}`);
    return j.result as T;
  };
  const setWord = (address: Address, slot: bigint, word: Hex) => rpc('anvil_setStorageAt', [address, padHex(numberToHex(slot), { size: 32 }), padHex(word, { size: 32, dir: 'left' })]);
  return {
    url,
    rpc,
    plantTable: async (address) => void (await rpc('anvil_setCode', [address, ANSWER_TABLE_CODE])),
    async teach(address, calldata, answer) {
      const key = BigInt(keccak256(calldata));
      const len = size(answer);
      await setWord(address, key, numberToHex(len));
      for (let i = 0; i * 32 < len; i++) {
        const word = slice(answer, i * 32, Math.min(len, i * 32 + 32));
        await setWord(address, key + 1n + BigInt(i), padHex(word, { size: 32, dir: 'right' }));
      }
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** One step of `assemble`: an opcode name, a push of hex bytes, a label definition or a push of a label's offset. */
type Asm = string | { push: string } | { label: string } | { to: string };

const OPCODES: Record<string, number> = {
  STOP: 0x00, EQ: 0x14, SHR: 0x1c, SHA3: 0x20, CALLDATALOAD: 0x35, POP: 0x50, MSTORE: 0x52, SLOAD: 0x54, SSTORE: 0x55,
  JUMPI: 0x57, JUMPDEST: 0x5b, DUP1: 0x80, SWAP1: 0x90, LOG3: 0xa3, RETURN: 0xf3, REVERT: 0xfd,
};

/** A tiny EVM assembler (labels resolved to 1-byte offsets): enough for the stand-in below, hand-checkable. */
function assemble(program: readonly Asm[]): Hex {
  const labels = new Map<string, number>();
  const size = (a: Asm) => (typeof a === 'string' ? 1 : 'push' in a ? 1 + a.push.length / 2 : 'to' in a ? 2 : 1);
  let at = 0;
  for (const a of program) {
    if (typeof a === 'object' && 'label' in a) labels.set(a.label, at);
    at += size(a);
  }
  let out = '';
  const byte = (n: number) => n.toString(16).padStart(2, '0');
  for (const a of program) {
    if (typeof a === 'string') out += byte(OPCODES[a]!);
    else if ('push' in a) out += byte(0x5f + a.push.length / 2) + a.push;
    else if ('to' in a) out += byte(0x60) + byte(labels.get(a.to)!);
    else out += byte(OPCODES.JUMPDEST!);
  }
  return `0x${out}` as Hex;
}

/** topic0 of FiatTokenV2's `AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)`. */
const AUTHORIZATION_USED_TOPIC = '98de503528ee59b575ef0c0a2576a82497bfc029a5685b209e9ec333479b10a5';
/** topic0 of ERC-20 `Transfer(address indexed from, address indexed to, uint256 value)`. */
const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/**
 * Runtime code of a minimal EIP-3009 token stand-in (assembled above, no compiler; no signature
 * check, no balances):
 *   `authorizationState(address authorizer, bytes32 nonce)` (0xe94a0102) → bool, from
 *     storage[keccak256(authorizer ‖ nonce)];
 *   any other call is read as `transferWithAuthorization(from, to, value, validAfter,
 *     validBefore, nonce, …)`: it reverts when (from, nonce) is used already, else marks it used
 *     and emits, as FiatTokenV2 does, `AuthorizationUsed(from, nonce)` then `Transfer(from, to,
 *     value)` — what a facilitator's settlement leaves on chain.
 */
export const EIP3009_STUB_CODE = assemble([
  { push: '00' }, 'CALLDATALOAD', { push: 'e0' }, 'SHR', { push: 'e94a0102' }, 'EQ', { to: 'state' }, 'JUMPI',
  // use: key = keccak256(from ‖ nonce)
  { push: '04' }, 'CALLDATALOAD', { push: '00' }, 'MSTORE', { push: 'a4' }, 'CALLDATALOAD', { push: '20' }, 'MSTORE',
  { push: '40' }, { push: '00' }, 'SHA3', 'DUP1', 'SLOAD', { to: 'revert' }, 'JUMPI',
  { push: '01' }, 'SWAP1', 'SSTORE',
  // LOG3(0, 0, AuthorizationUsed, from, nonce)
  { push: 'a4' }, 'CALLDATALOAD', { push: '04' }, 'CALLDATALOAD', { push: AUTHORIZATION_USED_TOPIC }, { push: '00' }, { push: '00' }, 'LOG3',
  // mem[0] = value; LOG3(0, 32, Transfer, from, to)
  { push: '44' }, 'CALLDATALOAD', { push: '00' }, 'MSTORE',
  { push: '24' }, 'CALLDATALOAD', { push: '04' }, 'CALLDATALOAD', { push: TRANSFER_TOPIC }, { push: '20' }, { push: '00' }, 'LOG3',
  'STOP',
  { label: 'revert' }, { push: '00' }, { push: '00' }, 'REVERT',
  { label: 'state' }, { push: '04' }, 'CALLDATALOAD', { push: '00' }, 'MSTORE', { push: '24' }, 'CALLDATALOAD', { push: '20' }, 'MSTORE',
  { push: '40' }, { push: '00' }, 'SHA3', 'SLOAD', { push: '00' }, 'MSTORE', { push: '20' }, { push: '00' }, 'RETURN',
]);

/** Selector of `transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)`. */
export const USE_AUTHORIZATION_SELECTOR = '0xe3ee160e';

/** What a settlement transfers (defaults: to the zero address, value 0 — an authorization used by a transfer that pays nobody). */
export interface AuthorizationTransfer {
  readonly to?: string;
  readonly value?: string | bigint;
}

/**
 * Uses `(authorizer, nonce)` at the stand-in at `token` with a real transaction from anvil's
 * first unlocked account (calldata in `transferWithAuthorization`'s layout, paying `transfer.to`
 * `transfer.value`), mines it, and returns its hash; throws when it reverts (used already), with
 * the reverted transaction's hash as the error's `txHash`.
 */
export async function useAuthorization(anvil: Anvil, token: Address, authorizer: Address, nonce: Hex, transfer: AuthorizationTransfer = {}): Promise<Hex> {
  const [from] = await anvil.rpc<Address[]>('eth_accounts');
  const word = (v: string | bigint) => padHex(typeof v === 'bigint' ? numberToHex(v) : (v as Hex), { size: 32 }).slice(2);
  const data = (USE_AUTHORIZATION_SELECTOR + word(authorizer) + word((transfer.to ?? '0x00') as Hex) + word(BigInt(transfer.value ?? 0)) + word(0n) + word(0n) + word(nonce) + word(0n).repeat(3)) as Hex;
  const hash = await anvil.rpc<Hex>('eth_sendTransaction', [{ from, to: token, data, gas: '0x30000' }]);
  await anvil.rpc('evm_mine');
  const receipt = await anvil.rpc<{ status: string } | null>('eth_getTransactionReceipt', [hash]);
  if (receipt?.status !== '0x1') throw Object.assign(new Error(`useAuthorization ${hash} did not succeed: ${JSON.stringify(receipt)}`), { txHash: hash });
  return hash;
}
