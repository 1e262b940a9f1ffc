/**
 * `bridge_record`: the bridge authority records a movement through one of the bridge networks
 * of the chain parameters (`in`: arrived in the network's vault; `out`: paid out of it). A
 * record moves no on-chain balance: it is the audited ledger of the vaults, with a custody float
 * per network = in − out that never goes negative, and each external tx reference recorded once.
 *
 * Authority: the sender must be one of `authorities.bridge`; with `bridgeThreshold` t > 1 the
 * payload also carries t − 1 co-signatures of other bridge authority keys over
 * `taggedHash("native-node/bridge-record/v1", u32 chainId ‖ record bytes)` (both signatures of
 * each hybrid key must verify).
 *
 * Payload: u8 network ‖ u8 direction (0 in, 1 out) ‖ varint amount ‖ varint fee ‖ bytes ref
 * (1–100 printable ASCII) ‖ account(20) ‖ u8 cosignatures ‖ (mldsaPub ‖ ed25519Pub ‖ mldsaSig ‖
 * ed25519Sig)*. Amounts are NATIVE base units of value bridged.
 */
import { Writer, decodeAll } from '../codec.js';
import { EconomyErrorCode, TxErrorCode } from '../errors.js';
import { encodeAddress, tryDecodeAddress } from '../address.js';
import { bytesEqual, taggedHash, toHex } from '../hash.js';
import {
  ADDRESS_SIZE,
  ED25519_PUBLIC_KEY_SIZE,
  ED25519_SIGNATURE_SIZE,
  MLDSA_PUBLIC_KEY_SIZE,
  MLDSA_SIGNATURE_SIZE,
  addressOfPublicKey,
  signHybrid,
  verifyHybridReference,
  type HybridKeyPair,
  type HybridPublicKey,
  type HybridSignature,
} from '../keys.js';
import { bridgeRefKey, bridgeTotalsKey, encodeBridgeTotals, getBridgeTotals } from '../economyState.js';
import { checkedAdd, NATIVE } from '../ledger.js';
import { TxType } from '../tx.js';
import { refuse, reject, requirePositive } from './economyRules.js';
import type { ChainParams } from '../params.js';
import type { TxTypeModule } from './types.js';

/** Domain tag of bridge co-signatures. */
export const BRIDGE_COSIGN_TAG = 'native-node/bridge-record/v1';
const REF_RE = /^[\x21-\x7e]{1,100}$/;

/** The record itself (what co-signers sign). */
export interface BridgeRecordBody {
  /** Index into `params.economy.bridgeNetworks`. */
  readonly network: number;
  readonly direction: 'in' | 'out';
  /** NATIVE base units, > 0. */
  readonly amount: bigint;
  /** Bridge fee, ≤ amount. */
  readonly fee: bigint;
  /** The external chain's tx reference. */
  readonly ref: string;
  /** The on-chain account the movement is for. */
  readonly account: Uint8Array;
}

/** Payload of a bridge_record. */
export interface BridgeRecordPayload extends BridgeRecordBody {
  readonly cosignatures: readonly { readonly publicKey: HybridPublicKey; readonly signature: HybridSignature }[];
}

function writeBody(w: Writer, p: BridgeRecordBody): Writer {
  return w.u8(p.network).u8(p.direction === 'in' ? 0 : 1).varint(p.amount).varint(p.fee).bytes(new TextEncoder().encode(p.ref)).raw(p.account);
}

/** The message bridge co-signers sign. */
export function bridgeCosignMessage(p: BridgeRecordBody, chainId: number): Uint8Array {
  return taggedHash(BRIDGE_COSIGN_TAG, writeBody(new Writer(160).u32(chainId), p).finish());
}

/** A co-signature of a record by a bridge authority key. */
export function cosignBridgeRecord(p: BridgeRecordBody, chainId: number, kp: HybridKeyPair): BridgeRecordPayload['cosignatures'][number] {
  return { publicKey: kp.publicKey, signature: signHybrid(kp, bridgeCosignMessage(p, chainId)) };
}

/** The bridge_record type module. */
export const bridgeRecord: TxTypeModule<BridgeRecordPayload> = {
  type: TxType.bridge_record,
  name: 'bridge_record',
  encodePayload(p) {
    const w = writeBody(new Writer(160), p).u8(p.cosignatures.length);
    for (const c of p.cosignatures) w.raw(c.publicKey.mldsa).raw(c.publicKey.ed25519).raw(c.signature.mldsa).raw(c.signature.ed25519);
    return w.finish();
  },
  decodePayload(bytes) {
    return decodeAll(bytes, (r) => {
      const network = r.u8();
      const dir = r.u8();
      const amount = r.varint();
      const fee = r.varint();
      const ref = new TextDecoder('utf-8', { fatal: true }).decode(r.bytes(100, 'ref'));
      const account = r.raw(ADDRESS_SIZE).slice();
      const n = r.u8();
      const cosignatures = [];
      for (let i = 0; i < n; i++) {
        const publicKey = { mldsa: r.raw(MLDSA_PUBLIC_KEY_SIZE).slice(), ed25519: r.raw(ED25519_PUBLIC_KEY_SIZE).slice() };
        cosignatures.push({ publicKey, signature: { mldsa: r.raw(MLDSA_SIGNATURE_SIZE).slice(), ed25519: r.raw(ED25519_SIGNATURE_SIZE).slice() } });
      }
      if (dir > 1) throw reject(TxErrorCode.BAD_PAYLOAD, `bad bridge direction ${dir}`);
      return { network, direction: dir === 0 ? ('in' as const) : ('out' as const), amount, fee, ref, account, cosignatures };
    });
  },
  validatePayload(p, tx, params) {
    const net = params.economy.bridgeNetworks[p.network];
    if (!net || !net.vault) throw reject(EconomyErrorCode.UNKNOWN_NETWORK, `bridge network ${p.network} is not configured with a vault`);
    requirePositive(p.amount, 'bridge amount');
    if (p.fee > p.amount) throw reject(EconomyErrorCode.BAD_FEE, `bridge fee ${p.fee} exceeds the amount ${p.amount}`);
    if (!REF_RE.test(p.ref)) throw reject(EconomyErrorCode.BAD_REF, 'external tx reference must be 1-100 printable ASCII characters');
    validateAuthority(p, tx.from, params);
  },
  apply(state, _tx, p, ctx) {
    const name = ctx.params.economy.bridgeNetworks[p.network].name;
    const net = String(p.network);
    if (state.get(bridgeRefKey(net, p.ref))) throw refuse(EconomyErrorCode.DUPLICATE_REF, `${name} reference ${p.ref} is already recorded`);
    const t = getBridgeTotals(state, net);
    if (p.direction === 'out' && t.inAmount - t.outAmount < p.amount) {
      throw refuse(EconomyErrorCode.INSUFFICIENT_FLOAT, `${name} custody float ${t.inAmount - t.outAmount} is below the outflow ${p.amount}`);
    }
    state.set(bridgeRefKey(net, p.ref), Uint8Array.of(1));
    state.set(
      bridgeTotalsKey(net),
      encodeBridgeTotals(
        p.direction === 'in'
          ? { ...t, inAmount: checkedAdd(t.inAmount, p.amount, 'bridge in total'), inCount: t.inCount + 1, fees: t.fees + p.fee }
          : { ...t, outAmount: t.outAmount + p.amount, outCount: t.outCount + 1, fees: t.fees + p.fee },
      ),
    );
    ctx.emit?.({ kind: 'bridge', network: name, direction: p.direction, amount: p.amount, fee: p.fee, ref: p.ref, account: p.account });
  },
  touchedKeys(_tx, p) {
    return [bridgeTotalsKey(String(p.network)), bridgeRefKey(String(p.network), p.ref)];
  },
  amountUnits: () => ({ amount: { asset: NATIVE }, fee: { asset: NATIVE } }),
  toJson(p, params) {
    return {
      network: params.economy.bridgeNetworks[p.network]?.name ?? p.network,
      direction: p.direction,
      amount: p.amount.toString(),
      fee: p.fee.toString(),
      ref: p.ref,
      account: encodeAddress(p.account, params.hrp),
      cosigners: p.cosignatures.map((c) => encodeAddress(addressOfPublicKey(c.publicKey), params.hrp)),
    };
  },
};

/** Sender is a bridge authority, and enough distinct other authorities co-signed (see module comment). */
function validateAuthority(p: BridgeRecordPayload, sender: Uint8Array, params: ChainParams): void {
  const authorities = params.authorities.bridge.map((a) => tryDecodeAddress(a, params.hrp)).filter((x): x is Uint8Array => !!x);
  const isAuthority = (id: Uint8Array) => authorities.some((a) => bytesEqual(a, id));
  if (!isAuthority(sender)) throw reject(EconomyErrorCode.NOT_AUTHORITY, 'bridge records must be sent by a bridge authority key of the chain parameters');
  const signers = new Set([toHex(sender)]);
  const msg = bridgeCosignMessage(p, params.chainId);
  for (const c of p.cosignatures) {
    const id = addressOfPublicKey(c.publicKey);
    if (!isAuthority(id) || signers.has(toHex(id))) throw reject(EconomyErrorCode.BAD_COSIGNATURE, `co-signer ${toHex(id)} is not a further bridge authority`);
    if (!verifyHybridReference(c.publicKey, msg, c.signature)) throw reject(EconomyErrorCode.BAD_COSIGNATURE, `co-signature of ${toHex(id)} does not verify`);
    signers.add(toHex(id));
  }
  if (signers.size < Math.max(1, params.authorities.bridgeThreshold)) {
    throw reject(EconomyErrorCode.BAD_COSIGNATURE, `bridge records need ${params.authorities.bridgeThreshold} authority signatures, got ${signers.size}`);
  }
}
