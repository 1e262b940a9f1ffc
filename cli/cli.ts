/**
 * The `native-node` command line. Each command is a small function; `main` parses the
 * arguments, runs one and returns the process exit code. Errors carry a stable code, printed
 * as `error <code>: <message>` on stderr (or `{"error": {code, message}}` on stdout with `--json`).
 *
 * Wallet resolution (wallet show|balance, send): `--wallet` / `NATIVE_WALLET` / config `wallet`;
 * otherwise, on the devnet, `<data-dir>/dev-wallet.json` (or the built-in dev key when that file
 * is absent), and elsewhere `~/.native-node/wallet.json`. `wallet new` writes `--wallet` or
 * `~/.native-node/wallet.json`, never the dev wallet. The network is the node's for commands
 * that talk to one, else `--network` / `--dev` / `NATIVE_NETWORK`, else the node's if one
 * answers at `--node`, else mainnet.
 */
import { NodeError, isNodeError } from '../consensus/errors.js';
import { ClientErrorCode, DEFAULT_NODE_URL } from '../node/client.js';
import { loadConfig } from '../node/config.js';
import { createLogger } from '../node/logger.js';
import { NODE_VERSION } from '../node/version.js';
import { AGENT_CLI_TABLES, agentCliPositionals, runAgentCommand } from './agentCli.js';
import { CliErrorCode, COMMON, COMMON_NODE_READ, commonWithout, context, devAddress, nodeStatus, optionLines, output, parse, timeoutOption, unlockWallet, waitMined, walletRef, type CliEnv, type Options } from './cliKit.js';
import { callCommand, parseCallArgs, quoteCommand } from './callCli.js';
import { startHelp, withFlagSuggestion, wrap } from './startHelp.js';
import { listenErrorOneLine } from './listenError.js';
import { FLEET_OPTIONS } from './fleetCommand.js';
import { CHAIN_OPTIONS, send, status, txCommand } from './chainCommands.js';
import { runWalletCommand, WALLET_OPTIONS } from './walletCommand.js';
import { PAY_OPTIONS, payCommand } from './payCommand.js';
import { COMMAND_DOCS, commandHelpText, commandNames, flagDoc, nearest, topHelpText } from './commandDocs.js';

/** The command line's codes, environment and kit (cliKit.ts), re-exported for its users. */
export { CliErrorCode, cliKit, type CliEnv } from './cliKit.js';

/** The options each command dispatched here accepts beyond the common ones (the chain and wallet families declare theirs in their files): its parser reads this table, and so does its --help. */
const CORE_OPTIONS = {
  ...CHAIN_OPTIONS,
  ...WALLET_OPTIONS,
  ...PAY_OPTIONS,
  quote: {},
  call: { 'max-price': { type: 'string' }, timeout: { type: 'string' }, tx: { type: 'string' }, salt: { type: 'string' } },
  'rdap-bootstrap': { out: { type: 'string' }, url: { type: 'string' } },
  'sanctions update': { 'ofac-url': { type: 'string' }, 'un-url': { type: 'string' }, 'eu-url': { type: 'string' } },
  'data status': {},
  'data install': {},
  'ledger gap': { refund: { type: 'boolean' }, forget: { type: 'boolean' }, ledger: { type: 'string' }, 'ledger-witness': { type: 'string' } },
  'ledger migrate': { ledger: { type: 'string' }, grant: { type: 'string' } },
  'usdc-payments': { status: { type: 'string' } },
} as const satisfies Record<string, Options>;

/** The common flags a command's help lists when not all of them mean something to it (no wallet where nothing is signed, no node where none is asked); its parser takes and ignores the others. */
const CORE_COMMON: Partial<Record<keyof typeof CORE_OPTIONS, Options>> = {
  status: COMMON_NODE_READ,
  tx: COMMON_NODE_READ,
  quote: COMMON_NODE_READ,
  'rdap-bootstrap': commonWithout('node', 'config', 'dev', 'network', 'data-dir', 'wallet'),
  'data status': commonWithout('node', 'config', 'dev', 'network', 'data-dir', 'wallet'),
  'data install': commonWithout('node', 'config', 'dev', 'network', 'data-dir', 'wallet'),
  'sanctions update': commonWithout('node', 'wallet'),
  'ledger gap': commonWithout('node', 'wallet'),
  'ledger migrate': commonWithout('node', 'dev', 'network', 'data-dir', 'wallet'),
  'usdc-payments': commonWithout('node', 'wallet'),
};

/**
 * Every command and subcommand (`"token issue"`, `"status"`) with every option its parser
 * accepts that means something to it, common ones included: what `<command> [sub] --help` lists
 * (the parsers also take, and ignore, the common flags a command has no use for). Built from the tables the
 * parsers read (this file's, AGENT_CLI_TABLES, ECONOMY_OPTIONS, DEVNET_OPTIONS, FLEET_OPTIONS).
 */
export async function commandOptionTables(): Promise<Record<string, Options>> {
  const tables: Record<string, Options> = {};
  for (const [k, o] of Object.entries(CORE_OPTIONS)) tables[k] = { ...(CORE_COMMON[k as keyof typeof CORE_OPTIONS] ?? COMMON), ...(o as Options) };
  for (const [k, t] of Object.entries(AGENT_CLI_TABLES)) tables[k] = { ...(t.common === 'node-read' ? COMMON_NODE_READ : COMMON), ...t.flags };
  const { ECONOMY_OPTIONS } = await import('./economyCli.js');
  for (const [k, o] of Object.entries(ECONOMY_OPTIONS)) tables[k] = o as Options;
  tables.devnet = (await import('./devnet.js')).DEVNET_OPTIONS as Options;
  tables['receipt verify'] = { ...COMMON, ...(await import('./receiptCommand.js')).RECEIPT_OPTIONS };
  tables['fleet status'] = { ...COMMON, ...Object.fromEntries(FLEET_OPTIONS.map((o) => [o.flag, { type: o.value ? ('string' as const) : ('boolean' as const) }])) };
  return tables;
}

/**
 * `native-node <command> [sub] --help`: for a command or subcommand, its usage, sentence, every
 * flag of its parser's table described, and an example (commandDocs.ts); for a family named
 * alone (`token --help`), its subcommands and the flags of all of them.
 */
async function helpOf(cmd: string, sub: string | undefined): Promise<string | undefined> {
  if (cmd === 'start') return startHelp();
  const tables = await commandOptionTables();
  const key = sub !== undefined && (tables[`${cmd} ${sub}`] || COMMAND_DOCS[`${cmd} ${sub}`]) ? `${cmd} ${sub}` : cmd;
  if (tables[key] || COMMAND_DOCS[key]) return commandHelpText(key, tables[key] ?? {});
  const subs = Object.keys(COMMAND_DOCS).filter((k) => k.startsWith(`${cmd} `));
  if (subs.length === 0) return undefined;
  const flags: Options = {};
  for (const k of subs) Object.assign(flags, tables[k]);
  const lines = [`Usage: npx native-node ${cmd} <${subs.map((k) => k.split(' ')[1]).join('|')}> … [flags]`, ''];
  for (const k of subs) lines.push(`  npx native-node ${k} ${COMMAND_DOCS[k].args}`.trimEnd(), ...wrap(COMMAND_DOCS[k].summary, 100, '      '));
  lines.push('', ...wrap(`Flags of the ${cmd} commands (npx native-node ${cmd} <subcommand> --help lists one subcommand's, with an example):`, 100, ''));
  for (const [name, spec] of Object.entries(flags)) {
    const d = subs.map((k) => flagDoc(k, name)).find(Boolean);
    lines.push(`  --${name}${spec.type === 'string' ? ` <${d?.value ?? 'value'}>` : ''}`, ...wrap(d ? `${d.description}${d.default ? ` (default: ${d.default})` : ''}` : '', 100, '      '));
  }
  return lines.join('\n');
}

/** `quote` and `call` take a service id and an optional request (`--` before a request that starts with a dash). */
async function start(args: string[], cenv: CliEnv): Promise<number> {
  const config = loadConfig(args, cenv.env, { cwd: cenv.cwd, devAddress });
  const log = createLogger({ level: config.logLevel, format: config.logFormat });
  const { runNode } = await import('../node/node.js');
  try {
    await runNode(config, log);
  } catch (e) {
    log.fatal({ err: e, code: isNodeError(e) ? e.code : undefined }, 'node failed');
    throw listenErrorOneLine(e, config);
  }
  return 0;
}

/** Runs the command line with `argv` (without node and script); returns the exit code. */
export async function main(argv: string[], cenv: CliEnv = { env: process.env, cwd: process.cwd() }): Promise<number> {
  const json = argv.includes('--json');
  const out = output(json);
  const [cmd, ...rest] = argv;
  try {
    // `<command> [sub] --help`: that command's usage, flags and example (start's from its option table).
    const flags = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest; // a request after `--` may be anything
    if (cmd !== undefined && (flags.includes('--help') || flags.includes('-h'))) {
      const help = await helpOf(cmd, rest[0]);
      if (help) {
        process.stdout.write(`${help}\n`);
        return 0;
      }
    }
    // A family's subcommand mistyped (`token isue`): named, with the nearest one.
    const subs = cmd === undefined ? [] : Object.keys(COMMAND_DOCS).filter((k) => k.startsWith(`${cmd} `)).map((k) => k.split(' ')[1]);
    if (subs.length > 0 && rest[0] !== undefined && !rest[0].startsWith('-') && !subs.includes(rest[0])) {
      const near = nearest(rest[0], subs);
      throw new NodeError(CliErrorCode.USAGE, `unknown ${cmd} command ${rest[0]}${near ? ` (did you mean ${cmd} ${near}?)` : ''}; try: ${subs.map((x) => `${cmd} ${x}`).join(' | ')}`);
    }
    switch (cmd) {
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(`${topHelpText(NODE_VERSION)}\n`);
        return 0;
      case 'version':
      case '--version':
        out.print(NODE_VERSION, { version: NODE_VERSION });
        return 0;
      case 'start':
        return await start(rest.filter((a) => a !== '--json'), cenv).catch((e: unknown) => Promise.reject(withFlagSuggestion(e)));
      case 'devnet':
        return await (await import('./devnet.js')).runDevnet(rest, cenv.cwd);
      case 'token':
      case 'pool':
      case 'swap':
      case 'stake':
      case 'unstake':
      case 'stable':
      case 'bridge':
      case 'simulate':
        return await (await import('./economyCli.js')).runEconomyCommand(cmd, rest, out, cenv);
      case 'status': {
        const { values } = parse(rest, CORE_OPTIONS.status, 0);
        return await status(context(values, out, cenv));
      }
      case 'tx': {
        const { values, positionals } = parse(rest, CORE_OPTIONS.tx, 1);
        return await txCommand(context(values, out, cenv), values, positionals[0]);
      }
      case 'send': {
        const { values, positionals } = parse(rest, CORE_OPTIONS.send, 2);
        return await send(context(values, out, cenv), values, positionals[0], positionals[1]);
      }
      case 'quote': {
        const { values, positionals } = parseCallArgs(rest, CORE_OPTIONS.quote);
        return await quoteCommand(context(values, out, cenv), positionals[0], positionals[1]);
      }
      case 'call': {
        const { values, positionals } = parseCallArgs(rest, CORE_OPTIONS.call);
        return await callCommand(context(values, out, cenv), values, positionals[0], positionals[1]);
      }
      case 'pay': {
        const { values } = parse(rest, CORE_OPTIONS.pay, 0);
        return await payCommand(context(values, out, cenv), values);
      }
      case 'agent':
      case 'service':
      case 'moderate': {
        const [sub, ...args] = rest;
        const n = agentCliPositionals(cmd, sub);
        const table = AGENT_CLI_TABLES[`${cmd} ${sub}`];
        const parsed = parse(args, table?.flags ?? {}, n);
        const ctx = context(parsed.values, out, cenv);
        return await runAgentCommand(cmd, sub, {
          out,
          client: ctx.client,
          values: parsed.values,
          positionals: parsed.positionals,
          env: cenv.env,
          status: () => nodeStatus(ctx),
          wallet: async () => {
            const s = await nodeStatus(ctx);
            return unlockWallet(ctx, walletRef(ctx, s.network), s.network);
          },
          waitMined: (id) => waitMined(ctx, id, timeoutOption(parsed.values)),
        });
      }
      case 'rdap-bootstrap': {
        const { values } = parse(rest, CORE_OPTIONS['rdap-bootstrap'], 0);
        const { refreshRdapBootstrap } = await import('./rdapBootstrapCommand.js');
        const r = await refreshRdapBootstrap({ out: values.out as string | undefined, url: values.url as string | undefined, cwd: cenv.cwd });
        out.print(`${r.file}: ${r.tlds} TLDs, published ${r.publication} (${r.url})`, r);
        return 0;
      }
      case 'wallet':
        return await runWalletCommand(rest, out, cenv);
      case 'sanctions': {
        const [sub, ...args] = rest;
        const { values } = parse(args, CORE_OPTIONS['sanctions update'], 0);
        if (sub !== 'update') throw new NodeError(CliErrorCode.USAGE, `unknown sanctions command ${sub ?? '(none)'}; try: sanctions update`);
        const ctx = context(values, out, cenv);
        return await (await import('../node/sanctions.js')).sanctionsUpdate(ctx.config, ctx.out, { OFAC: values['ofac-url'] as string | undefined, UN: values['un-url'] as string | undefined, EU: values['eu-url'] as string | undefined });
      }
      case 'data': {
        const sub = rest[0];
        const name = parse(rest.slice(1), CORE_OPTIONS[sub === 'install' ? 'data install' : 'data status'], sub === 'install' ? 1 : 0).positionals[0];
        const packs = await import('../node/dataPacks.js');
        if (sub === 'status') {
          const all = Object.values(packs.DATA_PACKS).map(packs.dataPackStatus);
          out.print(all.map((p) => `${p.name}: ${p.installed ? 'installed' : 'not installed'} (${p.description}; ${Object.entries(p.packages).map(([k, v]) => `${k}@${v}`).join(', ')}) in ${p.dir}`).join('\n'), { packs: all });
          return 0;
        }
        if (sub !== 'install') throw new NodeError(CliErrorCode.USAGE, `unknown data command ${sub ?? '(none)'}; try: data status | data install <pack>`);
        const pack = packs.dataPack(name);
        if (!out.json) process.stderr.write(`installing the ${pack.name} data pack into ${pack.dir} (npm ci)…\n`);
        const st = await packs.installDataPack(pack);
        out.print(`${st.name}: installed (${Object.entries(st.packages).map(([k, v]) => `${k}@${v}`).join(', ')}) in ${st.dir}; paid calls to its service work at once, the catalog shows it active after the next health check (about a minute)`, st);
        return 0;
      }
      case 'ledger': {
        const [sub, ...args] = rest;
        if (sub === 'migrate') {
          const { values } = parse(args, CORE_OPTIONS['ledger migrate'], 0);
          return await (await import('./ledgerMigrateCommand.js')).ledgerMigrateCommand(context(values, out, cenv).config, out, { grant: values.grant as string | undefined });
        }
        if (sub !== 'gap') throw new NodeError(CliErrorCode.USAGE, 'usage: npx native-node ledger gap [--refund | --forget] | ledger migrate --ledger postgres://owner@… [--grant <role>]');
        const { values } = parse(args, CORE_OPTIONS['ledger gap'], 0);
        const ctx = context(values, out, cenv);
        const gap = await import('./ledgerGapCommand.js');
        return await gap.ledgerGapCommand({ ...ctx.config, dataDir: gap.stoppedNodeDataDir(ctx.config, cenv.cwd) }, ctx.out, { refund: values.refund === true, forget: values.forget === true });
      }
      case 'fleet':
        return await (await import('./fleetCommand.js')).runFleetCommand(rest, out, cenv);
      case 'receipt':
        return (await import('./receiptCommand.js')).runReceiptCommand(rest, out);
      case 'usdc-payments': {
        const { values } = parse(rest, CORE_OPTIONS['usdc-payments'], 0);
        const ctx = context(values, out, cenv);
        const dataDir = (await import('./ledgerGapCommand.js')).stoppedNodeDataDir(ctx.config, cenv.cwd);
        return await (await import('./usdcPaymentsCommand.js')).usdcPaymentsCommand({ ...ctx.config, dataDir }, ctx.out, values.status as string | undefined);
      }
      default: {
        const near = nearest(cmd, commandNames());
        throw new NodeError(CliErrorCode.UNKNOWN_COMMAND, `unknown command ${cmd}${near ? ` (did you mean ${near}?)` : ''}; npx native-node help lists the commands`);
      }
    }
  } catch (e) {
    const code = isNodeError(e) ? e.code : 'internal_error';
    let message = e instanceof Error ? e.message : String(e);
    // A refused flag names the help that lists the command's flags.
    if (cmd && cmd !== 'start' && /^(unknown flag --|--[\w-]+ (needs a value|takes no value))/.test(message)) {
      const sub = rest[0] !== undefined && COMMAND_DOCS[`${cmd} ${rest[0]}`] ? ` ${rest[0]}` : '';
      message = `${message}; npx native-node ${cmd}${sub} --help lists its flags`;
    }
    if (json) process.stdout.write(`${JSON.stringify({ error: { code, message } })}\n`);
    else process.stderr.write(`error ${code}: ${message}\n`);
    if (code === 'internal_error' && e instanceof Error && e.stack && cenv.env.NATIVE_DEBUG) process.stderr.write(`${e.stack}\n`);
    return code === 'internal_error' ? 70 : code === ClientErrorCode.UNREACHABLE ? 3 : 2;
  }
}

/** What the economy's commands (cli/economyCli.ts) borrow from this CLI: options, context, wallet, waiting. */
