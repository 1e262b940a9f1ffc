/**
 * The `native-node` command line. Each command is a small function; `main` parses the
 * arguments, runs one and returns the process exit code. Errors carry a stable code, printed
 * as `error <code>: <message>` (or as JSON with `--json`).
 */
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { NodeError, isNodeError } from '../consensus/errors.js';
import { createKeyPairFromSeed, randomSeed } from '../consensus/keys.js';
import { encodeAddress, MAINNET_HRP, TESTNET_HRP } from '../consensus/address.js';

/** Error codes of the command line itself. */
export const CliErrorCode = {
  USAGE: 'cli_usage',
  UNKNOWN_COMMAND: 'cli_unknown_command',
} as const;

const VERSION: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

const USAGE = `native-node ${VERSION}

Usage: native-node <command> [options]

Commands:
  wallet new [--network <name>]   create a wallet key and print its address
  version                         print the version
  help                            show this help

Every command takes --json for machine-readable output.`;

interface Out {
  json: boolean;
  print(human: string, data: unknown): void;
}

function output(json: boolean): Out {
  return {
    json,
    print(human, data) {
      process.stdout.write(json ? `${JSON.stringify(data)}\n` : `${human}\n`);
    },
  };
}

async function walletNew(args: string[], out: Out): Promise<number> {
  const { values } = parseArgs({ args, options: { network: { type: 'string', default: 'native-devnet' }, json: { type: 'boolean' } }, strict: true });
  const seed = randomSeed();
  const kp = createKeyPairFromSeed(seed);
  const hrp = values.network === 'native-mainnet' || values.network === 'mainnet' ? MAINNET_HRP : TESTNET_HRP;
  const address = encodeAddress(kp.address, hrp);
  out.print(`address ${address}`, { address, network: values.network });
  return 0;
}

/** Runs the command line with `argv` (without node and script); returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const out = output(json);
  const [cmd, ...rest] = argv.filter((a) => a !== '--json');
  try {
    switch (cmd) {
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(`${USAGE}\n`);
        return 0;
      case 'version':
      case '--version':
        out.print(VERSION, { version: VERSION });
        return 0;
      case 'wallet':
        if (rest[0] === 'new') return await walletNew(rest.slice(1), out);
        throw new NodeError(CliErrorCode.USAGE, `unknown wallet command ${rest[0] ?? '(none)'}; try: wallet new`);
      default:
        throw new NodeError(CliErrorCode.UNKNOWN_COMMAND, `unknown command ${cmd}; see native-node help`);
    }
  } catch (e) {
    const code = isNodeError(e) ? e.code : e instanceof TypeError && 'code' in e ? CliErrorCode.USAGE : 'internal_error';
    const message = e instanceof Error ? e.message : String(e);
    if (json) process.stdout.write(`${JSON.stringify({ error: { code, message } })}\n`);
    else process.stderr.write(`error ${code}: ${message}\n`);
    return code === 'internal_error' ? 70 : 2;
  }
}
