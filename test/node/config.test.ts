import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isNodeError } from '../../consensus/errors.js';
import { encodeAddress } from '../../consensus/address.js';
import { DEVNET_ACTORS } from '../../consensus/devnet.js';
import { CONFIG_OPTIONS, loadConfig, defaultNodeConfig, type NodeConfig } from '../../node/config.js';
import { isPacedGenesis, loadChainParams } from '../../node/chainParams.js';

const DEV_ADDRESS = encodeAddress(new Uint8Array(20).fill(7), 'tnative');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'native-config-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function load(argv: string[], env: Record<string, string> = {}): NodeConfig {
  return loadConfig(argv, env, { cwd: dir, devAddress: () => DEV_ADDRESS });
}

function errorOf(fn: () => unknown): { code: string; message: string; payload: Record<string, unknown> } {
  try {
    fn();
  } catch (e) {
    if (isNodeError(e)) return { code: e.code, message: e.message, payload: e.payload as Record<string, unknown> };
    throw e;
  }
  throw new Error('expected an error');
}

function configFile(name: string, json: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof json === 'string' ? json : JSON.stringify(json));
  return path;
}

describe('defaults', () => {
  test('mainnet without flags: 127.0.0.1:8402, ./data/native-mainnet, no mining', () => {
    const c = load([]);
    expect(c).toMatchObject({ network: 'native-mainnet', httpHost: '127.0.0.1', httpPort: 8402, mine: false, minerAddress: undefined, logLevel: 'info', dataDir: join(dir, 'data', 'native-mainnet') });
    expect(c.sources.httpPort).toBe('default');
  });
  test('--dev: devnet, miner on, paid to the dev wallet, at least one thread', () => {
    const c = load(['--dev']);
    expect(c).toMatchObject({ network: 'native-devnet', mine: true, minerAddress: DEV_ADDRESS, dataDir: join(dir, 'data', 'native-devnet') });
    expect(c.mineThreads).toBe(defaultNodeConfig.mineThreads);
    expect(c.mineThreads).toBeGreaterThanOrEqual(1);
  });
  test('confirmations a native payment needs: 1 on the devnet, 3 on mainnet, --confirmations / NATIVE_CONFIRMATIONS over both', () => {
    expect(load(['--dev']).confirmations).toBe(1);
    expect(load([]).confirmations).toBe(3);
    expect(load(['--dev', '--confirmations', '4']).confirmations).toBe(4);
    expect(load([], { NATIVE_CONFIRMATIONS: '6' }).confirmations).toBe(6);
  });
  test("the dashboard's no_blocks factor: the node's choice by default (undefined), --alert-no-block-factor / NATIVE_ALERT_NO_BLOCK_FACTOR / config over it, at least 1", () => {
    expect(load(['--dev']).alertNoBlockFactor).toBeUndefined();
    expect(load(['--dev', '--alert-no-block-factor', '2.5']).alertNoBlockFactor).toBe(2.5);
    expect(load([], { NATIVE_ALERT_NO_BLOCK_FACTOR: '6' }).alertNoBlockFactor).toBe(6);
    expect(load(['--config', configFile('stall.json', { alertNoBlockFactor: 3 })]).alertNoBlockFactor).toBe(3);
    expect(errorOf(() => load(['--alert-no-block-factor', '0.5'])).code).toBe('config_invalid');
  });
  test.each([['devnet'], ['native-devnet']])('--network %s is the devnet', (name) => {
    expect(load(['--network', name]).network).toBe('native-devnet');
  });
  test.each([['mainnet'], ['native-mainnet']])('--network %s is mainnet', (name) => {
    expect(load(['--network', name]).network).toBe('native-mainnet');
  });
});

describe('precedence: defaults ← file ← environment ← flags', () => {
  test('each layer overrides the one before, option by option', () => {
    const file = configFile('layers.json', { httpPort: 1111, httpHost: '0.0.0.0', logLevel: 'warn', mineThreads: 3, dev: true });
    const env = { NATIVE_CONFIG: file, NATIVE_HTTP_PORT: '2222', NATIVE_LOG_LEVEL: 'debug' };
    const c = load(['--log-level', 'error'], env);
    expect(c.httpHost).toBe('0.0.0.0'); // file
    expect(c.mineThreads).toBe(3); // file
    expect(c.httpPort).toBe(2222); // env over file
    expect(c.logLevel).toBe('error'); // flag over env
    expect(c.network).toBe('native-devnet'); // file's dev
    expect(c.sources).toMatchObject({ httpHost: 'file', httpPort: 'env', logLevel: 'flag', httpBodyLimit: 'default' });
    expect(c.configFile).toBe(file);
  });
  test('--config on the command line wins over NATIVE_CONFIG', () => {
    const a = configFile('a.json', { httpPort: 1 });
    const b = configFile('b.json', { httpPort: 2 });
    expect(load(['--config', b], { NATIVE_CONFIG: a }).httpPort).toBe(2);
  });
  test('--no-mine turns the devnet miner off; NATIVE_MINE=0 too; --mine beats the env', () => {
    expect(load(['--dev', '--no-mine']).mine).toBe(false);
    expect(load(['--dev'], { NATIVE_MINE: '0' }).mine).toBe(false);
    expect(load(['--dev', '--mine'], { NATIVE_MINE: 'false' }).mine).toBe(true);
  });
  test('a flag --dev overrides a mainnet network in the environment', () => {
    expect(load(['--dev'], { NATIVE_NETWORK: 'mainnet' }).network).toBe('native-devnet');
  });
  test('--network mainnet overrides NATIVE_DEV', () => {
    expect(load(['--network', 'mainnet'], { NATIVE_DEV: '1' }).network).toBe('native-mainnet');
  });
  test('--data-dir is resolved against the working directory', () => {
    expect(load(['--data-dir', 'x/y']).dataDir).toBe(join(dir, 'x', 'y'));
    expect(load([], { NATIVE_DATA_DIR: '/abs/dir' }).dataDir).toBe('/abs/dir');
  });
  test('--http-port 0 is allowed (any free port)', () => {
    expect(load(['--http-port', '0']).httpPort).toBe(0);
  });
});

describe('validation: config_invalid names the option and its source', () => {
  test.each([
    ['flag port above 65535', ['--http-port', '70000'], {}, '--http-port'],
    ['flag port not a number', ['--http-port', 'abc'], {}, '--http-port'],
    ['env port not a number', [], { NATIVE_HTTP_PORT: 'eighty' }, 'NATIVE_HTTP_PORT'],
    ['env bad boolean', [], { NATIVE_MINE: 'maybe' }, 'NATIVE_MINE'],
    ['bad network', ['--network', 'testnet'], {}, '--network'],
    ['bad log level', [], { NATIVE_LOG_LEVEL: 'loud' }, 'NATIVE_LOG_LEVEL'],
    ['zero mine threads', ['--mine-threads', '0'], {}, '--mine-threads'],
    ['unknown flag', ['--bogus'], {}, '--bogus'],
    ['positional argument', ['extra'], {}, 'extra'],
  ])('%s', (_name, argv, env, mention) => {
    const e = errorOf(() => load(argv as string[], env as Record<string, string>));
    expect(e.code).toBe('config_invalid');
    expect(e.message).toContain(mention);
  });

  test('unknown key in the config file', () => {
    const file = configFile('unknown.json', { httpPort: 1, colour: 'blue' });
    const e = errorOf(() => load(['--config', file]));
    expect(e.code).toBe('config_invalid');
    expect(e.message).toContain('colour');
    expect(e.payload).toMatchObject({ option: 'colour', source: 'file' });
  });
  test('wrong type in the config file', () => {
    const file = configFile('type.json', { httpPort: '8402' });
    const e = errorOf(() => load(['--config', file]));
    expect(e.code).toBe('config_invalid');
    expect(e.payload).toMatchObject({ option: 'httpPort', source: 'file' });
  });
  test('config file that is not JSON', () => {
    const file = configFile('broken.json', '{ "httpPort": ');
    expect(errorOf(() => load(['--config', file])).code).toBe('config_invalid');
  });
  test('missing config file', () => {
    expect(errorOf(() => load(['--config', join(dir, 'nope.json')])).code).toBe('config_file_unreadable');
  });
  test('an invalid environment value is reported even when a flag overrides it', () => {
    expect(errorOf(() => load(['--http-port', '1'], { NATIVE_HTTP_PORT: 'x' })).code).toBe('config_invalid');
  });
  test('mining on mainnet needs a miner address', () => {
    const e = errorOf(() => load(['--network', 'mainnet', '--mine']));
    expect(e.code).toBe('config_invalid');
    expect(e.payload.option).toBe('minerAddress');
  });
  test('the miner address must belong to the network', () => {
    const e = errorOf(() => load(['--dev', '--miner-address', 'native1kfl9c7xaktn9mzmw6zl69adnqtkge7fgvn4934']));
    expect(e.code).toBe('config_invalid');
    expect(e.message).toContain('minerAddress');
  });
  test('a mainnet miner address is accepted on mainnet', () => {
    const c = load(['--network', 'mainnet', '--mine', '--miner-address', 'native1kfl9c7xaktn9mzmw6zl69adnqtkge7fgvn4934']);
    expect(c.mine).toBe(true);
  });
  test('--dev with --network mainnet in the same layer contradict each other', () => {
    expect(errorOf(() => load(['--dev', '--network', 'mainnet'])).code).toBe('config_invalid');
  });
});

describe('chain parameters', () => {
  test('mainnet comes from the repository genesis.json', () => {
    const p = loadChainParams({ network: 'native-mainnet', dataDir: join(dir, 'm') });
    const genesis = JSON.parse(readFileSync(new URL('../../genesis.json', import.meta.url), 'utf8'));
    expect(p.chainId).toBe(genesis.chainId);
    expect(p.network).toBe('native-mainnet');
  });
  test('the devnet pins the genesis time of its first start in the data directory', () => {
    const dataDir = join(dir, 'dev');
    const first = loadChainParams({ network: 'native-devnet', dataDir }, () => 1_700_000_000);
    expect(first.genesis.time).toBe(1_700_000_000);
    expect(existsSync(join(dataDir, 'genesis.json'))).toBe(true);
    const again = loadChainParams({ network: 'native-devnet', dataDir }, () => 1_800_000_000);
    expect(again.genesis.time).toBe(1_700_000_000);
    expect(again.chainId).toBe(1337);
    // The dev wallet, the payee's float and the economy's devnet actors.
    expect(again.allocations.length).toBe(2 + DEVNET_ACTORS.length);
  });
});

describe('interval mining (--block-time)', () => {
  test('is a devnet option: an integer of at least 1', () => {
    expect(load(['--dev', '--block-time', '2']).blockTime).toBe(2);
    expect(load(['--dev']).blockTime).toBeUndefined();
    expect(load(['--dev'], { NATIVE_BLOCK_TIME: '5' }).blockTime).toBe(5);
    expect(errorOf(() => load(['--dev', '--block-time', '0'])).code).toBe('config_invalid');
    expect(errorOf(() => load(['--dev', '--block-time', '1.5'])).code).toBe('config_invalid');
  });
  test('mainnet refuses it with config_invalid naming the option', () => {
    const e = errorOf(() => load(['--network', 'mainnet', '--block-time', '1']));
    expect(e.code).toBe('config_invalid');
    expect(e.payload.option).toBe('blockTime');
    expect(e.message).toContain('devnet only');
    expect(errorOf(() => loadChainParams({ network: 'native-mainnet', dataDir: join(dir, 'm2'), blockTime: 1 })).code).toBe('config_invalid');
  });
  test('a new devnet gets target spacing S and the easiest bits, pinned; the same S starts it again', () => {
    const dataDir = join(dir, 'paced');
    const p = loadChainParams({ network: 'native-devnet', dataDir, blockTime: 2 }, () => 1_700_000_000);
    expect(p.targetSpacing).toBe(2);
    expect(p.genesis.bits).toBe(p.powLimitBits);
    expect(p.genesis.bits).toBe(0x207fffff);
    expect(JSON.parse(readFileSync(join(dataDir, 'genesis.json'), 'utf8')).targetSpacing).toBe(2);
    expect(loadChainParams({ network: 'native-devnet', dataDir, blockTime: 2 }).genesis.time).toBe(1_700_000_000);
    expect(isPacedGenesis(p)).toBe(true);
    // Without --block-time it still runs (the node warns).
    expect(loadChainParams({ network: 'native-devnet', dataDir }).targetSpacing).toBe(2);
  });
  test('a pinned genesis made otherwise is refused with config_genesis_mismatch', () => {
    const paced = join(dir, 'paced3');
    loadChainParams({ network: 'native-devnet', dataDir: paced, blockTime: 3 });
    const e = errorOf(() => loadChainParams({ network: 'native-devnet', dataDir: paced, blockTime: 1 }));
    expect(e.code).toBe('config_genesis_mismatch');
    expect(e.message).toContain('new --data-dir');
    expect(e.payload.targetSpacing).toBe(3);
    const pow = join(dir, 'pow');
    const p = loadChainParams({ network: 'native-devnet', dataDir: pow });
    expect(isPacedGenesis(p)).toBe(false);
    expect(errorOf(() => loadChainParams({ network: 'native-devnet', dataDir: pow, blockTime: 3 })).code).toBe('config_genesis_mismatch');
  });
});

test('the operator\'s guide documents every option: flag, environment variable, config key', () => {
  const guide = readFileSync(new URL('../../docs/operators-guide.md', import.meta.url), 'utf8');
  for (const o of CONFIG_OPTIONS) {
    expect(guide).toContain(`\`--${o.flag}`);
    expect(guide).toContain(`\`${o.env}\``);
    if (o.key !== 'config') expect(guide).toContain(`\`${o.key}\``);
  }
});
