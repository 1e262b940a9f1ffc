/**
 * What `native-node help` and `native-node <command> --help` say: each command's group, usage
 * line, one sentence and an example, and a description (with its default) of every flag. The
 * flags a help lists come from the option table the command's parser reads
 * (`commandOptionTables()` in cli.ts); this file only words them, and a test runs every
 * command's --help and checks that no flag lacks a description.
 */
import { distance } from 'fastest-levenshtein';
import type { Options } from './cliKit.js';
import { wrap } from './startHelp.js';

/** The flags every command's table starts with (cliKit's COMMON), listed apart in a help. */
const COMMON_FLAGS = ['json', 'node', 'config', 'dev', 'network', 'data-dir', 'wallet'];

/** A flag in words: the value's placeholder, what it does and its default. */
export interface FlagDoc {
  readonly value?: string;
  readonly description: string;
  readonly default?: string;
}

/** The top-level help's groups, in order. */
export const COMMAND_GROUPS = ['node', 'wallet', 'pay and call', 'economy', 'agents', 'fleet', 'data'] as const;

/** A command in words. */
export interface CommandDoc {
  readonly group: (typeof COMMAND_GROUPS)[number];
  /** Arguments after the command's name (`<serviceId> [request]`). */
  readonly args: string;
  /** One sentence. */
  readonly summary: string;
  /** An example that runs as shown against a devnet node started by `npm start`. */
  readonly example: string;
  /** Descriptions of this command's own flags (the shared ones are in SHARED_FLAGS). */
  readonly flags?: Readonly<Record<string, FlagDoc>>;
  /** Listed in the top-level help under its group (default true; subcommands of one family share a line). */
  readonly listed?: boolean;
}

/** The flags most commands share, and their meaning wherever a command's own table does not reword them. */
export const SHARED_FLAGS: Readonly<Record<string, FlagDoc>> = {
  json: { description: 'print machine-readable JSON instead of text' },
  node: { value: 'url', description: 'the node to talk to', default: 'http://127.0.0.1:8402' },
  config: { value: 'file', description: 'JSON config file to read network, data directory and wallet from', default: 'none' },
  dev: { description: 'the devnet (same as --network devnet)' },
  network: { value: 'name', description: 'mainnet or devnet, for commands that do not ask a node', default: "the node's, else mainnet" },
  'data-dir': { value: 'dir', description: 'data directory (where the devnet dev wallet is)', default: 'data/<network>' },
  wallet: { value: 'file', description: 'wallet file to sign with', default: 'the dev wallet on the devnet, else ~/.native-node/wallet.json' },
  wait: { description: 'wait until the transaction is in a block' },
  timeout: { value: 's', description: 'longest wait for the block, seconds', default: '120' },
  fee: { value: 'NATIVE', description: 'fee to pay', default: "the node's minimum fee rate × the size" },
};


/** --data-dir of the commands that open a stopped node's ledger (cli/ledgerGapCommand.ts `stoppedNodeDataDir`). */
const STOPPED_NODE_DATA_DIR: FlagDoc = { value: 'dir', description: 'the stopped node’s data directory, where its ledger is', default: 'data/<network>, or the one data/<network> here holding a ledger when that one holds none' };

/** Every command and subcommand (`"token issue"`), keyed as `commandOptionTables()` keys them. */
export const COMMAND_DOCS: Readonly<Record<string, CommandDoc>> = {
  start: { group: 'node', args: '[flags]', summary: 'Runs a node (start --help lists its flags, which are also environment variables and config keys).', example: 'npx native-node start --dev --http-port 8402' },
  devnet: {
    group: 'node',
    args: '[--nodes N]',
    summary: 'Runs a local network of N connected devnet nodes on one genesis, mining; one Ctrl-C stops them all.',
    example: 'npx native-node devnet --nodes 3 --http-port 18402 --p2p-port 18403',
    flags: {
      nodes: { value: 'n', description: 'how many nodes', default: '3' },
      'data-dir': { value: 'dir', description: 'directory of the nodes’ data directories', default: 'data/devnet-network' },
      'http-port': { value: 'port', description: 'HTTP port of the first node; node i listens on port + 10 × i', default: '8402' },
      'p2p-port': { value: 'port', description: 'p2p port of the first node; node i listens on port + 10 × i', default: '8403' },
      'mine-threads': { value: 'n', description: 'mining threads per node', default: '1' },
      ledger: { value: 'postgres://…', description: 'one PostgreSQL ledger for every node: a devnet fleet (one payee, one seller id, any node settles any payment)', default: 'each node its own LevelDB ledger' },
      mine: { description: 'mine on every node (--no-mine: none mines)', default: 'on' },
      'log-level': { value: 'level', description: 'log level of the nodes (debug, info, warn, error)', default: 'info' },
      json: { description: 'print each node’s JSON log lines instead of the summary' },
    },
  },
  status: { group: 'node', args: '', summary: "Prints the node's network, tip, difficulty, mempool, payments, mining and Stratum.", example: 'npx native-node status' },
  tx: { group: 'node', args: '<txId>', summary: 'Prints a transaction, pending or mined.', example: 'npx native-node tx <txId> --wait' },
  version: { group: 'node', args: '', summary: 'Prints the version.', example: 'npx native-node version' },
  'wallet new': { group: 'wallet', args: '', summary: 'Creates an encrypted wallet (passphrase from NATIVE_WALLET_PASSPHRASE or the terminal) and prints its address.', example: 'npx native-node wallet new --wallet my-wallet.json' },
  'wallet show': { group: 'wallet', args: '', summary: "Prints the wallet's address.", example: 'npx native-node wallet show' },
  'wallet balance': { group: 'wallet', args: '', summary: "Prints the wallet's balance and nonce, read from the node.", example: 'npx native-node wallet balance' },
  send: { group: 'wallet', args: '<address> <amount>', summary: 'NATIVE to an address (amount in NATIVE, e.g. 1.5).', example: 'npx native-node send tnative1fq5h86uq8gu52f0elvehyfel7428h33q4pgmde 1.5 --wait' },
  quote: { group: 'pay and call', args: '<serviceId> [request]', summary: "Prints the price of a paid call (the node's HTTP 402 quote); pays nothing.", example: 'npx native-node quote native-world-clock Europe/Berlin' },
  call: {
    group: 'pay and call',
    args: '<serviceId> [request]',
    summary: 'Pays a service from the wallet, waits for the block and prints the result and the receipt.',
    example: 'npx native-node call native-world-clock Europe/Berlin',
    flags: {
      'max-price': { value: 'NATIVE', description: 'refuse to pay more than this', default: 'no limit' },
      timeout: { value: 's', description: 'longest wait for the payment’s block and the answer, seconds', default: '120' },
      tx: { value: 'txId', description: 'settle an earlier payment instead of paying again (broadcast again if the node lost it)' },
      salt: { value: 'hex', description: 'the salt the earlier call printed (needed with --tx once that payment has settled)' },
    },
  },
  pay: {
    group: 'pay and call',
    args: '--quote-file <q.json>',
    summary: 'Signs the agent_invoke paying a saved 402 quote, bound to the request with a fresh salt, and prints its hex, tx id and salt.',
    example: 'npx native-node pay --quote-file quote.json --request Europe/Berlin --print',
    flags: {
      'quote-file': { value: 'file', description: 'the saved 402 answer (its JSON body)' },
      request: { value: 'text', description: 'the request the payment commits to', default: "the quote's" },
      print: { description: 'print the signed transaction without broadcasting it' },
      nonce: { value: 'n', description: 'the account nonce to sign with (offline)', default: "the node's pending nonce" },
      'include-key': { description: 'include the public key (the account’s first transaction, offline)' },
      'fee-rate': { value: 'n', description: 'fee rate in base units per byte (offline)', default: "the node's minimum" },
    },
  },
  'receipt verify': {
    group: 'pay and call',
    args: '<file>',
    summary: "Checks a paid call's signed receipts against the seller's DID document, that they cover the result, and what the verdict rests on: the pins given and, with --node, the native payment on chain (exit 0 valid, 1 not).",
    example: 'npx native-node receipt verify answer.json --did-document did.json --payee native1… --tx 9c1e… --node http://127.0.0.1:8402',
    flags: {
      'did-document': { value: 'did.json', description: "the seller's /.well-known/did.json, when the file is the 200 body alone (a saved copy proves nothing by itself: pin the payee)", default: "the bundle's didDocument" },
      did: { value: 'did:web:…|url', description: "the seller's DID (or its base URL): the document must be that DID's" },
      payee: { value: 'address', description: 'the payee you paid (the payTo of your payment): the receipt must be signed by its key' },
      seller: { value: 'id', description: 'the seller id (16 hex characters) the receipt must name' },
      tx: { value: 'id', description: 'the payment (native tx id or Base transaction hash) the receipt must be for' },
      payer: { value: 'address', description: 'the payer the receipt must name' },
      amount: { value: 'atomic', description: 'the amount paid, in atomic units (base units of NATIVE, USDC atomic units)' },
      resource: { value: 'url', description: 'the paid resource URL the receipt must name' },
      node: { value: 'url', description: 'a node of the chain you trust: checks that the native payment is mined and paid the payee that signed' },
    },
  },
  'agent register': {
    group: 'agents',
    args: '<name> --description <text>',
    summary: 'Registers the wallet as a provider agent.',
    example: 'npx native-node agent register my-agent --description "answers questions" --wait',
    flags: { description: { value: 'text', description: 'what the agent does (required)' } },
  },
  'agent update': {
    group: 'agents',
    args: '<name> --description <text>',
    summary: 'Updates the wallet’s agent.',
    example: 'npx native-node agent update my-agent --description "answers faster" --wait',
    listed: false,
    flags: { description: { value: 'text', description: 'what the agent does (required)' } },
  },
  'agent show': {
    group: 'agents',
    args: '',
    summary: 'Prints an agent and its services (default: the wallet’s).',
    example: 'npx native-node agent show',
    listed: false,
    flags: { name: { value: 'name|address', description: 'the agent to show, by name or address', default: 'the wallet’s agent' } },
  },
  'agent serve': {
    group: 'agents',
    args: '--service <id> (--exec "<command>" | --forward <url>)',
    summary: 'Sells a service: takes paid jobs from the node’s inbox, runs each and posts the answer.',
    example: 'npx native-node agent serve --service my-echo --exec "cat"',
  },
  'service register': {
    group: 'agents',
    args: '<id> --name <n> --description <d> --category <c> --price <NATIVE>',
    summary: 'Lists a service of the wallet’s agent in the catalog.',
    example: 'npx native-node service register my-echo --name Echo --description "echoes the request" --category utility --price 0.001 --wait',
  },
  'service update': { group: 'agents', args: '<id> --name <n> --description <d> --category <c> --price <NATIVE>', summary: 'Updates a service of the wallet’s agent (every field again; it goes back to moderation).', example: 'npx native-node service update my-echo --name Echo --description "echoes the request" --category utility --price 0.002 --wait', listed: false },
  'service retire': { group: 'agents', args: '<id>', summary: 'Retires a service of the wallet’s agent.', example: 'npx native-node service retire my-echo --wait', listed: false },
  'service list': { group: 'agents', args: '', summary: 'Lists the provider services on the chain.', example: 'npx native-node service list' },
  'moderate approve': { group: 'agents', args: '<serviceId>', summary: 'Approves a service (signed with a moderator’s wallet; on the devnet the dev wallet is one).', example: 'npx native-node moderate approve my-echo --wait' },
  'moderate suspend': { group: 'agents', args: '<serviceId>', summary: 'Suspends a service (signed with a moderator’s wallet).', example: 'npx native-node moderate suspend my-echo --reason spam --wait', listed: false },
  'moderate reject': { group: 'agents', args: '<serviceId>', summary: 'Rejects a service (signed with a moderator’s wallet).', example: 'npx native-node moderate reject my-echo --reason spam --wait', listed: false },
  'moderate label': { group: 'agents', args: '<address> <label>', summary: 'Labels an address in the explorer (signed with a moderator’s wallet).', example: 'npx native-node moderate label tnative1fq5h86uq8gu52f0elvehyfel7428h33q4pgmde "node payee" --wait', listed: false },
  'token list': { group: 'economy', args: '', summary: 'Lists the tokens.', example: 'npx native-node token list' },
  'token info': { group: 'economy', args: '<SYMBOL>', summary: 'Prints a token.', example: 'npx native-node token info USDN', listed: false },
  'token issue': { group: 'economy', args: '<SYMBOL> <name> <decimals> <maxSupply> [initialSupply]', summary: 'Issues a token.', example: 'npx native-node token issue DEMO "Demo token" 6 1000000 1000 --wait' },
  'token mint': { group: 'economy', args: '<SYMBOL> <amount>', summary: 'Mints a token the wallet issued.', example: 'npx native-node token mint DEMO 10 --wait', listed: false },
  'token burn': { group: 'economy', args: '<SYMBOL> <amount>', summary: 'Burns tokens of the wallet.', example: 'npx native-node token burn DEMO 1 --wait', listed: false },
  'token back': { group: 'economy', args: '<SYMBOL> <NATIVE>', summary: 'Adds NATIVE backing to a token the wallet issued.', example: 'npx native-node token back DEMO 1 --wait', listed: false },
  'token send': { group: 'economy', args: '<SYMBOL> <address> <amount>', summary: 'Sends tokens.', example: 'npx native-node token send DEMO tnative1fq5h86uq8gu52f0elvehyfel7428h33q4pgmde 1 --wait', listed: false },
  'token flags': { group: 'economy', args: '<SYMBOL>', summary: 'Freezes or hides a token the wallet issued (flags not given are cleared).', example: 'npx native-node token flags DEMO --hidden --wait', listed: false },
  'pool list': { group: 'economy', args: '', summary: 'Lists the pools.', example: 'npx native-node pool list' },
  'pool info': { group: 'economy', args: '<A-B>', summary: 'Prints a pool.', example: 'npx native-node pool info NATIVE-USDN', listed: false },
  'pool create': { group: 'economy', args: '<A> <amountA> <B> <amountB>', summary: 'Creates a pool with its first liquidity.', example: 'npx native-node pool create NATIVE 10 DEMO 100 --wait', listed: false },
  'pool add': { group: 'economy', args: '<A> <amountA> <B> <amountB>', summary: 'Adds liquidity to a pool.', example: 'npx native-node pool add NATIVE 1 DEMO 10 --wait', listed: false },
  'pool remove': { group: 'economy', args: '<A> <B> <shares>', summary: 'Removes liquidity (LP shares) from a pool.', example: 'npx native-node pool remove NATIVE DEMO 1000 --wait', listed: false },
  swap: { group: 'economy', args: '"<amount> <FROM> -> <TO>"', summary: 'Swaps through a pool (or two, via NATIVE) and prints what it received.', example: 'npx native-node swap "1 NATIVE -> USDN" --wait' },
  stake: { group: 'economy', args: '<NATIVE>', summary: 'Stakes NATIVE for a tier’s lock and reward.', example: 'npx native-node stake 10 --tier 0 --wait' },
  unstake: { group: 'economy', args: '<stakeTxId>', summary: 'Ends an unlocked stake with its reward.', example: 'npx native-node unstake <stakeTxId> --wait', listed: false },
  'stable mint': { group: 'economy', args: '<SYMBOL> <collateral NATIVE> <amount>', summary: 'Mints a USD stablecoin against NATIVE collateral.', example: 'npx native-node stable mint USDN 10 5 --wait' },
  'stable redeem': { group: 'economy', args: '<SYMBOL> <amount>', summary: 'Redeems a USD stablecoin for its collateral.', example: 'npx native-node stable redeem USDN 1 --wait', listed: false },
  'bridge record': { group: 'economy', args: '<network> in|out <amount> <ref>', summary: 'Records a bridge transfer (signed with the bridge authority’s wallet).', example: 'npx native-node bridge record base in 1 0xabc --wait' },
  simulate: { group: 'economy', args: '', summary: 'Drives the devnet actors: transfers, swaps, liquidity, stakes at a rate.', example: 'npx native-node simulate --rate 2 --duration 10' },
  'fleet status': { group: 'fleet', args: '', summary: 'The nodes of a fleet on one PostgreSQL ledger: URL, version, tip and lag, the signer lease holder, nodes gone, ledger size.', example: 'npx native-node fleet status --ledger postgres://user@127.0.0.1/native' },
  'data status': { group: 'data', args: '', summary: "Lists the services' data packs and whether they are installed.", example: 'npx native-node data status' },
  'data install': { group: 'data', args: '<pack>', summary: 'Installs a data pack (npm ci from a lock pinning each tarball’s sha512).', example: 'npx native-node data install geoip' },
  'sanctions update': { group: 'data', args: '', summary: 'Downloads the OFAC, UN and EU sanctions lists into <data dir>/sanctions (validated, swapped atomically).', example: 'npx native-node sanctions update' },
  'rdap-bootstrap': { group: 'data', args: '', summary: 'Refreshes the IANA RDAP bootstrap registry of native-domain-info.', example: 'npx native-node rdap-bootstrap --out rdap.json' },
  'ledger migrate': {
    group: 'data',
    args: '',
    summary: "Applies the migrations a fleet's PostgreSQL ledger lacks, as the role owning its tables; --grant gives the nodes' role what a running node needs.",
    example: 'npx native-node ledger migrate --ledger postgres://native_owner@127.0.0.1/native_ledger --grant native_node',
    flags: {
      ledger: { value: 'postgres://…', description: 'the fleet’s ledger, reached as the role that owns its tables', default: 'NATIVE_LEDGER, else the config file’s' },
      grant: { value: 'role', description: 'grant this role the privileges a running node needs (operator’s guide, Fleet mode, Database roles)', default: 'no grant' },
    },
  },
  'ledger gap': { group: 'data', args: '', summary: 'Lists the stretches of chain the payment ledger never judged, or has the node refund or forget them (node stopped; a fleet\'s PostgreSQL ledger, --ledger: with the nodes running).', example: 'npx native-node ledger gap --dev', flags: { 'data-dir': STOPPED_NODE_DATA_DIR } },
  'usdc-payments': { group: 'data', args: '', summary: "Lists the ledger's USDC payments (node stopped).", example: 'npx native-node usdc-payments --dev --status settled', flags: { 'data-dir': STOPPED_NODE_DATA_DIR } },
};

/** Flags some commands word their own way; looked up after the command's own and before SHARED_FLAGS. */
const FAMILY_FLAGS: Readonly<Record<string, FlagDoc>> = {
  // agent, service, moderate
  description: { value: 'text', description: 'what the service does (required)' },
  capabilities: { value: 'a,b', description: 'comma-separated capabilities of the agent', default: 'none' },
  payout: { value: 'address', description: 'where the agent’s provider payouts go', default: 'the wallet' },
  contact: { value: 'text', description: 'how to reach the agent’s operator', default: 'none' },
  service: { value: 'id', description: 'the service to take jobs for (required)' },
  exec: { value: 'command', description: 'run this command per job: the request on its stdin, its stdout the result, a non-zero exit a failure (this or --forward)' },
  forward: { value: 'url', description: 'POST each job to this local URL; its JSON answer is the result (this or --exec)' },
  name: { value: 'text', description: 'the service’s display name (required)' },
  category: { value: 'category', description: 'the service’s catalog category (required)' },
  price: { value: 'NATIVE', description: 'the service’s price per call (required)' },
  tags: { value: 'a,b', description: 'comma-separated tags of the service', default: 'none' },
  'request-format': { value: 'text', description: 'how to write a request, shown in the catalog', default: 'none' },
  'request-required': { description: 'refuse calls without a request' },
  'json-input': { description: 'the request is JSON (validated against --schema)' },
  schema: { value: 'JSON|@file', description: 'JSON Schema of the request', default: 'a string of at most 4,096 characters' },
  reason: { value: 'text', description: 'why, recorded on chain with the decision', default: 'none' },
  'job-timeout': { value: 's', description: 'seconds a job may take before the call is refunded (1-30)', default: '15' },
  // economy
  hidden: { description: 'token list: include hidden tokens; token flags: hide the token' },
  stable: { description: 'issue a USD stablecoin (backed by NATIVE collateral)' },
  to: { value: 'address', description: 'who receives the minted tokens', default: 'the wallet' },
  frozen: { description: 'freeze the token (no transfers, swaps or mints)' },
  asset: { value: 'SYMBOL', description: 'only pools holding this asset', default: 'all pools' },
  'min-shares': { value: 'n', description: 'refuse fewer LP shares than this', default: '0' },
  'max-slippage': { value: '%', description: 'refuse to receive less than the quote minus this', default: '1%' },
  expiry: { value: 'blocks', description: 'blocks the swap stays valid for', default: '20' },
  tier: { value: 'n|name', description: 'staking tier (index or name, see GET /api/v1/staking)', default: '0' },
  'fee-amount': { value: 'NATIVE', description: 'the bridge fee of the record', default: '0' },
  account: { value: 'address', description: 'the account the bridge record credits or debits', default: 'the wallet' },
  rate: { value: 'n', description: 'actions per second', default: '5' },
  duration: { value: 's', description: 'seconds to run', default: 'until Ctrl-C' },
  seed: { value: 'n', description: 'seed of the actors’ random choices', default: 'random' },
  // data, ledger
  out: { value: 'file', description: 'where to write the registry', default: 'services/web/rdapBootstrap.json' },
  url: { value: 'url', description: 'where to download the registry from', default: 'https://data.iana.org/rdap/dns.json' },
  'ofac-url': { value: 'url', description: 'where to download the OFAC SDN list from', default: 'the official OFAC address' },
  'un-url': { value: 'url', description: 'where to download the UN consolidated list from', default: 'the official UN address' },
  'eu-url': { value: 'url', description: 'where to download the EU consolidated list from', default: 'the official EU address' },
  refund: { description: 'have the node refund the gaps’ payments at its next start' },
  forget: { description: 'forget the gaps (their payments are neither served nor refunded)' },
  ledger: { value: 'url|dir', description: 'the ledger (postgres://… or a directory)', default: 'NATIVE_LEDGER, else the config file’s, else <data dir>/ledger' },
  'ledger-witness': { value: 'file', description: 'the ledger witness file outside the data directory (as the node was started with)', default: '$XDG_STATE_HOME/native-node/ledger-witness/<seller id>.json' },
  status: { value: 'status', description: 'only payments in this status (settled, settle_pending, expired_unsettled, failed)', default: 'all' },
};

/** The description of one flag of a command. */
export function flagDoc(command: string, flag: string): FlagDoc | undefined {
  return COMMAND_DOCS[command]?.flags?.[flag] ?? FAMILY_FLAGS[flag] ?? SHARED_FLAGS[flag];
}


/** `native-node <command> --help`: usage, the sentence, every flag of its parser's table with its description and default, an example. */
export function commandHelpText(command: string, options: Options): string {
  const doc = COMMAND_DOCS[command];
  const own: string[] = [];
  const common: string[] = [];
  for (const [name, spec] of Object.entries(options)) {
    const d = flagDoc(command, name);
    const head = `  --${name}${spec.type === 'string' ? ` <${d?.value ?? 'value'}>` : ''}`;
    const text = d ? `${d.description}${d.default ? ` (default: ${d.default})` : ''}` : '';
    (COMMON_FLAGS.includes(name) && !doc?.flags?.[name] ? common : own).push(head, ...wrap(text, 100, '      '));
  }
  return [
    `Usage: npx native-node ${command}${doc?.args ? ` ${doc.args}` : ''}${Object.keys(options).length ? ' [flags]' : ''}`,
    '',
    ...wrap(doc?.summary ?? '', 100, ''),
    '',
    ...(own.length ? ['Flags:', ...own, ''] : []),
    ...(common.length ? ['Common flags:', ...common, ''] : []),
    'Example:',
    `  ${doc?.example ?? `npx native-node ${command}`}`,
  ].join('\n');
}

/** The top-level help: the commands by group, one line each. */
export function topHelpText(version: string): string {
  const out = [`native-node ${version}`, '', 'Usage: npx native-node <command> [arguments] [flags]   (npm run cli -- <command> … works too)', ''];
  // A family's line appears once, in the group of its first subcommand.
  const seen = new Set<string>();
  for (const g of COMMAND_GROUPS) {
    out.push(`${g[0].toUpperCase()}${g.slice(1)}:`);
    for (const [name, d] of Object.entries(COMMAND_DOCS)) {
      if (d.group !== g || d.listed === false) continue;
      const family = name.split(' ')[0];
      const subs = Object.keys(COMMAND_DOCS).filter((k) => k.startsWith(`${family} `)).map((k) => k.split(' ')[1]);
      const label = subs.length > 1 && !['agent', 'service', 'moderate'].includes(family) ? `${family} ${subs.join('|')}` : name;
      if (seen.has(label)) continue;
      seen.add(label);
      const summary = subs.length > 1 && label.includes('|') ? familySummary(family) : d.summary;
      const first = `  ${label.padEnd(30)} `;
      const lines = wrap(summary, 100, ' '.repeat(33));
      out.push(label.length > 30 ? `  ${label}` : `${first}${lines.shift()?.trimStart() ?? ''}`, ...lines);
    }
    out.push('');
  }
  out.push(...wrap('npx native-node <command> --help shows a command’s flags, their defaults and an example; start --help every node flag. Wallet passphrases come from NATIVE_WALLET_PASSPHRASE or the terminal.', 100, ''));
  return out.join('\n');
}

function familySummary(family: string): string {
  switch (family) {
    case 'wallet':
      return 'create a wallet, print its address, its balance';
    case 'token':
      return 'issue, mint, burn, send, back, freeze or list tokens';
    case 'pool':
      return 'create pools, add or remove liquidity, list them';
    case 'stable':
      return 'mint or redeem a USD stablecoin against NATIVE';
    case 'data':
      return 'the services’ data packs: list, install';
    case 'ledger':
      return 'the payment ledger: apply a fleet’s PostgreSQL migrations and grants; list, refund or forget the stretches of chain it never judged (node stopped)';
    default:
      return COMMAND_DOCS[family]?.summary ?? '';
  }
}

/** The word of `candidates` nearest to `word` (a few edits, or a prefix), for "did you mean". */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  const w = word.toLowerCase();
  let best: { c: string; d: number } | undefined;
  for (const c of candidates) {
    const l = c.toLowerCase();
    // Two letters swapped (stauts) count as one edit, as people make them.
    const swapped = l.length === w.length && [...l].sort().join('') === [...w].sort().join('') && [...l].filter((ch, i) => ch !== w[i]).length === 2;
    const d = l === w ? 0 : l.startsWith(w) && w.length >= 3 ? 0.5 : swapped ? 1 : distance(w, l);
    if (!best || d < best.d) best = { c, d };
  }
  return best && best.d <= Math.min(3, Math.max(1, Math.floor(w.length / 3))) ? best.c : undefined;
}

/** The command names people type first (`token`, `status`, …). */
export function commandNames(): string[] {
  return [...new Set([...Object.keys(COMMAND_DOCS).map((k) => k.split(' ')[0]), 'help', 'version'])];
}
