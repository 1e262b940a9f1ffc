/**
 * A consensus-level economy harness: state in a Map, transactions applied with the real rules
 * (`applyTx`), one block height at a time. Signatures are not made (applying never checks them;
 * the chain tests do), so property tests can run thousands of transactions quickly.
 */
import { applyTx, writeChanges } from '../../consensus/apply.js';
import { encodeAddress } from '../../consensus/address.js';
import { createGenesisState } from '../../consensus/genesis.js';
import { ED25519_PUBLIC_KEY_SIZE, ED25519_SIGNATURE_SIZE, MLDSA_PUBLIC_KEY_SIZE, MLDSA_SIGNATURE_SIZE } from '../../consensus/keys.js';
import { COIN, createDevnetParams, BRIDGE_NETWORK_NAMES, type ChainParams } from '../../consensus/params.js';
import { StateOverlay, type StateView } from '../../consensus/state.js';
import { TX_VERSION, type Tx } from '../../consensus/tx.js';
import { sha256 } from '../../consensus/hash.js';
import { ValidationError } from '../../consensus/errors.js';
import type { TxTypeModule } from '../../consensus/txTypes/types.js';
import type { EconomyEvent } from '../../consensus/events.js';

/** A 20-byte test account id from a name. */
export function actor(name: string): Uint8Array {
  return sha256(new TextEncoder().encode(`econ-actor:${name}`)).slice(0, 20);
}

/** Devnet parameters with funded actors, one bridge authority and vaults on all ten networks. */
export function econParams(names: readonly string[], funds = 1_000_000n * COIN, authority = actor('bridge')): ChainParams {
  return createDevnetParams({
    genesisBits: 0x207fffff,
    allocations: names.map((n) => ({ address: encodeAddress(actor(n), 'tnative'), amount: funds })),
    bridgeAuthorities: [encodeAddress(authority, 'tnative')],
    economy: { bridgeNetworks: BRIDGE_NETWORK_NAMES.map((name) => ({ name, vault: `vault-${name}` })) },
  });
}

const dummyKey = { mldsa: new Uint8Array(MLDSA_PUBLIC_KEY_SIZE), ed25519: new Uint8Array(ED25519_PUBLIC_KEY_SIZE) };
const dummySig = { mldsa: new Uint8Array(MLDSA_SIGNATURE_SIZE), ed25519: new Uint8Array(ED25519_SIGNATURE_SIZE) };

/** The economy harness (see module comment). */
export class Econ {
  readonly state = new Map<string, Uint8Array>();
  height = 1;
  private seq = 0;
  constructor(readonly params: ChainParams) {
    writeChanges(this.state, createGenesisState(params));
  }
  get view(): StateView {
    return { get: (k) => this.state.get(k) };
  }
  /** A fresh overlay to read typed records from. */
  read(): StateOverlay {
    return new StateOverlay(this.view);
  }
  /** An unsigned-but-well-formed tx of `from` with its next nonce. */
  tx<P>(from: Uint8Array, mod: TxTypeModule<P>, payload: P, fee = 1000n): Tx {
    const nonce = this.read().getAccount(from).nonce;
    return { version: TX_VERSION, chainId: this.params.chainId, type: mod.type, from, nonce, fee, payload: mod.encodePayload(payload), publicKey: dummyKey, signature: dummySig };
  }
  /** Validates (stateless) and applies one transaction; commits only on success. Returns its events. */
  apply<P>(from: Uint8Array, mod: TxTypeModule<P>, payload: P): EconomyEvent[] {
    const tx = this.tx(from, mod, payload);
    mod.validatePayload(mod.decodePayload(tx.payload), tx, this.params);
    const overlay = new StateOverlay(this.view);
    const events: EconomyEvent[] = [];
    const id = sha256(new TextEncoder().encode(`tx-${this.seq++}`));
    applyTx(overlay, tx, id, this.height, this.params, (e) => events.push(e));
    writeChanges(this.state, overlay.changes());
    this.lastId = id;
    return events;
  }
  /** Id given to the last applied transaction. */
  lastId: Uint8Array = new Uint8Array(32);
  /** The error code `apply` throws, or undefined; the state is unchanged when it throws. */
  code<P>(from: Uint8Array, mod: TxTypeModule<P>, payload: P): string | undefined {
    const before = new Map(this.state);
    try {
      this.apply(from, mod, payload);
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      expectSameState(before, this.state);
      return e.code;
    }
    return undefined;
  }
}

/** Throws unless two states hold the same keys with the same bytes. */
export function expectSameState(a: Map<string, Uint8Array>, b: Map<string, Uint8Array>): void {
  if (a.size !== b.size) throw new Error(`state sizes differ: ${a.size} vs ${b.size}`);
  for (const [k, v] of a) {
    const w = b.get(k);
    if (!w || Buffer.compare(Buffer.from(v), Buffer.from(w)) !== 0) throw new Error(`state key ${k} differs`);
  }
}
