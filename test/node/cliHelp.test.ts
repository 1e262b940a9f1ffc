/** Help on the command line: a short grouped top-level help; each command's usage, sentence, flags (from the table its parser reads, each described) and example; plain refusals with "did you mean". */
import { afterEach, describe, expect, jest, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFIG_OPTIONS } from '../../node/config.js';
import { commandOptionTables, main } from '../../cli/cli.js';
import { COMMAND_DOCS, commandNames, flagDoc, nearest } from '../../cli/commandDocs.js';
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
  test('start --help and -h list every option the parser accepts, with its variable and default, and an example', async () => {
    for (const flag of ['--help', '-h']) {
      const r = await run(['start', flag]);
      expect(r.code).toBe(0);
      for (const o of CONFIG_OPTIONS) {
        expect(r.out).toContain(`  ${flagUsage(o)}\n`);
        expect(r.out.replace(/\s+/g, ' ')).toContain(`Env ${o.env}, config "${o.key}"`);
      }
      expect(r.out).toContain('Example:\n  npx native-node start --dev');
    }
    expect(startHelp()).toContain('--[no-]economy');
  });

  test('the top-level help is short and grouped: node, wallet, pay and call, economy, agents, fleet, data', async () => {
    for (const argv of [['help'], ['--help'], []]) {
      const r = await run(argv);
      expect(r.code).toBe(0);
      const lines = r.out.trimEnd().split('\n');
      expect(lines.length).toBeLessThan(80);
      expect(lines.filter((l) => /^\S.*:$/.test(l))).toEqual(['Node:', 'Wallet:', 'Pay and call:', 'Economy:', 'Agents:', 'Fleet:', 'Data:']);
      // quote and call come before any start flag: start's flags are in start --help only.
      expect(r.out).not.toContain('--http-port');
      // A family split over two groups is listed once, with what it does.
      expect(r.out.match(/^ {2}ledger /gm)).toEqual(['  ledger ']);
      expect(r.out).toMatch(/^ {2}ledger migrate\|gap +the payment ledger: /m);
      expect(lines.filter((l) => l.length > 100 && !/^(Usage: )?\s*npx native-node /.test(l))).toEqual([]);
      for (const cmd of ['start', 'devnet', 'status', 'tx', 'wallet', 'send', 'quote', 'call', 'pay', 'receipt', 'token', 'pool', 'swap', 'stake', 'stable', 'bridge', 'simulate', 'agent', 'service', 'moderate', 'fleet', 'data', 'sanctions', 'rdap-bootstrap', 'ledger', 'usdc-payments']) {
        expect({ cmd, listed: new RegExp(`^  ${cmd}\\b`, 'm').test(r.out) }).toEqual({ cmd, listed: true });
      }
    }
  });

  test('every command and subcommand: usage, a sentence, every flag its parser accepts with a description, an example', async () => {
    const tables = await commandOptionTables();
    const keys = new Set([...Object.keys(tables), ...Object.keys(COMMAND_DOCS).filter((k) => k !== 'start')]);
    // Every command with a parser is documented, and every documented command has a parser (or takes no flags).
    for (const key of Object.keys(tables)) expect({ key, documented: COMMAND_DOCS[key] !== undefined }).toEqual({ key, documented: true });
    expect(keys.size).toBeGreaterThanOrEqual(50);
    for (const key of keys) {
      const r = await run([...key.split(' '), '--help']);
      expect({ key, code: r.code, err: r.err }).toEqual({ key, code: 0, err: '' });
      const lines = r.out.split('\n');
      expect({ key, usage: lines[0].startsWith(`Usage: npx native-node ${key}`) }).toEqual({ key, usage: true });
      expect({ key, sentence: /^[A-Z].*[.)]$/.test(lines[2] ?? '') || /^[A-Z]/.test(lines[2] ?? '') }).toEqual({ key, sentence: true });
      const example = lines[lines.indexOf('Example:') + 1] ?? '';
      expect({ key, example: example.startsWith(`  npx native-node ${key.split(' ')[0]}`) }).toEqual({ key, example: true });
      for (const [name, spec] of Object.entries(tables[key] ?? {})) {
        const i = lines.findIndex((l) => l === `  --${name}` || l.startsWith(`  --${name} <`));
        const described = i >= 0 && /^ {6}\S/.test(lines[i + 1] ?? '') && (spec.type === 'boolean' || lines[i].endsWith('>'));
        expect({ key, flag: name, described }).toEqual({ key, flag: name, described: true });
        // Its default, where it has one, is shown (the description may wrap over several lines).
        const text: string[] = [];
        for (let j = i + 1; /^ {6}\S/.test(lines[j] ?? ''); j++) text.push(lines[j].trim());
        const def = flagDoc(key, name)?.default;
        expect({ key, flag: name, shows: def === undefined || text.join(' ').endsWith(`(default: ${def})`) }).toEqual({ key, flag: name, shows: true });
      }
      // Text wraps at 100 columns; command lines stay whole, to be copied.
      expect({ key, wide: lines.filter((l) => l.length > 100 && !/^(Usage: )?\s*npx native-node /.test(l)) }).toEqual({ key, wide: [] });
    }
    // A family named alone lists its subcommands and the flags of all of them, each described.
    const token = await run(['token', '--help']);
    for (const sub of ['issue', 'mint', 'burn', 'send', 'flags', 'back', 'info', 'list']) expect(token.out).toContain(`npx native-node token ${sub}`);
    for (const name of ['hidden', 'stable', 'to', 'frozen', 'fee', 'wait']) expect(token.out).toMatch(new RegExp(`\\n  --${name}( <[^>]+>)?\\n {6}\\S`));
    for (const family of ['token', 'agent', 'service', 'moderate', 'ledger']) {
      const r = await run([family, '--help']);
      expect({ family, wide: r.out.split('\n').filter((l) => l.length > 100 && !/^(Usage: )?\s*npx native-node /.test(l)) }).toEqual({ family, wide: [] });
    }
    // status --help is status's, not data status's nor fleet status's; it lists no flag status does not read.
    const status = await run(['status', '--help']);
    expect(status.out).not.toMatch(/data status|fleet status/);
    expect(status.out).not.toMatch(/--wallet|--data-dir|--wait/);
    expect(tables.status.wallet).toBeUndefined();
    // agent show lists its own flag, not the other agent, service and moderate subcommands' flags.
    const show = (await run(['agent', 'show', '--help'])).out;
    expect([...show.matchAll(/^ {2}--([\w-]+)/gm)].map((m) => m[1])).toEqual(['name', 'json', 'node', 'config', 'dev', 'network', 'data-dir', 'wallet']);
    expect(Object.keys(tables['service register'])).not.toContain('exec');
    expect(Object.keys(tables['moderate approve'])).toEqual(expect.arrayContaining(['reason', 'wait']));
    expect(Object.keys(tables['moderate approve'])).not.toContain('price');
    for (const key of ['token list', 'pool info', 'service list', 'quote', 'tx']) expect({ key, wallet: tables[key].wallet }).toEqual({ key, wallet: undefined });
    for (const key of ['data install', 'ledger gap', 'sanctions update']) expect({ key, node: tables[key].node }).toEqual({ key, node: undefined });
  });

  test('an unknown flag of any command is one plain line naming the nearest flag and the help to read', async () => {
    const tables = await commandOptionTables();
    for (const [key, options] of Object.entries(tables)) {
      // One of the command's own flags with a letter too many: parseArgs refuses it before anything runs.
      const name = Object.keys(options).filter((n) => n !== 'json' && n !== 'node').pop() ?? 'json';
      const r = await run([...key.split(' '), `--${name}x`]);
      const help = `; npx native-node ${key} --help lists its flags`;
      expect({ key, code: r.code, err: r.err }).toEqual({ key, code: 2, err: expect.stringContaining(`: unknown flag --${name}x (did you mean --${name}?)${help}\n`) });
      expect({ key, parseArgsText: /Unknown option|positional argument/.test(r.err), oneLine: r.err.trimEnd().split('\n').length }).toEqual({ key, parseArgsText: false, oneLine: 1 });
    }
    const missing = await run(['send', 'tnative1x', '1', '--fee']);
    expect(missing.err).toBe('error cli_usage: --fee needs a value; npx native-node send --help lists its flags\n');
  });

  test('an unknown command names the nearest one', async () => {
    const r = await run(['stauts']);
    expect(r.code).toBe(2);
    expect(r.err).toBe('error cli_unknown_command: unknown command stauts (did you mean status?); npx native-node help lists the commands\n');
    expect(nearest('tokn', commandNames())).toBe('token');
    const sub = await run(['token', 'isue', 'X']);
    expect(sub.err).toBe('error cli_usage: unknown token command isue (did you mean token issue?); try: token list | token info | token issue | token mint | token burn | token back | token send | token flags\n');
    expect(nearest('zzzzzz', commandNames())).toBeUndefined();
  });

  test('an unknown key of the config file names the nearest one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'native-cli-config-'));
    try {
      writeFileSync(join(dir, 'c.json'), '{"httpPrt": 8402}');
      const r = await run(['start', '--dev', '--config', join(dir, 'c.json')]);
      expect(r.code).toBe(2);
      expect(r.err).toBe(`error config_invalid: unknown option "httpPrt" in config file ${join(dir, 'c.json')} (did you mean "httpPort"?)\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('an unknown start flag names the nearest one', async () => {
    expect(nearestFlag('--ecnomy')).toBe('economy');
    expect(nearestFlag('--http-prot')).toBe('http-port');
    expect(nearestFlag('--zzzzzzzz')).toBeUndefined();
    expect(nearestFlag('--wiat', ['wait', 'timeout', 'fee'])).toBe('wait');
    const r = await run(['start', '--ecnomy']);
    expect(r.code).toBe(2);
    expect(r.err).toBe('error config_invalid: unknown flag --ecnomy (did you mean --economy?); npx native-node start --help lists every flag\n');
  });
});
