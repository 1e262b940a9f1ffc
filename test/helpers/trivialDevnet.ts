/**
 * A data directory for a real node process on a devnet at trivial difficulty: the node pins
 * `<dataDir>/genesis.json`, so writing it first makes blocks come as fast as the node can
 * connect them (crash and payment tests do real work between kills whatever the load).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDevnetChainParams } from '../../consensus/devnet.js';
import { paramsToJson, type ChainParams } from '../../consensus/params.js';

/** Creates `<tmp>/<prefix>…/data` with a trivial-difficulty devnet genesis starting now. */
export function createTrivialDevnetDir(prefix: string): { dir: string; dataDir: string; params: ChainParams } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const params = createDevnetChainParams({ genesisTime: Math.floor(Date.now() / 1000), genesisBits: 0x207fffff });
  writeFileSync(join(dataDir, 'genesis.json'), `${JSON.stringify(paramsToJson(params), null, 2)}\n`);
  return { dir, dataDir, params };
}
