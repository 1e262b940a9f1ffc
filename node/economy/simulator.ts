/**
 * The devnet economy: actors with public keys (consensus/devnet.ts `DEVNET_ACTORS`) that set up
 * tokens, a USD stablecoin, pools (NATIVE pairs and token/token pairs, a little mispriced so
 * arbitrage exists), stakes in every tier and bridge flows on all ten networks, then keep trading:
 * swaps (one and two hops), liquidity changes, transfers, whale transfers, stakes and unstakes,
 * stablecoin mints and redemptions, bridge in/out. Used in-process by `npm start` (`--economy`)
 * and against any devnet node by `native-node simulate --node URL [--rate N]`; the backend
 * decides where transactions go.
 */
import { getAmountOut } from '../../consensus/amm.js';
import { getDevnetActor } from '../../consensus/devnet.js';
import { NATIVE } from '../../consensus/ledger.js';
import { COIN, type ChainParams } from '../../consensus/params.js';
import { signTx, TX_VERSION, encodeTx, txId } from '../../consensus/tx.js';
import { feeForRate } from '../../consensus/txBuilder.js';
import { toHex } from '../../consensus/hash.js';
import { TokenKind } from '../../consensus/economyState.js';
import { tokenIssue } from '../../consensus/txTypes/tokenIssue.js';
import { tokenTransfer } from '../../consensus/txTypes/tokenTransfer.js';
import { tokenFlags } from '../../consensus/txTypes/tokenFlags.js';
import { tokenBack } from '../../consensus/txTypes/tokenBack.js';
import { stableMint } from '../../consensus/txTypes/stableMint.js';
import { tokenRedeem } from '../../consensus/txTypes/tokenRedeem.js';
import { poolCreate } from '../../consensus/txTypes/poolCreate.js';
import { poolAdd } from '../../consensus/txTypes/poolAdd.js';
import { poolRemove } from '../../consensus/txTypes/poolRemove.js';
import { swap } from '../../consensus/txTypes/swap.js';
import { stake } from '../../consensus/txTypes/stake.js';
import { unstake } from '../../consensus/txTypes/unstake.js';
import { bridgeRecord } from '../../consensus/txTypes/bridgeRecord.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import type { TxTypeModule } from '../../consensus/txTypes/types.js';

/** A pool as the simulator needs it. */
export interface SimPool {
  readonly id: string;
  readonly a: string;
  readonly b: string;
  readonly reserveA: bigint;
  readonly reserveB: bigint;
}

/** Where the simulator reads the chain and sends transactions (in-process or HTTP). */
export interface SimBackend {
  /** Next nonce of an account, its pending transactions counted. */
  nextNonce(id: Uint8Array): Promise<bigint>;
  /** Submits signed bytes; throws the coded error of a refusal. */
  submit(bytes: Uint8Array): Promise<void>;
  height(): Promise<number>;
  tokens(): Promise<Set<string>>;
  pools(): Promise<SimPool[]>;
  /** Custody float per bridge network index (NATIVE base units). */
  floats(): Promise<bigint[]>;
  /** An account's LP shares and open stakes. */
  positions(id: Uint8Array): Promise<{ lp: { pool: string; shares: bigint }[]; stakes: { id: string; unlocked: boolean }[] }>;
}

/** Options of the simulator. */
export interface SimulatorOptions {
  /** Actions per second of the continuous phase. */
  rate: number;
  /** Seed of the action choices (mulberry32). */
  seed?: number;
  log?: { info(o: object, m?: string): void; warn(o: object, m?: string): void; debug(o: object, m?: string): void };
}

/** Defaults of SimulatorOptions. */
export const defaultSimulatorOptions = { rate: 2, seed: 1 } as const;

/** The tokens the issuer creates: symbol, name, decimals, maxSupply, initial supply (whole units). */
export const SIM_TOKENS = [
  { symbol: 'USDN', name: 'Native USD (devnet stablecoin)', decimals: 6, max: 1_000_000_000_000n, initial: 0n, kind: TokenKind.usdStable },
  { symbol: 'GOLD', name: 'Devnet Gold', decimals: 2, max: 10_000_000n, initial: 1_000_000n, kind: TokenKind.token },
  { symbol: 'NBTC', name: 'Bridged Bitcoin (devnet)', decimals: 8, max: 21n, initial: 21n, kind: TokenKind.token },
  { symbol: 'NETH', name: 'Bridged Ether (devnet)', decimals: 8, max: 1000n, initial: 1000n, kind: TokenKind.token },
  { symbol: 'MEME', name: 'Meme Coin', decimals: 0, max: 1_000_000_000_000n, initial: 500_000_000_000n, kind: TokenKind.token },
  { symbol: 'AGNT', name: 'Agent Credits', decimals: 6, max: 10_000_000n, initial: 5_000_000n, kind: TokenKind.token },
  { symbol: 'RUGX', name: 'Frozen Example', decimals: 4, max: 1_000_000n, initial: 900_000n, kind: TokenKind.token },
] as const;

const unit = (sym: string) => 10n ** BigInt(sym === NATIVE ? 8 : SIM_TOKENS.find((t) => t.symbol === sym)!.decimals);

/** Initial pools: [x, whole units of x, y, whole units of y] (some cross pairs a few % off, for arbitrage). */
const SIM_POOLS: readonly [string, bigint, string, bigint][] = [
  [NATIVE, 1_000_000n, 'USDN', 500_000n],
  [NATIVE, 100_000n, 'GOLD', 10_000n],
  [NATIVE, 500_000n, 'NBTC', 5n],
  [NATIVE, 300_000n, 'NETH', 60n],
  [NATIVE, 50_000n, 'MEME', 50_000_000n],
  [NATIVE, 200_000n, 'AGNT', 100_000n],
  ['GOLD', 2_000n, 'USDN', 10_400n],
  ['NBTC', 1n, 'USDN', 52_000n],
  ['NETH', 20n, 'NBTC', 1n],
];

const TRADERS = ['trader1', 'trader2', 'trader3', 'trader4'];
const MAKERS = ['maker1', 'maker2'];

/** The simulator (see module comment). */
export class EconomySimulator {
  private readonly nonces = new Map<string, bigint>();
  private seed: number;
  private timer?: NodeJS.Timeout;
  private running = false;
  private busy = false;
  /** Submitted and refused transactions (refusals are expected now and then: prices move). */
  readonly stats = { submitted: 0, refused: 0, byType: {} as Record<string, number> };

  constructor(
    private readonly backend: SimBackend,
    private readonly params: ChainParams,
    private readonly opts: SimulatorOptions = defaultSimulatorOptions,
  ) {
    this.seed = (opts.seed ?? 1) >>> 0;
  }

  private rand(): number {
    let t = (this.seed = (this.seed + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rand() * xs.length)];
  }

  /** A fraction of `v` between `lo` and `hi` (per mille). */
  private part(v: bigint, lo: number, hi: number): bigint {
    return (v * BigInt(Math.floor(lo + this.rand() * (hi - lo)))) / 1000n;
  }

  /** Signs and submits one transaction of an actor; false when the node refused it. */
  async send<P>(actor: string, mod: TxTypeModule<P>, payload: P): Promise<boolean> {
    const key = getDevnetActor(actor);
    const hex = toHex(key.address);
    const nonce = this.nonces.get(hex) ?? (await this.backend.nextNonce(key.address));
    const base = { version: TX_VERSION, chainId: this.params.chainId, type: mod.type, from: key.address, nonce, payload: mod.encodePayload(payload), publicKey: key.publicKey };
    const withKey = nonce === 0n ? base : { ...base, publicKey: undefined };
    const tx = signTx({ ...withKey, fee: feeForRate(withKey, this.params.minFeeRate) }, key);
    const bytes = encodeTx(tx);
    try {
      await this.backend.submit(bytes);
      this.nonces.set(hex, nonce + 1n);
      this.stats.submitted++;
      this.stats.byType[mod.name] = (this.stats.byType[mod.name] ?? 0) + 1;
      return true;
    } catch (e) {
      this.nonces.delete(hex);
      this.stats.refused++;
      this.opts.log?.debug({ actor, type: mod.name, tx: toHex(txId(bytes)), err: (e as Error).message }, 'economy action refused');
      return false;
    }
  }

  private addr(actor: string): Uint8Array {
    return getDevnetActor(actor).address;
  }

  /** Sets the economy up once (tokens, stablecoin, pools, distribution, stakes, bridge); skipped when USDN exists. */
  async bootstrap(): Promise<boolean> {
    if ((await this.backend.tokens()).has('USDN')) return false;
    for (const t of SIM_TOKENS) {
      await this.send('issuer', tokenIssue, { symbol: t.symbol, name: t.name, decimals: t.decimals, maxSupply: t.max * unit(t.symbol), initialSupply: t.initial * unit(t.symbol), kind: t.kind });
    }
    // 1,000,000 USDN at 150% and the $0.5 reference price needs 3,000,000 NATIVE; lock 3.6 M.
    await this.send('issuer', stableMint, { symbol: 'USDN', collateral: 3_600_000n * COIN, amount: 1_000_000n * unit('USDN') });
    for (const [x, ax, y, ay] of SIM_POOLS) await this.send('issuer', poolCreate, { assetX: x, assetY: y, amountX: ax * unit(x), amountY: ay * unit(y) });
    await this.send('issuer', tokenBack, { symbol: 'AGNT', amount: 50_000n * COIN });
    await this.send('issuer', tokenFlags, { symbol: 'RUGX', flags: 3 });
    // Tokens for the traders, makers and the whale.
    const shares: [string, bigint][] = [
      ['USDN', 40_000n],
      ['GOLD', 20_000n],
      ['NBTC', 1n],
      ['NETH', 50n],
      ['MEME', 20_000_000n],
      ['AGNT', 200_000n],
    ];
    for (const who of [...TRADERS, ...MAKERS, 'whale']) {
      for (const [sym, amt] of shares) await this.send('issuer', tokenTransfer, { symbol: sym, to: this.addr(who), amount: (amt * unit(sym)) / (who === 'whale' ? 1n : 4n) });
    }
    // A stake in every tier.
    for (let tier = 0; tier < this.params.staking.aprTiers.length; tier++) await this.send('staker', stake, { tier, amount: BigInt(50_000 * (tier + 1)) * COIN });
    // Bridge flows on every network.
    const nets = this.params.economy.bridgeNetworks;
    for (let i = 0; i < nets.length; i++) {
      if (!nets[i].vault) continue;
      await this.send('bridge', bridgeRecord, { network: i, direction: 'in', amount: BigInt(10_000 + 5_000 * i) * COIN, fee: 5n * COIN, ref: `${nets[i].name}:boot-${i}`, account: this.addr(this.pick(TRADERS)), cosignatures: [] });
      await this.send('bridge', bridgeRecord, { network: i, direction: 'out', amount: BigInt(1_000 + 500 * i) * COIN, fee: 1n * COIN, ref: `${nets[i].name}:boot-out-${i}`, account: this.addr(this.pick(TRADERS)), cosignatures: [] });
    }
    this.opts.log?.info({ submitted: this.stats.submitted, refused: this.stats.refused }, 'devnet economy set up');
    return true;
  }

  /** One random action of the continuous phase. */
  async step(): Promise<void> {
    const r = this.rand();
    const pools = await this.backend.pools();
    if (!pools.length) return;
    const height = await this.backend.height();
    if (r < 0.45) {
      const trader = this.pick(TRADERS);
      const p = this.pick(pools);
      const forward = this.rand() < 0.5;
      const [assetIn, assetOut, rIn, rOut] = forward ? [p.a, p.b, p.reserveA, p.reserveB] : [p.b, p.a, p.reserveB, p.reserveA];
      const amountIn = this.part(rIn, 1, 8) + 1n;
      const out = getAmountOut(amountIn, rIn, rOut, this.params.economy.swapFeeBps);
      if (out === 0n) return;
      // Now and then a two-hop swap through NATIVE to a third asset.
      const third = assetOut === NATIVE && this.rand() < 0.3 ? pools.find((q) => q.a === NATIVE || q.b === NATIVE ? ![q.a, q.b].includes(assetIn) : false) : undefined;
      const path = third ? [assetIn, NATIVE, third.a === NATIVE ? third.b : third.a] : [assetIn, assetOut];
      await this.send(trader, swap, { path, amountIn, minOut: third ? 1n : (out * 97n) / 100n, expiryHeight: height + 20 });
    } else if (r < 0.55) {
      const maker = this.pick(MAKERS);
      const p = this.pick(pools);
      if (this.rand() < 0.6) await this.send(maker, poolAdd, { assetX: p.a, assetY: p.b, desiredX: this.part(p.reserveA, 2, 6) + 1n, desiredY: this.part(p.reserveB, 2, 6) + 1n, minShares: 0n });
      else {
        const pos = (await this.backend.positions(this.addr(maker))).lp.find((l) => l.pool === p.id);
        if (pos && pos.shares > 10n) await this.send(maker, poolRemove, { assetX: p.a, assetY: p.b, shares: this.part(pos.shares, 50, 200) + 1n, minX: 0n, minY: 0n });
      }
    } else if (r < 0.65) {
      const sym = this.pick(['USDN', 'GOLD', 'MEME', 'AGNT', 'NETH']);
      await this.send(this.pick(TRADERS), tokenTransfer, { symbol: sym, to: this.addr(this.pick([...TRADERS, ...MAKERS])), amount: BigInt(1 + Math.floor(this.rand() * 100)) * unit(sym) });
    } else if (r < 0.7) {
      await this.send(this.pick(TRADERS), transfer, { to: this.addr(this.pick([...TRADERS, 'staker'])), amount: BigInt(1 + Math.floor(this.rand() * 500)) * COIN });
    } else if (r < 0.74) {
      // Whales: large NATIVE moves, sometimes tokens.
      const to = this.addr(this.pick([...TRADERS, ...MAKERS, 'issuer']));
      if (this.rand() < 0.7) await this.send('whale', transfer, { to, amount: BigInt(100_000 + Math.floor(this.rand() * 900_000)) * COIN });
      else await this.send('whale', tokenTransfer, { symbol: 'USDN', to, amount: BigInt(10_000 + Math.floor(this.rand() * 40_000)) * unit('USDN') });
    } else if (r < 0.79) {
      await this.send(this.pick(['staker', ...TRADERS]), stake, { tier: Math.floor(this.rand() * this.params.staking.aprTiers.length), amount: BigInt(100 + Math.floor(this.rand() * 5_000)) * COIN });
    } else if (r < 0.82) {
      const who = this.pick(['staker', ...TRADERS]);
      const open = (await this.backend.positions(this.addr(who))).stakes.filter((s) => s.unlocked);
      if (open.length) await this.send(who, unstake, { stakeId: Uint8Array.from(Buffer.from(this.pick(open).id, 'hex')) });
    } else if (r < 0.92) {
      const nets = this.params.economy.bridgeNetworks;
      const i = Math.floor(this.rand() * nets.length);
      if (!nets[i].vault) return;
      const floats = await this.backend.floats();
      const out = this.rand() < 0.45 && floats[i] > COIN;
      const amount = out ? this.part(floats[i], 10, 300) + 1n : BigInt(500 + Math.floor(this.rand() * 20_000)) * COIN;
      await this.send('bridge', bridgeRecord, { network: i, direction: out ? 'out' : 'in', amount, fee: amount / 1000n, ref: `${nets[i].name}:${height}-${Math.floor(this.rand() * 1e9).toString(16)}`, account: this.addr(this.pick(TRADERS)), cosignatures: [] });
    } else if (r < 0.97) {
      const trader = this.pick(TRADERS);
      const p = pools.find((q) => q.id === 'NATIVE-USDN');
      if (!p) return;
      if (this.rand() < 0.6) {
        // Mint at 200% of the pool price: collateral NATIVE for half its value in USDN.
        const collateral = BigInt(1_000 + Math.floor(this.rand() * 10_000)) * COIN;
        await this.send(trader, stableMint, { symbol: 'USDN', collateral, amount: (collateral * p.reserveB) / p.reserveA / 2n });
      } else await this.send(trader, tokenRedeem, { symbol: 'USDN', amount: BigInt(10 + Math.floor(this.rand() * 500)) * unit('USDN') });
    } else {
      await this.send(this.pick(['issuer', 'whale']), tokenBack, { symbol: this.pick(['AGNT', 'GOLD']), amount: BigInt(100 + Math.floor(this.rand() * 1_000)) * COIN });
    }
  }

  /** Runs the bootstrap, then `rate` actions a second until `stop()`. */
  start(): void {
    if (this.running) return;
    this.running = true;
    const period = Math.max(20, Math.floor(1000 / Math.max(0.01, this.opts.rate)));
    let booted = false;
    const tick = async () => {
      if (this.busy || !this.running) return;
      this.busy = true;
      try {
        if (!booted) {
          await this.bootstrap();
          booted = true;
        } else await this.step();
      } catch (e) {
        this.opts.log?.warn({ err: (e as Error).message }, 'economy step failed');
      } finally {
        this.busy = false;
      }
    };
    this.timer = setInterval(() => void tick(), period);
    this.timer.unref();
    void tick();
  }

  /** Stops the continuous phase (a step in flight finishes). */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearInterval(this.timer);
    while (this.busy) await new Promise((r) => setTimeout(r, 20));
  }
}
