/**
 * The chain parameters of the configured network: mainnet's shipped genesis, or a devnet's
 * generated genesis pinned in its data directory.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { NodeError } from '../consensus/errors.js';
import { createDevnetChainParams } from '../consensus/devnet.js';
import { createParamsFromJson, DEVNET_POW_LIMIT_BITS, DEVNET_TARGET_SPACING, paramsToJson, type ChainParams } from '../consensus/params.js';
import { PROJECT_ROOT } from '../services/projectRoot.js';
import { ConfigErrorCode, type NodeConfig } from './config.js';

/** File under the data directory that pins a devnet's generated genesis (so restarts keep the same chain). */
export const DEVNET_GENESIS_FILE = 'genesis.json';

/**
 * Chain parameters of the configured network. Mainnet: the repository's `genesis.json`.
 * Devnet: `createDevnetChainParams` with the genesis time of the first start, pinned in
 * `<dataDir>/genesis.json` (a devnet whose genesis lay in the future could not mine yet, and one
 * far in the past would start at the easiest difficulty for hours). With `blockTime` S, a new
 * devnet's genesis has target spacing S and the easiest bits (interval mining, chain/pacedMiner.ts);
 * a pinned genesis made otherwise is refused with `config_genesis_mismatch` (its ASERT schedule
 * is another one). A pinned interval-mining genesis started without `blockTime` still runs (the
 * node warns, see `isPacedGenesis`).
 */
export function loadChainParams(config: Pick<NodeConfig, 'network' | 'dataDir'> & { readonly blockTime?: number }, now: () => number = () => Math.floor(Date.now() / 1000)): ChainParams {
  if (config.network === 'native-mainnet') {
    if (config.blockTime !== undefined) throw new NodeError(ConfigErrorCode.INVALID, 'blockTime (interval mining) is for the devnet only', { option: 'blockTime' });
    const path = join(PROJECT_ROOT, 'genesis.json');
    return createParamsFromJson(JSON.parse(readFileSync(path, 'utf8')));
  }
  const file = join(config.dataDir, DEVNET_GENESIS_FILE);
  if (existsSync(file)) {
    const params = createParamsFromJson(JSON.parse(readFileSync(file, 'utf8')));
    if (params.network !== 'native-devnet') throw new NodeError(ConfigErrorCode.INVALID, `${file} is not a devnet genesis (network ${params.network})`, { option: 'dataDir' });
    const s = config.blockTime;
    if (s !== undefined && (params.targetSpacing !== s || params.genesis.bits !== params.powLimitBits)) {
      const made = params.genesis.bits === params.powLimitBits ? `target spacing ${params.targetSpacing} s` : `proof-of-work difficulty (bits 0x${params.genesis.bits.toString(16)}, target spacing ${params.targetSpacing} s)`;
      throw new NodeError(ConfigErrorCode.GENESIS_MISMATCH, `the devnet in ${config.dataDir} was made with ${made}, not for --block-time ${s}: start it with a new --data-dir (or without --block-time)`, {
        option: 'blockTime',
        dataDir: config.dataDir,
        targetSpacing: params.targetSpacing,
        genesisBits: params.genesis.bits,
      });
    }
    return params;
  }
  const paced = config.blockTime === undefined ? {} : { targetSpacing: config.blockTime, genesisBits: DEVNET_POW_LIMIT_BITS, powLimitBits: DEVNET_POW_LIMIT_BITS };
  const params = createDevnetChainParams({ genesisTime: now(), actors: true, ...paced });
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(paramsToJson(params), null, 2)}\n`, { mode: 0o644 });
  renameSync(tmp, file);
  return params;
}

/**
 * Whether a devnet genesis was made for interval mining (`--block-time`): the easiest bits and a
 * target spacing other than the default devnet's. (A genesis at the easiest bits with the default
 * spacing, as tests write, cannot be told apart and counts as not.)
 */
export function isPacedGenesis(params: ChainParams): boolean {
  return params.network === 'native-devnet' && params.genesis.bits === params.powLimitBits && params.targetSpacing !== DEVNET_TARGET_SPACING;
}
