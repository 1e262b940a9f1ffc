/**
 * `moderation` (9): a verdict signed by a moderator authority key of the chain parameters
 * (`params.authorities.moderation`, addresses): approve, suspend or reject a provider service
 * with a reason, or label an address (e.g. `mixer`, `exploit`; an empty label removes it).
 *
 * Payload: u8 action ‖ (action 1–3: bytes serviceId | action 4: address(20) ‖ bytes label) ‖ bytes reason.
 * A retired service takes no verdict (retiring is final).
 */
import { Writer, decodeAll } from '../codec.js';
import { CodecError, CodecErrorCode } from '../errors.js';
import { encodeAddress, tryDecodeAddress } from '../address.js';
import { bytesEqual } from '../hash.js';
import { ADDRESS_SIZE } from '../keys.js';
import { TxType } from '../tx.js';
import type { ChainParams } from '../params.js';
import {
  checkServiceId,
  checkText,
  encodeLabel,
  encodeService,
  getService,
  labelKey,
  RegistryErrorCode,
  RegistryLimits,
  registryError,
  serviceKey,
  ServiceStatus,
} from '../registryState.js';
import type { TxTypeModule } from './types.js';

/** Moderation actions (one byte on the wire). */
export const ModerationAction = { approve: 1, suspend: 2, reject: 3, label: 4 } as const;
export type ModerationActionName = keyof typeof ModerationAction;

/** Payload of a moderation transaction. */
export type ModerationPayload =
  | { readonly action: 'approve' | 'suspend' | 'reject'; readonly serviceId: string; readonly reason: string }
  | { readonly action: 'label'; readonly address: Uint8Array; readonly label: string; readonly reason: string };

const te = new TextEncoder();
const td = new TextDecoder('utf-8', { fatal: true });
const NAMES = Object.fromEntries(Object.entries(ModerationAction).map(([k, v]) => [v, k])) as Record<number, ModerationActionName>;
const STATUS_OF = { approve: ServiceStatus.approved, suspend: ServiceStatus.suspended, reject: ServiceStatus.rejected } as const;

/** Whether `id` is one of the chain's moderator authority keys. */
export function isModerator(params: ChainParams, id: Uint8Array): boolean {
  return params.authorities.moderation.some((a) => {
    const m = tryDecodeAddress(a, params.hrp);
    return m !== undefined && bytesEqual(m, id);
  });
}

/** The moderation type module. */
export const moderation: TxTypeModule<ModerationPayload> = {
  type: TxType.moderation,
  name: 'moderation',
  encodePayload(p) {
    const w = new Writer(128).u8(ModerationAction[p.action]);
    if (p.action === 'label') w.raw(p.address).bytes(te.encode(p.label));
    else w.bytes(te.encode(p.serviceId));
    return w.bytes(te.encode(p.reason)).finish();
  },
  decodePayload(bytes) {
    return decodeAll(bytes, (r) => {
      const code = r.u8();
      const action = NAMES[code];
      if (!action) throw new CodecError(CodecErrorCode.BAD_VALUE, `unknown moderation action ${code}`, r.offset - 1);
      if (action === 'label') {
        const address = r.raw(ADDRESS_SIZE).slice();
        const label = td.decode(r.bytes(RegistryLimits.label * 4, 'label'));
        return { action, address, label, reason: td.decode(r.bytes(RegistryLimits.reason * 4, 'reason')) };
      }
      const serviceId = td.decode(r.bytes(RegistryLimits.serviceId * 4, 'service id'));
      return { action, serviceId, reason: td.decode(r.bytes(RegistryLimits.reason * 4, 'reason')) };
    });
  },
  validatePayload(p, tx, params) {
    if (!isModerator(params, tx.from)) throw registryError(RegistryErrorCode.NOT_MODERATOR, 'moderation must be signed by a moderator authority key of the chain parameters');
    checkText(p.reason, RegistryLimits.reason, 'reason', p.action === 'suspend' || p.action === 'reject');
    if (p.action === 'label') {
      if (p.label !== '' && !/^[a-z][a-z0-9-]{0,31}$/.test(p.label)) throw registryError(RegistryErrorCode.BAD_FIELD, 'a label is 1-32 of a-z, 0-9 and - (empty removes it)');
    } else {
      checkServiceId(p.serviceId);
    }
  },
  apply(state, _tx, p, ctx) {
    if (p.action === 'label') {
      state.set(labelKey(p.address), p.label === '' ? null : encodeLabel({ label: p.label, reason: p.reason, height: ctx.height }));
      return;
    }
    const s = getService(state, p.serviceId);
    if (!s) throw registryError(RegistryErrorCode.SERVICE_NOT_FOUND, `no service ${p.serviceId}`, { action: 'ignore' });
    if (s.retired) throw registryError(RegistryErrorCode.SERVICE_RETIRED, `service ${p.serviceId} is retired`, { action: 'ignore' });
    state.set(serviceKey(p.serviceId), encodeService({ ...s, status: STATUS_OF[p.action], reason: p.reason, updatedHeight: ctx.height }));
  },
  touchedKeys: (_tx, p) => [p.action === 'label' ? labelKey(p.address) : serviceKey(p.serviceId)],
  toJson(p, params) {
    return p.action === 'label'
      ? { action: p.action, address: encodeAddress(p.address, params.hrp), label: p.label, reason: p.reason }
      : { action: p.action, serviceId: p.serviceId, reason: p.reason };
  },
};
