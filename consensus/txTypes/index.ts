/** Registry of transaction types by numeric id and by name. */
import { TxErrorCode, ValidationError } from '../errors.js';
import type { TxTypeModule } from './types.js';
import { transfer } from './transfer.js';
import { agentInvoke } from './agentInvoke.js';
import { refund } from './refund.js';
import { agentRegister, agentUpdate, serviceRegister, serviceRetire, serviceUpdate } from './agents.js';
import { moderation } from './moderation.js';
import { providerPayout } from './providerPayout.js';
import { tokenIssue } from './tokenIssue.js';
import { tokenMint } from './tokenMint.js';
import { tokenBurn } from './tokenBurn.js';
import { tokenTransfer } from './tokenTransfer.js';
import { tokenFlags } from './tokenFlags.js';
import { tokenBack } from './tokenBack.js';
import { stableMint } from './stableMint.js';
import { tokenRedeem } from './tokenRedeem.js';
import { poolCreate } from './poolCreate.js';
import { poolAdd } from './poolAdd.js';
import { poolRemove } from './poolRemove.js';
import { swap } from './swap.js';
import { stake } from './stake.js';
import { unstake } from './unstake.js';
import { bridgeRecord } from './bridgeRecord.js';

/** Every known transaction type, by numeric id. */
const byId = new Map<number, TxTypeModule<unknown>>(
  [
    transfer,
    agentInvoke,
    refund,
    agentRegister,
    agentUpdate,
    serviceRegister,
    serviceUpdate,
    serviceRetire,
    moderation,
    providerPayout,
    tokenIssue,
    tokenMint,
    tokenBurn,
    tokenTransfer,
    tokenFlags,
    tokenBack,
    stableMint,
    tokenRedeem,
    poolCreate,
    poolAdd,
    poolRemove,
    swap,
    stake,
    unstake,
    bridgeRecord,
  ].map((m) => [m.type, m as TxTypeModule<unknown>]),
);

/** The module of a type id; throws `tx_unknown_type`. */
export function getTxType(type: number): TxTypeModule<unknown> {
  const m = byId.get(type);
  if (!m) throw new ValidationError(TxErrorCode.UNKNOWN_TYPE, `unknown transaction type ${type}`);
  return m;
}

/** The module of a type name (`token_issue`…), or undefined. */
export function getTxTypeByName(name: string): TxTypeModule<unknown> | undefined {
  return [...byId.values()].find((m) => m.name === name);
}

/** All registered type modules. */
export function listTxTypes(): TxTypeModule<unknown>[] {
  return [...byId.values()];
}

export type { TxTypeModule, ApplyContext } from './types.js';
