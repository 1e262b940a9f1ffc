/**
 * A small deterministic economy chain for the chain-data services: real LevelDB in a
 * temp dir, devnet rules at trivial difficulty, blocks 3 s apart from a fixed genesis time.
 *
 * Block 1: alice issues USDN (stable, 6 dp) and GOLD (2 dp, max 10^12, initial 10^9); bob stakes 10 NATIVE.
 * Block 2: alice mints 1,000 USDN against 3,000 NATIVE; pools USDN/NATIVE (500 USDN : 1,000 NATIVE)
 *          and NATIVE/GOLD (100 NATIVE : 1,000,000 GOLD units); alice sends bob 5,000 GOLD units;
 *          a bridge-in of 7 NATIVE on bitcoin (fee 1,000).
 * Block 3: bob swaps 10 NATIVE → USDN; alice sends carol 50 NATIVE.
 */
import { openChain, type Chain } from '../../chain/chain.js';
import { createMempool, type Mempool } from '../../chain/mempool.js';
import { silentLogger } from '../../chain/types.js';
import { assembleBlock, grindHeader } from '../../consensus/assemble.js';
import { blockTouchedKeys } from '../../consensus/apply.js';
import { encodeAddress } from '../../consensus/address.js';
import { BRIDGE_NETWORK_NAMES, COIN, createDevnetParams } from '../../consensus/params.js';
import { signTx, TX_VERSION, type Tx } from '../../consensus/tx.js';
import { feeForRate } from '../../consensus/txBuilder.js';
import { TokenKind } from '../../consensus/economyState.js';
import { NATIVE } from '../../consensus/ledger.js';
import { tokenIssue } from '../../consensus/txTypes/tokenIssue.js';
import { tokenTransfer } from '../../consensus/txTypes/tokenTransfer.js';
import { stableMint } from '../../consensus/txTypes/stableMint.js';
import { poolCreate } from '../../consensus/txTypes/poolCreate.js';
import { swap } from '../../consensus/txTypes/swap.js';
import { stake } from '../../consensus/txTypes/stake.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import { bridgeRecord } from '../../consensus/txTypes/bridgeRecord.js';
import { moderation } from '../../consensus/txTypes/moderation.js';
import { tokenFlags } from '../../consensus/txTypes/tokenFlags.js';
import { TokenFlag } from '../../consensus/economyState.js';
import { chainAddressLabels } from '../../services/providerRegistry.js';
import type { TxTypeModule } from '../../consensus/txTypes/types.js';
import type { Block } from '../../consensus/block.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import type { ServiceContext, ServiceRegistryReader } from '../../services/types.js';
import { testKey } from '../helpers/keys.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { tmpDir } from '../helpers/tmp.js';

export const [ealice, ebob, ecarol, eauthority, eminer] = ['eco-alice', 'eco-bob', 'eco-carol', 'eco-bridge', 'eco-miner'].map(testKey);
export const GENESIS_TIME = 1_800_000_000;
export const eparams = createDevnetParams({
  genesisBits: 0x207fffff,
  genesisTime: GENESIS_TIME,
  allocations: [ealice, ebob, eauthority].map((k) => ({ address: encodeAddress(k.address, 'tnative'), amount: 100_000n * COIN })),
  bridgeAuthorities: [encodeAddress(eauthority.address, 'tnative')],
  moderationAuthorities: [encodeAddress(eauthority.address, 'tnative')],
  economy: { bridgeNetworks: BRIDGE_NETWORK_NAMES.map((name) => ({ name, vault: `vault-${name}` })) },
});
export const eaddr = (k: HybridKeyPair) => encodeAddress(k.address, eparams.hrp);

/** Signs economy transactions with per-key nonces (the first one of each key carries it). */
class Signer {
  private nonces = new Map<HybridKeyPair, bigint>();
  tx<P>(key: HybridKeyPair, mod: TxTypeModule<P>, p: P): Tx {
    const nonce = this.nonces.get(key) ?? 0n;
    this.nonces.set(key, nonce + 1n);
    const base = { version: TX_VERSION, chainId: eparams.chainId, type: mod.type, from: key.address, nonce, payload: mod.encodePayload(p), ...(nonce === 0n ? { publicKey: key.publicKey } : {}) };
    return signTx({ ...base, fee: feeForRate(base, 1n) }, key);
  }
}

export interface EconomyFixture {
  chain: Chain;
  pool: Mempool;
  /** Signs a transaction of `key` with its next nonce (to submit to the fixture's mempool). */
  sign<P>(key: HybridKeyPair, mod: TxTypeModule<P>, p: P): Tx;
  close(): Promise<void>;
}

async function mine(chain: Chain, txs: Tx[]): Promise<Block> {
  const parent = chain.tip;
  const view = await chain.getStateView(blockTouchedKeys({ coinbase: { miner: eminer.address }, txs } as unknown as Block));
  const draft = assembleBlock(
    { parent: { hash: parent.hash, height: parent.height, time: parent.header.time }, medianTimePast: chain.medianTimePast(parent), now: parent.header.time + 3, txs, miner: eminer.address, state: view },
    eparams,
  );
  const block = { ...draft, header: grindHeader(draft.header, eparams.powLimit)! };
  const res = await chain.addBlock(block);
  if (res.status !== 'connected') throw new Error(`block not connected: ${res.status}`);
  return block;
}

/**
 * Builds the chain described in the module comment; `tokenPool` adds block 4: bob opens GOLD/USDN with
 * 5,000 GOLD units : 1,000,000 USDN units; `labels` adds a block where the moderator (the bridge
 * authority's key, also a moderation authority) labels carol `mixer` and bob `exploit`; `goldRally`
 * adds two blocks: alice sends carol 500,000 GOLD units, then bob buys GOLD with 5,000 NATIVE
 * (its price rises ~2,600-fold); `frozenGold` adds a last block where alice, GOLD's issuer, freezes it.
 */
export async function createEconomyFixture(opts: { tokenPool?: boolean; labels?: boolean; frozenGold?: boolean; goldRally?: boolean } = {}): Promise<EconomyFixture> {
  const verifier = new CountingVerifier();
  const chain = await openChain({ dataDir: await tmpDir('native-eco-services-'), params: eparams, verifier, now: () => GENESIS_TIME + 1_000 });
  const pool = createMempool(chain, verifier, eparams, { now: () => (GENESIS_TIME + 1_000) * 1000 });
  const s = new Signer();
  await mine(chain, [
    s.tx(ealice, tokenIssue, { symbol: 'USDN', name: 'Native USD', decimals: 6, maxSupply: 10n ** 15n, initialSupply: 0n, kind: TokenKind.usdStable }),
    s.tx(ealice, tokenIssue, { symbol: 'GOLD', name: 'Gold', decimals: 2, maxSupply: 10n ** 12n, initialSupply: 10n ** 9n, kind: TokenKind.token }),
    s.tx(ebob, stake, { tier: 0, amount: 10n * COIN }),
  ]);
  await mine(chain, [
    s.tx(ealice, stableMint, { symbol: 'USDN', collateral: 3000n * COIN, amount: 1_000_000_000n }),
    s.tx(ealice, poolCreate, { assetX: 'USDN', assetY: NATIVE, amountX: 500_000_000n, amountY: 1000n * COIN }),
    s.tx(ealice, poolCreate, { assetX: NATIVE, assetY: 'GOLD', amountX: 100n * COIN, amountY: 1_000_000n }),
    s.tx(ealice, tokenTransfer, { symbol: 'GOLD', to: ebob.address, amount: 5000n }),
    s.tx(eauthority, bridgeRecord, { network: 3, direction: 'in', amount: 7n * COIN, fee: 1000n, ref: 'btc:0001', account: ebob.address, cosignatures: [] }),
  ]);
  await mine(chain, [
    s.tx(ebob, swap, { path: [NATIVE, 'USDN'], amountIn: 10n * COIN, minOut: 1n, expiryHeight: 100 }),
    s.tx(ealice, transfer, { to: ecarol.address, amount: 50n * COIN }),
  ]);
  if (opts.tokenPool) await mine(chain, [s.tx(ebob, poolCreate, { assetX: 'GOLD', assetY: 'USDN', amountX: 5000n, amountY: 1_000_000n })]);
  if (opts.labels) {
    await mine(chain, [
      s.tx(eauthority, moderation, { action: 'label', address: ecarol.address, label: 'mixer', reason: 'pools deposits to hide their source' }),
      s.tx(eauthority, moderation, { action: 'label', address: ebob.address, label: 'exploit', reason: 'drained a lending pool' }),
    ]);
  }
  if (opts.goldRally) {
    await mine(chain, [s.tx(ealice, tokenTransfer, { symbol: 'GOLD', to: ecarol.address, amount: 500_000n })]);
    await mine(chain, [s.tx(ebob, swap, { path: [NATIVE, 'GOLD'], amountIn: 5000n * COIN, minOut: 1n, expiryHeight: 100 })]);
  }
  if (opts.frozenGold) await mine(chain, [s.tx(ealice, tokenFlags, { symbol: 'GOLD', flags: TokenFlag.frozen })]);
  return {
    chain,
    pool,
    sign: (key, mod, p) => s.tx(key, mod, p),
    async close() {
      await chain.close();
    },
  };
}

/** A service context over the economy fixture; the clock is the tip's time. */
export function economyContext(f: EconomyFixture, registry: ServiceRegistryReader): ServiceContext {
  return {
    chain: f.chain,
    mempool: f.pool,
    params: eparams,
    now: () => f.chain.tip.header.time * 1000,
    log: silentLogger,
    registry,
    nativeUsd: { get: () => ({ microUsd: 500_000n, source: 'reference', live: false }) },
    addressLabels: chainAddressLabels(f.chain),
    signal: new AbortController().signal,
  };
}
