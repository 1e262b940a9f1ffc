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

/**
 * Runtime code of a minimal EIP-3009 token stand-in (hand-assembled, no compiler):
 *   `authorizationState(address authorizer, bytes32 nonce)` (0xe94a0102) → bool, from
 *     storage[keccak256(authorizer ‖ nonce)];
 *   any other call with (address authorizer, bytes32 nonce) as arguments marks that
 *     authorization used and emits FiatTokenV2's `AuthorizationUsed(authorizer, nonce)` (what a
 *     facilitator's `transferWithAuthorization` leaves on chain; no balances are moved).
 *   CALLDATACOPY(0,4,64) SHA3(0,64) selector==e94a0102 ? [JUMPDEST SLOAD MSTORE(0) RETURN(0,32)]
 *   : SSTORE(key,1) LOG3(0,0,topic,authorizer,nonce) STOP
 */
export const EIP3009_STUB_CODE = ('0x' +
  '604060046000376040600020' + // CALLDATACOPY(0, 4, 64); SHA3(0, 64)
  '60003560e01c63e94a010214604c57' + // selector == authorizationState → 0x4c
  '60019055602435600435' + // SSTORE(key, 1); nonce; authorizer
  '7f98de503528ee59b575ef0c0a2576a82497bfc029a5685b209e9ec333479b10a5' + // AuthorizationUsed topic
  '60006000a300' + // LOG3(0, 0, …); STOP
  '5b5460005260206000f3') as Hex; // JUMPDEST SLOAD MSTORE(0) RETURN(0, 32)

/** Selector of the stand-in's "use the authorization" call (any selector but authorizationState's works). */
export const USE_AUTHORIZATION_SELECTOR = '0xe3ee160e'; // transferWithAuthorization's selector, for readability in traces

/**
 * Marks `(authorizer, nonce)` used at the stand-in at `token` with a real transaction from
 * anvil's first unlocked account, mines it, and returns its hash.
 */
export async function useAuthorization(anvil: Anvil, token: Address, authorizer: Address, nonce: Hex): Promise<Hex> {
  const [from] = await anvil.rpc<Address[]>('eth_accounts');
  const data = (USE_AUTHORIZATION_SELECTOR + padHex(authorizer, { size: 32 }).slice(2) + padHex(nonce, { size: 32 }).slice(2)) as Hex;
  const hash = await anvil.rpc<Hex>('eth_sendTransaction', [{ from, to: token, data, gas: '0x30000' }]);
  await anvil.rpc('evm_mine');
  const receipt = await anvil.rpc<{ status: string } | null>('eth_getTransactionReceipt', [hash]);
  if (receipt?.status !== '0x1') throw new Error(`useAuthorization ${hash} did not succeed: ${JSON.stringify(receipt)}`);
  return hash;
}
