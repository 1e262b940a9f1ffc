/**
 * Node configuration: one options type, its defaults, and `loadConfig`, which merges
 * defaults ← JSON config file (`--config`) ← environment (`NATIVE_*`) ← command-line flags once
 * and validates every layer with ajv, so an error names the option and where it came from.
 *
 * Every option is declared once in `CONFIG_OPTIONS` (config-file key, flag, environment variable,
 * JSON Schema); flags, environment parsing, validation and the operator's guide follow from it.
 * This is the only module (with the CLI) that reads `process.env`-style input.
 *
 * Size (~520 lines): mostly `CONFIG_OPTIONS`, the table of every option, kept in one place so a
 * new option is one entry; the merge and validation around it are short.
 */
import { distance } from 'fastest-levenshtein';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { Ajv, type ValidateFunction } from 'ajv';
import { NodeError } from '../consensus/errors.js';
import { tryDecodeAddress } from '../consensus/address.js';
import type { MempoolOptions } from '../chain/mempool.js';
import type { OutboundOptions } from '../services/outbound/client.js';
import type { ProviderSettings } from '../services/outbound/types.js';
import { OUTBOUND_CONFIG_OPTIONS, outboundOptionsOf } from './outboundConfig.js';
import type { ConfigLayer, ConfigOption, ConfigSource } from './configOption.js';
import { PROVIDER_CONFIG_OPTIONS } from './providersConfig.js';
import { normalisePublicUrl } from './api/publicUrl.js';

/** Error codes of configuration loading. */
export const ConfigErrorCode = {
  INVALID: 'config_invalid',
  FILE_UNREADABLE: 'config_file_unreadable',
  /** The data directory's pinned devnet genesis was made for another `--block-time` (or none): use a new data directory. */
  GENESIS_MISMATCH: 'config_genesis_mismatch',
} as const;

/** The networks a node can run. */
export type NetworkName = 'native-devnet' | 'native-mainnet';
/** How log lines are written (see `NodeConfig.logFormat`). */
export type LogFormat = 'auto' | 'json' | 'pretty';
/** pino log levels. */
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** The resolved configuration of a node (every field set; see `CONFIG_OPTIONS` for each meaning). */
export interface NodeConfig {
  readonly network: NetworkName;
  /** Directory of the chain database and node files (absolute after loading). */
  readonly dataDir: string;
  readonly httpHost: string;
  /** TCP port of the HTTP API; 0 picks a free port (logged in the "listening" line). */
  readonly httpPort: number;
  /** Largest accepted request body, bytes. */
  readonly httpBodyLimit: number;
  /** Milliseconds a request may take before it is answered 503 `request_timeout`. */
  readonly httpTimeout: number;
  /**
   * The base URL every document, the MCP tool list and the quotes name, without a
   * trailing slash; undefined: the address the HTTP API listens on. Never the request's `Host`.
   */
  readonly publicUrl: string | undefined;
  /** Hosts (`name` or `name:port`, lowercase) the HTTP API answers to; others get 421 `misdirected_request`. Empty: every Host. */
  readonly allowedHosts: readonly string[];
  /** JSON-RPC messages one `POST /api/mcp` may carry (a larger batch is refused `mcp_batch_too_large`). */
  readonly mcpMaxBatch: number;
  readonly mine: boolean;
  /** Devnet only: run the built-in economy actors (node/economy/simulator.ts). */
  readonly economy: boolean;
  /** Address paid by mined blocks (bech32m of the network); the dev wallet on the devnet by default. */
  readonly minerAddress: string | undefined;
  readonly mineThreads: number;
  /**
   * Devnet only: interval mining. Seconds between blocks (≥ 1); the built-in miner makes one block
   * per slot of the genesis's schedule and does no hashing in between (chain/pacedMiner.ts), on a
   * genesis at the easiest difficulty with this target spacing. Undefined: the free-running miner.
   */
  readonly blockTime: number | undefined;
  /** Run the Stratum v1 server (node/mining/stratum.ts). */
  readonly stratum: boolean;
  /** Interface of the Stratum server; undefined: the HTTP host. */
  readonly stratumHost: string | undefined;
  /** TCP port of the Stratum server; 0 picks a free port (logged in the "stratum listening" line). */
  readonly stratumPort: number;
  /** HTTP Basic user of JSON-RPC (`POST /rpc`: getblocktemplate, submitblock); RPC is off without user and password. */
  readonly rpcUser: string | undefined;
  readonly rpcPassword: string | undefined;
  /** Answer `/rpc` from clients that are not on the loopback interface. */
  readonly rpcAllowRemote: boolean;
  /**
   * A port of its own for JSON-RPC (at `/` and `/rpc`), with Node's lenient HTTP parser: for
   * miners whose requests the API port refuses (cpuminer 2.5.0 sends Transfer-Encoding and
   * Content-Length together). Undefined: `/rpc` on the HTTP port only.
   */
  readonly rpcPort: number | undefined;
  /** Stratum abuse limits (node/mining/stratum.ts `StratumOptions`; docs/operators-guide.md "Limits"). */
  readonly stratumMaxConnections: number;
  readonly stratumMaxConnectionsPerAddress: number;
  readonly stratumReservedConnections: number;
  /** ms */
  readonly stratumHandshakeTimeout: number;
  /** Shares per second per connection, and its burst. */
  readonly stratumSubmitRate: number;
  readonly stratumSubmitBurst: number;
  readonly stratumBanSeconds: number;
  readonly stratumBanInvalidPercent: number;
  readonly stratumBanMinShares: number;
  /** Wrong JSON-RPC credentials one client address may send per minute before it is refused (429). */
  readonly rpcAuthFailures: number;
  /** Requests per second (and burst) one client address may make to the HTTP API's expensive endpoints; 0: no limit. */
  readonly httpExpensiveRate: number;
  readonly httpExpensiveBurst: number;
  /** Interval of the summary lines of repeated per-client log events, ms. */
  readonly logSummaryInterval: number;
  /** Signature verification worker threads; 0 lets the pool size itself to the cores. */
  readonly verifyThreads: number;
  readonly logLevel: LogLevel;
  /** Wallet file used by the CLI's wallet and send commands (undefined: the network's default). */
  readonly wallet: string | undefined;
  /** Whether the node joins the peer-to-peer network (`--no-p2p`: standalone). */
  readonly p2p: boolean;
  /** Interface of the libp2p TCP listener. */
  readonly p2pHost: string;
  /** libp2p TCP port; 0 picks a free port (logged in the "p2p listening" line). */
  readonly p2pPort: number;
  /** Multiaddrs of peers to connect to at start and keep connected. */
  readonly bootstrap: readonly string[];
  /** Wallet file of the key that receives native payments and signs refunds (devnet: the public dev payee key). */
  readonly payeeWallet: string | undefined;
  /** JSON file of the DID documents published before payee wallet rotations (x402/core/offers.ts readRetiredBindings), resolved against cwd. */
  readonly retiredKeys: string | undefined;
  /** EVM address receiving USDC-rail payments on Base; the USDC rail is off without it. */
  readonly usdcPayTo: string | undefined;
  /** Other sellers with their own ledgers take USDC at the same payTo: only authorizations bound to this seller are taken. */
  readonly usdcPayToShared: boolean;
  /** x402 facilitator of the USDC rail (`/verify`, `/settle`); the USDC rail is off without it. */
  readonly facilitatorUrl: string | undefined;
  /** One header sent to the facilitator, `Name: value` (e.g. an API key); never logged. */
  readonly facilitatorAuthHeader: string | undefined;
  /** Deadline of one facilitator call (`/verify` with its retries, or `/settle`), ms. */
  readonly facilitatorTimeout: number;
  /** The outbound client's options (the `outbound*` keys, node/outboundConfig.ts). */
  readonly outbound: OutboundOptions;
  /** Every option of group `provider` (providers' URLs and keys), keyed like the config file; services read it as `ctx.providers`. */
  readonly providers: ProviderSettings;
  /** Seller block of the business documents (invoice, receipt, credit note, quote); undefined: devnet placeholders. */
  readonly sellerName: string | undefined;
  readonly sellerAddress: string | undefined;
  readonly sellerVatId: string | undefined;
  /** Seconds a valid native payment waits for its settle before it is refunded (x402/native/unhonored.ts). */
  readonly refundWindow: number;
  /** Confirmations a native payment needs before its call runs (the quote's extra.confirmations). */
  readonly confirmations: number;
  /**
   * Where the settlement ledger lives: a PostgreSQL URL (`postgres://…`, a fleet's shared ledger,
   * x402/ledger/pgLedger.ts) or a LevelDB directory; undefined: LevelDB in `<dataDir>/ledger`.
   */
  readonly ledger: string | undefined;
  /**
   * The ledger's witness file outside the data directory (x402/ledger/witness.ts), where backups of the
   * data directory do not restore it: a whole data directory restored from a snapshot is found behind it.
   * Undefined: a LevelDB ledger's default under the user's state directory; a PostgreSQL one, none.
   */
  readonly ledgerWitness: string | undefined;
  /** Keep the mempool in `<dataDir>/mempool.dat` across restarts (chain/mempoolStore.ts). */
  readonly persistMempool: boolean;
  /** Seconds between saves of a changed mempool (0: only at shutdown). */
  readonly mempoolSaveInterval: number;
  /** Byte cap of the mempool's ready pool, MiB (chain/mempool.ts `maxBytes`). */
  readonly mempoolMaxMb: number;
  /** Future-nonce transactions queued in all. */
  readonly mempoolQueueMax: number;
  /** Byte cap of the future-nonce queue, MiB. */
  readonly mempoolQueueMaxMb: number;
  /** Future nonces queued per sender beyond its next ready one. */
  readonly mempoolQueuePerSender: number;
  /** Seconds a queued transaction waits for its gap to fill. */
  readonly mempoolQueueExpiry: number;
  /** Port of the Prometheus `GET /metrics` listener; undefined: no metrics listener. */
  readonly metricsPort: number | undefined;
  /** Interface of the metrics listener. */
  readonly metricsHost: string;
  /** The dashboard's `no_blocks` alert: no block for this many target intervals; undefined: 1.5 on a paced devnet, else 4. */
  readonly alertNoBlockFactor: number | undefined;
  /** Log format: `pretty` (one coloured line per event), `json` (JSON lines) or `auto` (pretty on a terminal). */
  readonly logFormat: LogFormat;
  /** The config file that was read, if any. */
  readonly configFile: string | undefined;
  /** Where each option's value came from (options left at their default are `default`). */
  readonly sources: Readonly<Record<string, ConfigSource>>;
}

/** Defaults that do not depend on the network. `dataDir`, `mine` and `minerAddress` are derived from the network when unset. */
export const defaultNodeConfig = {
  network: 'native-mainnet',
  httpHost: '127.0.0.1',
  httpPort: 8402,
  httpBodyLimit: 256 * 1024,
  httpTimeout: 60_000,
  mineThreads: Math.max(1, availableParallelism() - 1),
  stratum: true,
  stratumPort: 3333,
  rpcAllowRemote: false,
  stratumMaxConnections: 1_000,
  stratumMaxConnectionsPerAddress: 32,
  stratumReservedConnections: 100,
  stratumHandshakeTimeout: 10_000,
  stratumSubmitRate: 50,
  stratumSubmitBurst: 200,
  stratumBanSeconds: 600,
  stratumBanInvalidPercent: 90,
  stratumBanMinShares: 100,
  rpcAuthFailures: 10,
  httpExpensiveRate: 50,
  httpExpensiveBurst: 200,
  allowedHosts: [],
  mcpMaxBatch: 20,
  logSummaryInterval: 60_000,
  verifyThreads: 0,
  logLevel: 'info',
  p2p: true,
  p2pHost: '0.0.0.0',
  p2pPort: 8403,
  bootstrap: [],
  facilitatorTimeout: 15_000,
  usdcPayToShared: false,
  refundWindow: 3600,
  persistMempool: true,
  mempoolSaveInterval: 10,
  mempoolMaxMb: 64,
  mempoolQueueMax: 1024,
  mempoolQueueMaxMb: 8,
  mempoolQueuePerSender: 16,
  mempoolQueueExpiry: 1200,
  metricsHost: '127.0.0.1',
  logFormat: 'auto',
} as const satisfies Partial<NodeConfig>;

/** The mempool's options from the node's configuration (MiB to bytes). */
export function mempoolOptionsOf(c: Pick<NodeConfig, 'mempoolMaxMb' | 'mempoolQueueMax' | 'mempoolQueueMaxMb' | 'mempoolQueuePerSender' | 'mempoolQueueExpiry'>): MempoolOptions {
  const MiB = 1024 * 1024;
  return {
    maxBytes: Math.floor(c.mempoolMaxMb * MiB),
    maxQueued: c.mempoolQueueMax,
    maxQueuedBytes: Math.floor(c.mempoolQueueMaxMb * MiB),
    maxFuturePerSender: c.mempoolQueuePerSender,
    queueExpirySeconds: c.mempoolQueueExpiry,
  };
}

const NETWORK_NAMES = ['devnet', 'native-devnet', 'mainnet', 'native-mainnet'];

export type { ConfigLayer, ConfigOption, ConfigSource } from './configOption.js';

/** Every option of the node, in the order of the help text. */
export const CONFIG_OPTIONS: readonly ConfigOption[] = [
  { key: 'config', flag: 'config', env: 'NATIVE_CONFIG', kind: 'string', schema: { type: 'string', minLength: 1 }, description: 'JSON config file (keys as in this table)', defaultText: 'none' },
  { key: 'dev', flag: 'dev', env: 'NATIVE_DEV', kind: 'boolean', schema: { type: 'boolean' }, description: 'shorthand for --network devnet', defaultText: 'false' },
  { key: 'network', flag: 'network', env: 'NATIVE_NETWORK', kind: 'string', schema: { enum: NETWORK_NAMES }, description: 'devnet | mainnet (or native-devnet | native-mainnet)', defaultText: 'mainnet' },
  { key: 'dataDir', flag: 'data-dir', env: 'NATIVE_DATA_DIR', kind: 'string', schema: { type: 'string', minLength: 1 }, description: 'data directory', defaultText: './data/<network>' },
  { key: 'httpHost', flag: 'http-host', env: 'NATIVE_HTTP_HOST', kind: 'string', schema: { type: 'string', minLength: 1, maxLength: 255 }, description: 'HTTP API interface (0.0.0.0 to expose)', defaultText: '127.0.0.1' },
  { key: 'httpPort', flag: 'http-port', env: 'NATIVE_HTTP_PORT', kind: 'integer', schema: { type: 'integer', minimum: 0, maximum: 65535 }, description: 'HTTP API port (0: any free port)', defaultText: '8402' },
  { key: 'httpBodyLimit', flag: 'http-body-limit', env: 'NATIVE_HTTP_BODY_LIMIT', kind: 'integer', schema: { type: 'integer', minimum: 1024, maximum: 64 * 1024 * 1024 }, description: 'largest request body, bytes', defaultText: '262144' },
  { key: 'httpTimeout', flag: 'http-timeout', env: 'NATIVE_HTTP_TIMEOUT', kind: 'integer', schema: { type: 'integer', minimum: 100, maximum: 600_000 }, description: 'request time limit, ms (a paid call waits for its payment and runs within it)', defaultText: '60000' },
  { key: 'publicUrl', flag: 'public-url', env: 'NATIVE_PUBLIC_URL', kind: 'string', schema: { type: 'string', pattern: '^https?://[^\\s?#]+$', maxLength: 2048 }, description: 'base URL that discovery documents, MCP and quotes name (e.g. https://node.example.org), whatever Host a request carries', defaultText: 'the listening address' },
  { key: 'allowedHosts', flag: 'allowed-hosts', env: 'NATIVE_ALLOWED_HOSTS', kind: 'list', schema: { type: 'array', maxItems: 64, items: { type: 'string', minLength: 1, maxLength: 1024, pattern: '^[A-Za-z0-9.:\\[\\]-]+(,[A-Za-z0-9.:\\[\\]-]+)*$' } }, description: 'hosts (name or name:port, comma-separated or repeated) the HTTP API answers to; another Host gets 421 misdirected_request', defaultText: 'any Host (answered from the public URL)' },
  { key: 'economy', flag: 'economy', env: 'NATIVE_ECONOMY', kind: 'boolean', schema: { type: 'boolean' }, description: 'devnet only: run the built-in economy actors (tokens, stablecoin, pools, swaps, stakes, bridge records)', defaultText: 'off (on with npm start)' },
  { key: 'mine', flag: 'mine', env: 'NATIVE_MINE', kind: 'boolean', schema: { type: 'boolean' }, description: 'run the built-in CPU miner (--no-mine to disable)', defaultText: 'on for devnet, off for mainnet' },
  { key: 'minerAddress', flag: 'miner-address', env: 'NATIVE_MINER_ADDRESS', kind: 'string', schema: { type: 'string', minLength: 1, maxLength: 90 }, description: 'address paid by mined blocks', defaultText: 'the dev wallet on devnet' },
  { key: 'payeeWallet', flag: 'payee-wallet', env: 'NATIVE_PAYEE_WALLET', kind: 'string', schema: { type: 'string', minLength: 1 }, description: 'wallet file of the payee key (receives payments, signs refunds; passphrase in NATIVE_PAYEE_PASSPHRASE)', defaultText: 'devnet: the public dev payee key; mainnet: none (paid calls answer 503)' },
  { key: 'retiredKeys', flag: 'retired-keys', env: 'NATIVE_RETIRED_KEYS', kind: 'string', schema: { type: 'string', minLength: 1 }, description: 'JSON array of the did.json documents published before payee wallet rotations: their keys stay in did.json, so receipts signed before verify', defaultText: 'none' },
  { key: 'usdcPayTo', flag: 'usdc-pay-to', env: 'NATIVE_USDC_PAY_TO', kind: 'string', schema: { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' }, description: 'EVM address receiving USDC on Base (the USDC rail is on with --facilitator-url)', defaultText: 'none (USDC rail off)' },
  { key: 'usdcPayToShared', flag: 'usdc-pay-to-shared', env: 'NATIVE_USDC_PAY_TO_SHARED', kind: 'boolean', schema: { type: 'boolean' }, description: 'other sellers with their own ledgers take USDC at this --usdc-pay-to: accept only authorizations whose nonce is bound to this seller (official clients\' random nonces are refused authorization_unbound)', defaultText: 'false' },
  { key: 'facilitatorUrl', flag: 'facilitator-url', env: 'NATIVE_FACILITATOR_URL', kind: 'string', schema: { type: 'string', pattern: '^https?://[^\\s]+$', maxLength: 2048 }, description: 'x402 facilitator settling the USDC rail (POST /verify, /settle)', defaultText: 'none (USDC rail off)' },
  { key: 'facilitatorAuthHeader', flag: 'facilitator-auth-header', env: 'NATIVE_FACILITATOR_AUTH_HEADER', kind: 'string', schema: { type: 'string', pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]+:[ \\t]*[^\\r\\n]+$", maxLength: 8192 }, description: 'header sent to the facilitator, "Name: value" (e.g. "Authorization: Bearer …")', defaultText: 'none' },
  { key: 'facilitatorTimeout', flag: 'facilitator-timeout', env: 'NATIVE_FACILITATOR_TIMEOUT', kind: 'integer', schema: { type: 'integer', minimum: 100, maximum: 120_000 }, description: 'deadline of one facilitator call (verify with retries, or settle), ms', defaultText: '15000' },
  { key: 'sellerName', flag: 'seller-name', env: 'NATIVE_SELLER_NAME', kind: 'string', schema: { type: 'string', minLength: 1, maxLength: 200 }, description: 'seller name on invoices, receipts, credit notes and quotes', defaultText: 'a devnet placeholder' },
  { key: 'sellerAddress', flag: 'seller-address', env: 'NATIVE_SELLER_ADDRESS', kind: 'string', schema: { type: 'string', minLength: 1, maxLength: 500 }, description: 'seller postal address on the documents (\\n for new lines in a file)', defaultText: 'a devnet placeholder' },
  { key: 'sellerVatId', flag: 'seller-vat-id', env: 'NATIVE_SELLER_VAT_ID', kind: 'string', schema: { type: 'string', minLength: 1, maxLength: 64 }, description: 'seller VAT identification number on the documents', defaultText: 'a devnet placeholder' },
  {
    key: 'confirmations',
    flag: 'confirmations',
    env: 'NATIVE_CONFIRMATIONS',
    kind: 'integer',
    schema: { type: 'integer', minimum: 1, maximum: 100 },
    description: 'confirmations a native payment needs before its call runs (1 = mined; more waits longer and survives deeper reorganizations)',
    defaultText: '1 on the devnet, 3 elsewhere',
  },
  {
    key: 'ledger',
    flag: 'ledger',
    env: 'NATIVE_LEDGER',
    kind: 'string',
    schema: { type: 'string', minLength: 1, maxLength: 2048 },
    description: 'settlement ledger: postgres://user:pass@host:5432/db (PostgreSQL, shared by the nodes of a fleet selling under one payee) or a LevelDB directory',
    defaultText: 'LevelDB in <data-dir>/ledger',
  },
  {
    key: 'ledgerWitness',
    flag: 'ledger-witness',
    env: 'NATIVE_LEDGER_WITNESS',
    kind: 'string',
    schema: { type: 'string', minLength: 1, maxLength: 2048 },
    description: 'the ledger witness file outside the data directory (beside <data-dir>/ledger-witness.json), where your data-directory backups do not restore it: a whole data directory restored from a snapshot is found behind it',
    defaultText: 'LevelDB ledger: $XDG_STATE_HOME/native-node/ledger-witness/<seller id>.json (~/.local/state/… without XDG_STATE_HOME); PostgreSQL: none',
  },
  { key: 'refundWindow', flag: 'refund-window', env: 'NATIVE_REFUND_WINDOW', kind: 'integer', schema: { type: 'integer', minimum: 1, maximum: 30 * 86_400 }, description: 'seconds a valid native payment waits for its settle before the node refunds it', defaultText: '3600' },
  { key: 'persistMempool', flag: 'persist-mempool', env: 'NATIVE_PERSIST_MEMPOOL', kind: 'boolean', schema: { type: 'boolean' }, description: 'keep the mempool in <data-dir>/mempool.dat across restarts (--no-persist-mempool to disable)', defaultText: 'on' },
  { key: 'mempoolSaveInterval', flag: 'mempool-save-interval', env: 'NATIVE_MEMPOOL_SAVE_INTERVAL', kind: 'integer', schema: { type: 'integer', minimum: 0, maximum: 86_400 }, description: 'seconds between saves of a changed mempool (0: only at shutdown)', defaultText: '10' },
  { key: 'mempoolMaxMb', flag: 'mempool-max-mb', env: 'NATIVE_MEMPOOL_MAX_MB', kind: 'number', schema: { type: 'number', minimum: 0.01, maximum: 65_536 }, description: 'byte cap of the mempool (ready transactions), MiB; over it the lowest-fee-rate package is evicted', defaultText: '64' },
  { key: 'mempoolQueueMax', flag: 'mempool-queue-max', env: 'NATIVE_MEMPOOL_QUEUE_MAX', kind: 'integer', schema: { type: 'integer', minimum: 0, maximum: 1_000_000 }, description: 'future-nonce transactions (after a nonce gap) queued in all', defaultText: '1024' },
  { key: 'mempoolQueueMaxMb', flag: 'mempool-queue-max-mb', env: 'NATIVE_MEMPOOL_QUEUE_MAX_MB', kind: 'number', schema: { type: 'number', minimum: 0, maximum: 65_536 }, description: 'byte cap of the future-nonce queue, MiB (its own budget beside --mempool-max-mb)', defaultText: '8' },
  { key: 'mempoolQueuePerSender', flag: 'mempool-queue-per-sender', env: 'NATIVE_MEMPOOL_QUEUE_PER_SENDER', kind: 'integer', schema: { type: 'integer', minimum: 0, maximum: 1024 }, description: 'future nonces a sender may queue beyond its next ready one', defaultText: '16' },
  { key: 'mempoolQueueExpiry', flag: 'mempool-queue-expiry', env: 'NATIVE_MEMPOOL_QUEUE_EXPIRY', kind: 'integer', schema: { type: 'integer', minimum: 1, maximum: 86_400 }, description: 'seconds a queued transaction waits for its nonce gap to fill', defaultText: '1200' },
  { key: 'mineThreads', flag: 'mine-threads', env: 'NATIVE_MINE_THREADS', kind: 'integer', schema: { type: 'integer', minimum: 1, maximum: 256 }, description: 'miner worker threads', defaultText: 'cores - 1 (at least 1)' },
  { key: 'blockTime', flag: 'block-time', env: 'NATIVE_BLOCK_TIME', kind: 'integer', schema: { type: 'integer', minimum: 1, maximum: 600 }, description: 'devnet only: one block every this many seconds (1 to 600), no hashing in between (a new data dir gets a genesis at the easiest difficulty with this spacing)', defaultText: 'none (free-running miner)' },
  { key: 'stratum', flag: 'stratum', env: 'NATIVE_STRATUM', kind: 'boolean', schema: { type: 'boolean' }, description: 'Stratum v1 mining server (--no-stratum to disable)', defaultText: 'on' },
  { key: 'stratumHost', flag: 'stratum-host', env: 'NATIVE_STRATUM_HOST', kind: 'string', schema: { type: 'string', minLength: 1, maxLength: 255 }, description: 'Stratum interface (0.0.0.0 to let miners on other machines in)', defaultText: 'the HTTP host' },
  { key: 'stratumPort', flag: 'stratum-port', env: 'NATIVE_STRATUM_PORT', kind: 'integer', schema: { type: 'integer', minimum: 0, maximum: 65535 }, description: 'Stratum port (0: any free port)', defaultText: '3333' },
  { key: 'rpcUser', flag: 'rpc-user', env: 'NATIVE_RPC_USER', kind: 'string', schema: { type: 'string', minLength: 1, maxLength: 256, pattern: '^[^:]*$' }, description: 'JSON-RPC user (getblocktemplate/submitblock at POST /rpc, HTTP Basic)', defaultText: 'none: RPC off' },
  { key: 'rpcPassword', flag: 'rpc-password', env: 'NATIVE_RPC_PASSWORD', kind: 'string', schema: { type: 'string', minLength: 1, maxLength: 256 }, description: 'JSON-RPC password', defaultText: 'none: RPC off' },
  { key: 'rpcPort', flag: 'rpc-port', env: 'NATIVE_RPC_PORT', kind: 'integer', schema: { type: 'integer', minimum: 0, maximum: 65535 }, description: 'also serve JSON-RPC on this port (at / and /rpc), with a lenient HTTP parser for older miners such as cpuminer', defaultText: 'none: /rpc on the HTTP port only' },
  { key: 'rpcAllowRemote', flag: 'rpc-allow-remote', env: 'NATIVE_RPC_ALLOW_REMOTE', kind: 'boolean', schema: { type: 'boolean' }, description: 'answer /rpc from non-loopback clients', defaultText: 'false' },
  { key: 'stratumMaxConnections', flag: 'stratum-max-connections', env: 'NATIVE_STRATUM_MAX_CONNECTIONS', kind: 'integer', schema: { type: 'integer', minimum: 1, maximum: 100_000 }, description: 'Stratum connections at most', defaultText: '1000' },
  { key: 'stratumMaxConnectionsPerAddress', flag: 'stratum-max-connections-per-address', env: 'NATIVE_STRATUM_MAX_CONNECTIONS_PER_ADDRESS', kind: 'integer', schema: { type: 'integer', minimum: 1, maximum: 100_000 }, description: 'Stratum connections one client address may hold', defaultText: '32' },
  { key: 'stratumReservedConnections', flag: 'stratum-reserved-connections', env: 'NATIVE_STRATUM_RESERVED_CONNECTIONS', kind: 'integer', schema: { type: 'integer', minimum: 0, maximum: 100_000 }, description: 'Stratum slots kept for addresses that hold no connection yet', defaultText: '100' },
  { key: 'stratumHandshakeTimeout', flag: 'stratum-handshake-timeout', env: 'NATIVE_STRATUM_HANDSHAKE_TIMEOUT', kind: 'integer', schema: { type: 'integer', minimum: 1_000, maximum: 600_000 }, description: 'ms a Stratum connection has to subscribe and authorize', defaultText: '10000' },
  { key: 'stratumSubmitRate', flag: 'stratum-submit-rate', env: 'NATIVE_STRATUM_SUBMIT_RATE', kind: 'integer', schema: { type: 'integer', minimum: 1, maximum: 100_000 }, description: 'shares one Stratum connection may submit per second (more are refused unchecked)', defaultText: '50' },
  { key: 'stratumSubmitBurst', flag: 'stratum-submit-burst', env: 'NATIVE_STRATUM_SUBMIT_BURST', kind: 'integer', schema: { type: 'integer', minimum: 1, maximum: 1_000_000 }, description: 'shares one Stratum connection may submit in a burst', defaultText: '200' },
  { key: 'stratumBanSeconds', flag: 'stratum-ban-seconds', env: 'NATIVE_STRATUM_BAN_SECONDS', kind: 'integer', schema: { type: 'integer', minimum: 0, maximum: 30 * 86_400 }, description: 'ban of a Stratum client address whose shares are overwhelmingly invalid, seconds (0: close, no ban)', defaultText: '600' },
  { key: 'stratumBanInvalidPercent', flag: 'stratum-ban-invalid-percent', env: 'NATIVE_STRATUM_BAN_INVALID_PERCENT', kind: 'integer', schema: { type: 'integer', minimum: 1, maximum: 100 }, description: 'share of invalid shares (%) that bans a Stratum connection', defaultText: '90' },
  { key: 'stratumBanMinShares', flag: 'stratum-ban-min-shares', env: 'NATIVE_STRATUM_BAN_MIN_SHARES', kind: 'integer', schema: { type: 'integer', minimum: 10, maximum: 1_000_000_000 }, description: 'shares judged before the Stratum ban rule applies (and between checks)', defaultText: '100' },
  { key: 'rpcAuthFailures', flag: 'rpc-auth-failures', env: 'NATIVE_RPC_AUTH_FAILURES', kind: 'integer', schema: { type: 'integer', minimum: 1, maximum: 100_000 }, description: 'wrong JSON-RPC credentials per client address per minute before it is refused (429 rpc_rate_limited)', defaultText: '10' },
  { key: 'httpExpensiveRate', flag: 'http-expensive-rate', env: 'NATIVE_HTTP_EXPENSIVE_RATE', kind: 'integer', schema: { type: 'integer', minimum: 0, maximum: 1_000_000 }, description: 'requests per second per client address to the expensive API endpoints (tx submission, paid calls, MCP); 0: no limit', defaultText: '50' },
  { key: 'httpExpensiveBurst', flag: 'http-expensive-burst', env: 'NATIVE_HTTP_EXPENSIVE_BURST', kind: 'integer', schema: { type: 'integer', minimum: 1, maximum: 1_000_000 }, description: 'burst of those requests per client address', defaultText: '200' },
  { key: 'mcpMaxBatch', flag: 'mcp-max-batch', env: 'NATIVE_MCP_MAX_BATCH', kind: 'integer', schema: { type: 'integer', minimum: 1, maximum: 100 }, description: 'JSON-RPC messages one POST /api/mcp may carry (each counts against --http-expensive-rate); a larger batch is refused mcp_batch_too_large', defaultText: '20' },
  { key: 'logSummaryInterval', flag: 'log-summary-interval', env: 'NATIVE_LOG_SUMMARY_INTERVAL', kind: 'integer', schema: { type: 'integer', minimum: 1_000, maximum: 3_600_000 }, description: 'ms between summary lines of repeated per-client log events (Stratum authorizations, refusals, bans)', defaultText: '60000' },
  { key: 'verifyThreads', flag: 'verify-threads', env: 'NATIVE_VERIFY_THREADS', kind: 'integer', schema: { type: 'integer', minimum: 0, maximum: 256 }, description: 'signature verification threads (0: auto)', defaultText: '0' },
  { key: 'logLevel', flag: 'log-level', env: 'NATIVE_LOG_LEVEL', kind: 'string', schema: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] }, description: 'fatal | error | warn | info | debug | trace | silent', defaultText: 'info' },
  { key: 'logFormat', flag: 'log-format', env: 'NATIVE_LOG_FORMAT', kind: 'string', schema: { enum: ['auto', 'json', 'pretty'] }, description: 'auto (pretty on a terminal, else JSON lines) | json | pretty', defaultText: 'auto' },
  { key: 'metricsPort', flag: 'metrics-port', env: 'NATIVE_METRICS_PORT', kind: 'integer', schema: { type: 'integer', minimum: 0, maximum: 65535 }, description: 'serve Prometheus metrics at GET /metrics on this port (0: any free port)', defaultText: 'none: no metrics' },
  { key: 'metricsHost', flag: 'metrics-host', env: 'NATIVE_METRICS_HOST', kind: 'string', schema: { type: 'string', minLength: 1, maxLength: 255 }, description: 'interface of the metrics listener', defaultText: '127.0.0.1' },
  { key: 'alertNoBlockFactor', flag: 'alert-no-block-factor', env: 'NATIVE_ALERT_NO_BLOCK_FACTOR', kind: 'number', schema: { type: 'number', minimum: 1, maximum: 1000 }, description: "the dashboard's no_blocks alert: raised when no block came for this many target intervals", defaultText: '1.5 on a --block-time devnet (its blocks come on time), else 4' },
  { key: 'wallet', flag: 'wallet', env: 'NATIVE_WALLET', kind: 'string', schema: { type: 'string', minLength: 1 }, description: 'wallet file of the CLI commands', defaultText: 'dev wallet on devnet, else ~/.native-node/wallet.json' },
  { key: 'p2p', flag: 'p2p', env: 'NATIVE_P2P', kind: 'boolean', schema: { type: 'boolean' }, description: 'join the peer-to-peer network (--no-p2p: standalone node)', defaultText: 'on' },
  { key: 'p2pHost', flag: 'p2p-host', env: 'NATIVE_P2P_HOST', kind: 'string', schema: { type: 'string', minLength: 1, maxLength: 255 }, description: 'p2p listen interface', defaultText: '0.0.0.0' },
  { key: 'p2pPort', flag: 'p2p-port', env: 'NATIVE_P2P_PORT', kind: 'integer', schema: { type: 'integer', minimum: 0, maximum: 65535 }, description: 'p2p TCP port (0: any free port)', defaultText: '8403' },
  { key: 'bootstrap', flag: 'bootstrap', env: 'NATIVE_BOOTSTRAP', kind: 'list', schema: { type: 'array', maxItems: 64, items: { type: 'string', minLength: 1, maxLength: 512 } }, description: 'peer multiaddr to connect to (repeatable; comma-separated in the environment)', defaultText: 'none' },
  ...OUTBOUND_CONFIG_OPTIONS,
  ...PROVIDER_CONFIG_OPTIONS,
];

const layerSchema = {
  type: 'object',
  additionalProperties: false,
  properties: Object.fromEntries(CONFIG_OPTIONS.map((o) => [o.key, o.schema])),
};
let layerValidator: ValidateFunction | undefined;
function validateLayer(layer: ConfigLayer, source: ConfigSource, where: string): void {
  layerValidator ??= new Ajv({ allErrors: false, strict: true }).compile(layerSchema);
  if (layerValidator(layer)) return;
  const err = layerValidator.errors![0];
  const key = err.keyword === 'additionalProperties' ? String((err.params as { additionalProperty: string }).additionalProperty) : err.instancePath.replace(/^\//, '');
  const opt = CONFIG_OPTIONS.find((o) => o.key === key);
  const name = source === 'flag' && opt ? `--${opt.flag}` : source === 'env' && opt ? opt.env : key;
  const near = err.keyword === 'additionalProperties' ? nearestKey(key) : undefined;
  const message = err.keyword === 'additionalProperties' ? `unknown option "${key}" in ${where}${near ? ` (did you mean "${near}"?)` : ''}` : `${name} (${where}) ${err.message}${err.keyword === 'enum' ? `: ${(err.params as { allowedValues: unknown[] }).allowedValues.join(', ')}` : ''}`;
  throw new NodeError(ConfigErrorCode.INVALID, message, { option: key, source });
}

/** The config key nearest to an unknown one (a few edits, any case), for "did you mean". */
function nearestKey(key: string): string | undefined {
  let best: { k: string; d: number } | undefined;
  for (const o of CONFIG_OPTIONS) {
    const d = distance(key.toLowerCase(), o.key.toLowerCase());
    if (!best || d < best.d) best = { k: o.key, d };
  }
  return best && best.d <= Math.min(3, Math.max(1, Math.floor(key.length / 3))) ? best.k : undefined;
}

function invalid(option: string, source: ConfigSource, message: string): NodeError {
  return new NodeError(ConfigErrorCode.INVALID, message, { option, source });
}

function coerce(opt: ConfigOption, raw: string, source: ConfigSource, name: string): string | number | boolean | string[] {
  if (opt.kind === 'list') return raw.split(/[\s,]+/).filter((x) => x.length > 0);
  if (opt.kind === 'integer') {
    if (!/^-?\d+$/.test(raw.trim())) throw invalid(opt.key, source, `${name} must be an integer, got "${raw}"`);
    return Number(raw.trim());
  }
  if (opt.kind === 'number') {
    if (!/^\d+(\.\d+)?$/.test(raw.trim())) throw invalid(opt.key, source, `${name} must be a number, got "${raw}"`);
    return Number(raw.trim());
  }
  if (opt.kind === 'boolean') {
    const v = raw.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(v)) return true;
    if (['0', 'false', 'no', 'off', ''].includes(v)) return false;
    throw invalid(opt.key, source, `${name} must be true or false, got "${raw}"`);
  }
  return raw;
}

/** Settings from `NATIVE_*` environment variables (unset and empty variables are ignored, except booleans). */
export function configFromEnv(env: Record<string, string | undefined>): ConfigLayer {
  const layer: ConfigLayer = {};
  for (const opt of CONFIG_OPTIONS) {
    const raw = env[opt.env];
    if (raw === undefined || (raw === '' && opt.kind !== 'boolean')) continue;
    layer[opt.key] = coerce(opt, raw, 'env', opt.env);
  }
  validateLayer(layer, 'env', 'environment');
  return layer;
}

/** parseArgs options of every config flag (booleans accept `--no-<flag>`). */
export function configParseOptions(keys?: readonly string[]): NonNullable<ParseArgsConfig['options']> {
  const out: NonNullable<ParseArgsConfig['options']> = {};
  for (const o of CONFIG_OPTIONS) if (!keys || keys.includes(o.key)) out[o.flag] = o.kind === 'list' ? { type: 'string', multiple: true } : { type: o.kind === 'boolean' ? 'boolean' : 'string' };
  return out;
}

/** Turns parsed flag values (as parseArgs returns them) into a config layer, coercing numbers. */
export function configFromFlagValues(values: Record<string, string | boolean | (string | boolean)[] | undefined>): ConfigLayer {
  const layer: ConfigLayer = {};
  for (const opt of CONFIG_OPTIONS) {
    const v = values[opt.flag];
    if (v === undefined) continue;
    if (opt.kind === 'list') {
      layer[opt.key] = (Array.isArray(v) ? v : [v]).map(String);
      continue;
    }
    const one = Array.isArray(v) ? v[v.length - 1] : v;
    layer[opt.key] = typeof one === 'boolean' ? one : coerce(opt, one, 'flag', `--${opt.flag}`);
  }
  validateLayer(layer, 'flag', 'command line');
  return layer;
}

/** Parses `start`'s command line into a config layer; unknown flags and positionals are `config_invalid`. */
export function configFromArgv(argv: readonly string[]): ConfigLayer {
  let values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  try {
    ({ values } = parseArgs({ args: [...argv], options: configParseOptions(), strict: true, allowPositionals: false, allowNegative: true }));
  } catch (e) {
    throw new NodeError(ConfigErrorCode.INVALID, (e as Error).message, { source: 'flag' });
  }
  return configFromFlagValues(values);
}

/** Reads and validates a JSON config file. */
export function configFromFile(path: string): ConfigLayer {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new NodeError(ConfigErrorCode.FILE_UNREADABLE, `cannot read config file ${path}: ${(e as Error).message}`, { option: 'config' });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new NodeError(ConfigErrorCode.INVALID, `config file ${path} is not valid JSON: ${(e as Error).message}`, { option: 'config', source: 'file' });
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new NodeError(ConfigErrorCode.INVALID, `config file ${path} must hold a JSON object`, { option: 'config', source: 'file' });
  }
  const layer = json as ConfigLayer;
  if ('config' in layer) throw invalid('config', 'file', `config file ${path} may not name another config file`);
  validateLayer(layer, 'file', `config file ${path}`);
  return layer;
}

/** `--dev` inside one layer means network devnet; contradicting `network` in the same layer is an error. */
function normaliseNetwork(layer: ConfigLayer, source: ConfigSource): ConfigLayer {
  const { dev, ...rest } = layer;
  if (dev !== true) return rest;
  if (rest.network !== undefined && canonicalNetwork(String(rest.network)) !== 'native-devnet') {
    throw invalid('network', source, `dev and network ${rest.network} contradict each other`);
  }
  return { ...rest, network: 'native-devnet' };
}

/** The canonical network name of an alias (`devnet` → `native-devnet`). */
export function canonicalNetwork(name: string): NetworkName {
  return name === 'devnet' || name === 'native-devnet' ? 'native-devnet' : 'native-mainnet';
}

/** Extra inputs of `resolveConfig` (tests pin them). */
export interface ResolveConfigOptions {
  /** Base of relative paths; default `process.cwd()`. */
  readonly cwd?: string;
  /** Address of the devnet dev wallet (the default miner address on the devnet). */
  readonly devAddress?: () => string;
}

/**
 * Merges defaults ← config file ← environment ← flags and derives the network-dependent
 * defaults. The config file is `flags.config ?? env.config`. Throws `config_invalid`.
 */
export function resolveConfig(flags: ConfigLayer, envLayer: ConfigLayer, opts: ResolveConfigOptions = {}): NodeConfig {
  const cwd = opts.cwd ?? process.cwd();
  const configFile = (flags.config ?? envLayer.config) as string | undefined;
  const fileLayer = configFile ? configFromFile(resolve(cwd, configFile)) : {};
  const sources = new Map<string, ConfigSource>();
  const merged: ConfigLayer = { ...defaultNodeConfig };
  for (const o of CONFIG_OPTIONS) if (o.default !== undefined) merged[o.key] = o.default;
  for (const [source, layer] of [['file', fileLayer], ['env', envLayer], ['flag', flags]] as const) {
    for (const [k, v] of Object.entries(normaliseNetwork(layer, source))) {
      if (v === undefined || k === 'config') continue;
      merged[k] = v;
      sources.set(k, source);
    }
  }
  const network = canonicalNetwork(String(merged.network));
  const devnet = network === 'native-devnet';
  const mine = (merged.mine as boolean | undefined) ?? devnet;
  let minerAddress = merged.minerAddress as string | undefined;
  const hrp = devnet ? 'tnative' : 'native';
  if (minerAddress !== undefined && !tryDecodeAddress(minerAddress, hrp)) {
    throw invalid('minerAddress', sources.get('minerAddress') ?? 'default', `minerAddress ${minerAddress} is not a ${network} address (${hrp}1…)`);
  }
  if (minerAddress === undefined && devnet && opts.devAddress) minerAddress = opts.devAddress();
  if ((merged.rpcUser === undefined) !== (merged.rpcPassword === undefined)) {
    const missing = merged.rpcUser === undefined ? 'rpcUser' : 'rpcPassword';
    throw invalid(missing, 'default', 'rpcUser and rpcPassword must be set together (--rpc-user and --rpc-password)');
  }
  if (merged.blockTime !== undefined && !devnet) {
    throw invalid('blockTime', sources.get('blockTime') ?? 'default', `blockTime (interval mining) is for the devnet only; ${network} blocks come from proof of work`);
  }
  let publicUrl: string | undefined;
  if (merged.publicUrl !== undefined) {
    publicUrl = normalisePublicUrl(merged.publicUrl as string);
    if (publicUrl === undefined) throw invalid('publicUrl', sources.get('publicUrl') ?? 'default', `publicUrl ${String(merged.publicUrl)} is not an absolute http(s) URL without query or fragment (e.g. https://node.example.org)`);
  }
  if (mine && minerAddress === undefined) {
    throw invalid('minerAddress', 'default', `mining on ${network} needs --miner-address (or NATIVE_MINER_ADDRESS / "minerAddress")`);
  }
  return {
    network,
    dataDir: resolve(cwd, (merged.dataDir as string | undefined) ?? join('data', network)),
    httpHost: merged.httpHost as string,
    httpPort: merged.httpPort as number,
    httpBodyLimit: merged.httpBodyLimit as number,
    httpTimeout: merged.httpTimeout as number,
    publicUrl,
    allowedHosts: [...new Set((merged.allowedHosts as readonly string[]).flatMap((h) => h.split(',')).map((h) => h.trim().toLowerCase()).filter((h) => h.length > 0))],
    mcpMaxBatch: merged.mcpMaxBatch as number,
    mine,
    economy: devnet && merged.economy === true,
    minerAddress,
    mineThreads: merged.mineThreads as number,
    blockTime: merged.blockTime as number | undefined,
    stratum: merged.stratum as boolean,
    stratumHost: merged.stratumHost as string | undefined,
    stratumPort: merged.stratumPort as number,
    rpcUser: merged.rpcUser as string | undefined,
    rpcPassword: merged.rpcPassword as string | undefined,
    rpcAllowRemote: merged.rpcAllowRemote as boolean,
    rpcPort: merged.rpcPort as number | undefined,
    stratumMaxConnections: merged.stratumMaxConnections as number,
    stratumMaxConnectionsPerAddress: merged.stratumMaxConnectionsPerAddress as number,
    stratumReservedConnections: merged.stratumReservedConnections as number,
    stratumHandshakeTimeout: merged.stratumHandshakeTimeout as number,
    stratumSubmitRate: merged.stratumSubmitRate as number,
    stratumSubmitBurst: merged.stratumSubmitBurst as number,
    stratumBanSeconds: merged.stratumBanSeconds as number,
    stratumBanInvalidPercent: merged.stratumBanInvalidPercent as number,
    stratumBanMinShares: merged.stratumBanMinShares as number,
    rpcAuthFailures: merged.rpcAuthFailures as number,
    httpExpensiveRate: merged.httpExpensiveRate as number,
    httpExpensiveBurst: merged.httpExpensiveBurst as number,
    logSummaryInterval: merged.logSummaryInterval as number,
    verifyThreads: merged.verifyThreads as number,
    logLevel: merged.logLevel as LogLevel,
    wallet: merged.wallet === undefined ? undefined : resolve(cwd, merged.wallet as string),
    p2p: merged.p2p as boolean,
    p2pHost: merged.p2pHost as string,
    p2pPort: merged.p2pPort as number,
    bootstrap: [...(merged.bootstrap as readonly string[])],
    payeeWallet: merged.payeeWallet === undefined ? undefined : resolve(cwd, merged.payeeWallet as string),
    retiredKeys: merged.retiredKeys === undefined ? undefined : resolve(cwd, merged.retiredKeys as string),
    usdcPayTo: merged.usdcPayTo as string | undefined,
    usdcPayToShared: merged.usdcPayToShared as boolean,
    facilitatorUrl: merged.facilitatorUrl as string | undefined,
    facilitatorAuthHeader: merged.facilitatorAuthHeader as string | undefined,
    facilitatorTimeout: merged.facilitatorTimeout as number,
    outbound: outboundOptionsOf(merged),
    providers: Object.fromEntries(CONFIG_OPTIONS.filter((o) => o.group === 'provider').map((o) => [o.key, merged[o.key] as string | number | boolean | undefined])),
    sellerName: merged.sellerName as string | undefined,
    sellerAddress: merged.sellerAddress as string | undefined,
    sellerVatId: merged.sellerVatId as string | undefined,
    refundWindow: merged.refundWindow as number,
    // Devnet: one block (a newcomer's call answers in one block time). Elsewhere three: with 3 s
    // blocks a 1-block reorganization is routine, a 3-block one rare, and ~9 s is still an interactive wait.
    confirmations: (merged.confirmations as number | undefined) ?? (devnet ? 1 : 3),
    // A URL is kept as given; a directory is resolved like the other paths.
    ledger: merged.ledger === undefined ? undefined : /^postgres(ql)?:\/\//i.test(merged.ledger as string) ? (merged.ledger as string) : resolve(cwd, merged.ledger as string),
    ledgerWitness: merged.ledgerWitness === undefined ? undefined : resolve(cwd, merged.ledgerWitness as string),
    persistMempool: merged.persistMempool as boolean,
    mempoolSaveInterval: merged.mempoolSaveInterval as number,
    mempoolMaxMb: merged.mempoolMaxMb as number,
    mempoolQueueMax: merged.mempoolQueueMax as number,
    mempoolQueueMaxMb: merged.mempoolQueueMaxMb as number,
    mempoolQueuePerSender: merged.mempoolQueuePerSender as number,
    mempoolQueueExpiry: merged.mempoolQueueExpiry as number,
    metricsPort: merged.metricsPort as number | undefined,
    metricsHost: merged.metricsHost as string,
    alertNoBlockFactor: merged.alertNoBlockFactor as number | undefined,
    logFormat: merged.logFormat as LogFormat,
    configFile: configFile ? resolve(cwd, configFile) : undefined,
    sources: Object.fromEntries(CONFIG_OPTIONS.map((o) => [o.key, sources.get(o.key) ?? 'default'])),
  };
}

/** Loads the configuration of `native-node start` from its flags and the environment (see `resolveConfig`). */
export function loadConfig(argv: readonly string[], env: Record<string, string | undefined>, opts: ResolveConfigOptions = {}): NodeConfig {
  return resolveConfig(configFromArgv(argv), configFromEnv(env), opts);
}
