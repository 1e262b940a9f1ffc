/** Help on the command line: start's help and the global help come from the option table the parser reads; every command answers --help. */
import { afterEach, describe, expect, jest, test } from '@jest/globals';
import { CONFIG_OPTIONS } from '../../node/config.js';
import { commandOptionTables, main } from '../../cli/cli.js';
import { optionUsage } from '../../cli/cliKit.js';
import { flagUsage, nearestFlag, startHelp } from '../../cli/startHelp.js';

/** Runs the CLI, returning its exit code and what it wrote to stdout and stderr. */
async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = jest.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => ((out += String(c)), true));
  const e = jest.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => ((err += String(c)), true));
  try {
    const code = await main(argv, { env: {}, cwd: process.cwd() });
    return { code, out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

afterEach(() => {
  jest.restoreAllMocks();
});

describe('command-line help', () => {
  test('start --help and -h list every option the parser accepts, with its variable and default', async () => {
    for (const flag of ['--help', '-h']) {
      const r = await run(['start', flag]);
      expect(r.code).toBe(0);
      for (const o of CONFIG_OPTIONS) {
        expect(r.out).toContain(`  ${flagUsage(o)}\n`);
        expect(r.out.replace(/\s+/g, ' ')).toContain(`Env ${o.env}, config "${o.key}"`);
      }
    }
    expect(startHelp()).toContain('--[no-]economy');
  });

  test('the global help lists every start flag, --economy included', async () => {
    for (const argv of [['help'], ['--help'], []]) {
      const r = await run(argv);
      expect(r.code).toBe(0);
      const flat = r.out.replace(/\s+/g, ' ');
      for (const o of CONFIG_OPTIONS) expect({ flag: o.flag, listed: flat.includes(` ${flagUsage(o)} `) }).toEqual({ flag: o.flag, listed: true });
    }
  });

  test('every command answers --help with its usage and exit 0', async () => {
    const commands = ['devnet', 'status', 'tx', 'wallet', 'send', 'quote', 'call', 'agent', 'service', 'moderate', 'rdap-bootstrap', 'sanctions', 'data', 'usdc-payments', 'ledger', 'token', 'pool', 'swap', 'stake', 'unstake', 'stable', 'bridge', 'simulate', 'version', 'help'];
    for (const cmd of commands) {
      const r = await run([cmd, '--help']);
      expect({ cmd, code: r.code, err: r.err }).toEqual({ cmd, code: 0, err: '' });
      expect({ cmd, named: r.out.includes(cmd) }).toEqual({ cmd, named: true });
    }
  });

  test('<command> [sub] --help lists every option its parser accepts, for every command and subcommand', async () => {
    const tables = await commandOptionTables();
    // Every command of the global usage has a table (or takes no options: version, help).
    const commands = new Set(Object.keys(tables).map((k) => k.split(' ')[0]));
    for (const cmd of ['devnet', 'status', 'tx', 'wallet', 'send', 'quote', 'call', 'agent', 'service', 'moderate', 'rdap-bootstrap', 'sanctions', 'data', 'usdc-payments', 'ledger', 'fleet', 'token', 'pool', 'swap', 'stake', 'unstake', 'stable', 'bridge', 'simulate']) expect({ cmd, table: commands.has(cmd) }).toEqual({ cmd, table: true });
    expect(Object.keys(tables).length).toBeGreaterThanOrEqual(45);
    for (const [key, options] of Object.entries(tables)) {
      const r = await run([...key.split(' '), '--help']);
      expect({ key, code: r.code, err: r.err }).toEqual({ key, code: 0, err: '' });
      expect({ key, header: r.out.includes(`Flags of native-node ${key} `) }).toEqual({ key, header: true });
      for (const [name, spec] of Object.entries(options)) expect({ key, flag: name, listed: r.out.includes(`  ${optionUsage(name, spec)}\n`) || r.out.endsWith(`  ${optionUsage(name, spec)}\n`) }).toEqual({ key, flag: name, listed: true });
    }
    // A command's own --help (no subcommand) lists the flags of all its subcommands.
    const token = await run(['token', '--help']);
    for (const name of ['hidden', 'stable', 'to', 'frozen', 'fee', 'wait']) expect(token.out).toContain(`--${name}`);
  });

  test('an unknown flag of any command names the nearest one its parser accepts', async () => {
    const tables = await commandOptionTables();
    for (const [key, options] of Object.entries(tables)) {
      // One of the command's own flags with a letter too many: parseArgs refuses it before anything runs.
      const name = Object.keys(options).filter((n) => n !== 'json' && n !== 'node').pop() ?? 'json';
      const r = await run([...key.split(' '), `--${name}x`]);
      expect({ key, code: r.code, unknown: r.err.includes(`Unknown option '--${name}x'`), suggests: r.err.includes(`(did you mean --${name}?)`) }).toEqual({ key, code: 2, unknown: true, suggests: true });
    }
  });

  test('an unknown start flag names the nearest one', async () => {
    expect(nearestFlag('--ecnomy')).toBe('economy');
    expect(nearestFlag('--http-prot')).toBe('http-port');
    expect(nearestFlag('--zzzzzzzz')).toBeUndefined();
    expect(nearestFlag('--wiat', ['wait', 'timeout', 'fee'])).toBe('wait');
    const r = await run(['start', '--ecnomy']);
    expect(r.code).toBe(2);
    expect(r.err).toContain("Unknown option '--ecnomy' (did you mean --economy?");
  });
});
