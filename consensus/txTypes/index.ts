/** Registry of transaction types by numeric id and by name. */
import { TxErrorCode, ValidationError } from '../errors.js';
import type { TxTypeModule } from './types.js';
import { transfer } from './transfer.js';
import { agentInvoke } from './agentInvoke.js';
import { refund } from './refund.js';
import { agentRegister, agentUpdate, serviceRegister, serviceRetire, serviceUpdate } from './agents.js';
import { moderation } from './moderation.js';
import { providerPayout } from './providerPayout.js';

/** Every known transaction type, by numeric id. */
const byId = new Map<number, TxTypeModule<unknown>>(
  [transfer, agentInvoke, refund, agentRegister, agentUpdate, serviceRegister, serviceUpdate, serviceRetire, moderation, providerPayout].map((m) => [m.type, m as TxTypeModule<unknown>]),
);

/** The module of a type id; throws `tx_unknown_type`. */
export function getTxType(type: number): TxTypeModule<unknown> {
  const m = byId.get(type);
  if (!m) throw new ValidationError(TxErrorCode.UNKNOWN_TYPE, `unknown transaction type ${type}`);
  return m;
}

/** All registered type modules. */
export function listTxTypes(): TxTypeModule<unknown>[] {
  return [...byId.values()];
}

export type { TxTypeModule, ApplyContext } from './types.js';
