/** Builders of the provider registry's transactions (CLI, tests): payload plus the signed envelope of `txBuilder.ts`. */
import { signEnvelope, type BuiltTx, type EnvelopeOptions } from './txBuilder.js';
import { TxType } from './tx.js';
import { agentRegister, serviceRegister, serviceRetire, type AgentPayload, type ServicePayload } from './txTypes/agents.js';
import { moderation, type ModerationPayload } from './txTypes/moderation.js';
import { providerPayout, type ProviderPayoutPayload } from './txTypes/providerPayout.js';

/** agent_register, or agent_update when `update`. */
export function createAgentTx(o: EnvelopeOptions, p: AgentPayload, update = false): BuiltTx {
  return signEnvelope(o, update ? TxType.agent_update : TxType.agent_register, agentRegister.encodePayload(p));
}

/** service_register, or service_update when `update`. */
export function createServiceTx(o: EnvelopeOptions, p: ServicePayload, update = false): BuiltTx {
  return signEnvelope(o, update ? TxType.service_update : TxType.service_register, serviceRegister.encodePayload(p));
}

/** service_retire. */
export function createServiceRetireTx(o: EnvelopeOptions, id: string): BuiltTx {
  return signEnvelope(o, TxType.service_retire, serviceRetire.encodePayload({ id }));
}

/** A moderation verdict or label (the key must be a moderator authority). */
export function createModerationTx(o: EnvelopeOptions, p: ModerationPayload): BuiltTx {
  return signEnvelope(o, TxType.moderation, moderation.encodePayload(p));
}

/** A provider payout (signed by the invoke's payTo). */
export function createProviderPayoutTx(o: EnvelopeOptions, p: ProviderPayoutPayload): BuiltTx {
  return signEnvelope(o, TxType.provider_payout, providerPayout.encodePayload(p));
}
