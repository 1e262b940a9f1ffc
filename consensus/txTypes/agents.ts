/**
 * The provider registry's transaction types: an agent registers itself (the signing
 * key is its identity), then registers, updates and retires services in its own namespace
 * (`<agent name>-<slug>`, never `native-`). A new or updated service waits for moderation
 * (`pending`) before it is sold.
 *
 *   4 agent_register    name ‖ description ‖ capabilities ‖ payout(20) ‖ contact
 *   5 agent_update      same fields; the name cannot change (it names the agent's services)
 *   6 service_register  id ‖ service fields (registryState.writeServiceFields)
 *   7 service_update    id ‖ service fields; sends the service back to `pending`
 *   8 service_retire    id; final (a retired id is never reused)
 */
import { Ajv } from 'ajv';
import { Writer, decodeAll } from '../codec.js';
import { encodeAddress } from '../address.js';
import { bytesEqual } from '../hash.js';
import { TxType } from '../tx.js';
import {
  agentKey,
  agentNameKey,
  checkAgentName,
  checkServiceId,
  checkText,
  checkWords,
  encodeAgent,
  encodeService,
  getAgent,
  getService,
  readAgentFields,
  readServiceFields,
  REGISTRY_CATEGORIES,
  RegistryErrorCode,
  RegistryLimits,
  registryError,
  serviceKey,
  ServiceStatus,
  writeAgentFields,
  writeServiceFields,
  type AgentRecord,
  type ServiceFields,
} from '../registryState.js';
import type { TxTypeModule } from './types.js';

/** Payload of agent_register and agent_update. */
export type AgentPayload = Pick<AgentRecord, 'name' | 'description' | 'capabilities' | 'payout' | 'contact'>;

/** Payload of service_register and service_update. */
export interface ServicePayload extends ServiceFields {
  readonly id: string;
}

/** Payload of service_retire. */
export interface ServiceRetirePayload {
  readonly id: string;
}

/** Largest price of a provider service: 1,000,000 NATIVE. */
export const MAX_SERVICE_PRICE = 1_000_000n * 100_000_000n;

function validateAgent(p: AgentPayload): void {
  checkAgentName(p.name);
  checkText(p.description, RegistryLimits.agentDescription, 'description', true);
  checkWords(p.capabilities, RegistryLimits.capabilities, 'capability');
  checkText(p.contact, RegistryLimits.contact, 'contact');
}

const agentJson = (p: AgentPayload, hrp: string) => ({ name: p.name, description: p.description, capabilities: [...p.capabilities], payout: encodeAddress(p.payout, hrp), contact: p.contact });

/**
 * Rule: an input schema is a JSON object of at most 4096 UTF-8 bytes that ajv (strict mode, no
 * remote references) compiles. Exported so the CLI and the node check it the same way.
 */
export function checkInputSchema(text: string): Record<string, unknown> {
  if (new TextEncoder().encode(text).length > RegistryLimits.inputSchemaBytes) {
    throw registryError(RegistryErrorCode.FIELD_TOO_LONG, `input schema is longer than ${RegistryLimits.inputSchemaBytes} bytes`);
  }
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (e) {
    throw registryError(RegistryErrorCode.BAD_INPUT_SCHEMA, `input schema is not JSON: ${(e as Error).message}`);
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw registryError(RegistryErrorCode.BAD_INPUT_SCHEMA, 'input schema must be a JSON object');
  try {
    new Ajv({ strict: true, allowUnionTypes: true }).compile(schema as Record<string, unknown>);
  } catch (e) {
    throw registryError(RegistryErrorCode.BAD_INPUT_SCHEMA, `input schema does not compile: ${(e as Error).message}`);
  }
  return schema as Record<string, unknown>;
}

function validateServiceFields(p: ServicePayload): void {
  checkServiceId(p.id);
  checkText(p.name, RegistryLimits.serviceName, 'name', true);
  checkText(p.description, RegistryLimits.serviceDescription, 'description', true);
  if (!(REGISTRY_CATEGORIES as readonly string[]).includes(p.category)) throw registryError(RegistryErrorCode.BAD_FIELD, `category must be one of ${REGISTRY_CATEGORIES.join(', ')}`);
  if (p.price <= 0n || p.price > MAX_SERVICE_PRICE) throw registryError(RegistryErrorCode.BAD_FIELD, 'price must be between 1 base unit and 1,000,000 NATIVE');
  checkWords(p.tags, RegistryLimits.tags, 'tag');
  checkText(p.requestFormat, RegistryLimits.requestFormat, 'requestFormat');
  if (p.timeoutMs < RegistryLimits.minTimeoutMs || p.timeoutMs > RegistryLimits.maxTimeoutMs) {
    throw registryError(RegistryErrorCode.BAD_FIELD, `timeout must be ${RegistryLimits.minTimeoutMs}-${RegistryLimits.maxTimeoutMs} ms`);
  }
  checkInputSchema(p.inputSchema);
}

const serviceJson = (p: ServicePayload) => ({
  id: p.id,
  name: p.name,
  description: p.description,
  category: p.category,
  price: p.price.toString(),
  tags: [...p.tags],
  requestFormat: p.requestFormat,
  requestRequired: p.requestRequired,
  inputIsJson: p.inputIsJson,
  inputSchema: p.inputSchema,
  timeoutMs: p.timeoutMs,
});

const te = new TextEncoder();
const td = new TextDecoder('utf-8', { fatal: true });

function requireAgent(state: Parameters<TxTypeModule<unknown>['apply']>[0], from: Uint8Array): AgentRecord {
  const agent = getAgent(state, from);
  if (!agent) throw registryError(RegistryErrorCode.AGENT_NOT_REGISTERED, 'the sender is not a registered agent (agent_register first)', { action: 'ignore' });
  return agent;
}

/** agent_register (4). */
export const agentRegister: TxTypeModule<AgentPayload> = {
  type: TxType.agent_register,
  name: 'agent_register',
  encodePayload: (p) => writeAgentFields(new Writer(256), p).finish(),
  decodePayload: (bytes) => decodeAll(bytes, readAgentFields),
  validatePayload: validateAgent,
  apply(state, tx, p, ctx) {
    if (getAgent(state, tx.from)) throw registryError(RegistryErrorCode.AGENT_EXISTS, 'this key already registered an agent (agent_update changes it)', { action: 'ignore' });
    if (state.get(agentNameKey(p.name))) throw registryError(RegistryErrorCode.NAME_TAKEN, `agent name "${p.name}" is taken`, { action: 'ignore' });
    state.set(agentKey(tx.from), encodeAgent({ ...p, registeredHeight: ctx.height, updatedHeight: ctx.height }));
    state.set(agentNameKey(p.name), tx.from);
  },
  touchedKeys: (tx, p) => [agentKey(tx.from), agentNameKey(p.name)],
  toJson: (p, params) => agentJson(p, params.hrp),
};

/** agent_update (5). */
export const agentUpdate: TxTypeModule<AgentPayload> = {
  type: TxType.agent_update,
  name: 'agent_update',
  encodePayload: agentRegister.encodePayload,
  decodePayload: agentRegister.decodePayload,
  validatePayload: validateAgent,
  apply(state, tx, p, ctx) {
    const agent = requireAgent(state, tx.from);
    if (agent.name !== p.name) throw registryError(RegistryErrorCode.BAD_FIELD, `an agent's name cannot change (registered as "${agent.name}")`);
    state.set(agentKey(tx.from), encodeAgent({ ...agent, ...p, updatedHeight: ctx.height }));
  },
  touchedKeys: (tx) => [agentKey(tx.from)],
  toJson: (p, params) => agentJson(p, params.hrp),
};

const encodeServicePayload = (p: ServicePayload) => writeServiceFields(new Writer(512).bytes(te.encode(p.id)), p).finish();
const decodeServicePayload = (bytes: Uint8Array) =>
  decodeAll(bytes, (r) => {
    const id = td.decode(r.bytes(RegistryLimits.serviceId * 4, 'service id'));
    return { id, ...readServiceFields(r) };
  });

function requireNamespace(agent: AgentRecord, id: string): void {
  if (!id.startsWith(`${agent.name}-`) || id.length === agent.name.length + 1) {
    throw registryError(RegistryErrorCode.BAD_FIELD, `service ids of agent "${agent.name}" start with "${agent.name}-"`);
  }
}

/** service_register (6). */
export const serviceRegister: TxTypeModule<ServicePayload> = {
  type: TxType.service_register,
  name: 'service_register',
  encodePayload: encodeServicePayload,
  decodePayload: decodeServicePayload,
  validatePayload: validateServiceFields,
  apply(state, tx, p, ctx) {
    const agent = requireAgent(state, tx.from);
    requireNamespace(agent, p.id);
    if (getService(state, p.id)) throw registryError(RegistryErrorCode.SERVICE_EXISTS, `service ${p.id} exists (service_update changes it)`, { action: 'ignore' });
    state.set(serviceKey(p.id), encodeService({ ...p, owner: tx.from, status: ServiceStatus.pending, retired: false, reason: '', registeredHeight: ctx.height, updatedHeight: ctx.height }));
  },
  touchedKeys: (tx, p) => [agentKey(tx.from), serviceKey(p.id)],
  toJson: serviceJson,
};

/** service_update (7). */
export const serviceUpdate: TxTypeModule<ServicePayload> = {
  type: TxType.service_update,
  name: 'service_update',
  encodePayload: encodeServicePayload,
  decodePayload: decodeServicePayload,
  validatePayload: validateServiceFields,
  apply(state, tx, p, ctx) {
    requireAgent(state, tx.from);
    const s = getService(state, p.id);
    if (!s) throw registryError(RegistryErrorCode.SERVICE_NOT_FOUND, `no service ${p.id}`, { action: 'ignore' });
    if (!bytesEqual(s.owner, tx.from)) throw registryError(RegistryErrorCode.NOT_SERVICE_OWNER, `service ${p.id} belongs to another agent`);
    if (s.retired) throw registryError(RegistryErrorCode.SERVICE_RETIRED, `service ${p.id} is retired`);
    // A changed definition is reviewed again; a suspended or rejected service stays so.
    const status = s.status === ServiceStatus.approved ? ServiceStatus.pending : s.status;
    state.set(serviceKey(p.id), encodeService({ ...s, ...p, status, updatedHeight: ctx.height }));
  },
  touchedKeys: (tx, p) => [agentKey(tx.from), serviceKey(p.id)],
  toJson: serviceJson,
};

/** service_retire (8). */
export const serviceRetire: TxTypeModule<ServiceRetirePayload> = {
  type: TxType.service_retire,
  name: 'service_retire',
  encodePayload: (p) => new Writer(80).bytes(te.encode(p.id)).finish(),
  decodePayload: (bytes) => decodeAll(bytes, (r) => ({ id: td.decode(r.bytes(RegistryLimits.serviceId * 4, 'service id')) })),
  validatePayload: (p) => checkServiceId(p.id),
  apply(state, tx, p, ctx) {
    const s = getService(state, p.id);
    if (!s) throw registryError(RegistryErrorCode.SERVICE_NOT_FOUND, `no service ${p.id}`, { action: 'ignore' });
    if (!bytesEqual(s.owner, tx.from)) throw registryError(RegistryErrorCode.NOT_SERVICE_OWNER, `service ${p.id} belongs to another agent`);
    if (s.retired) throw registryError(RegistryErrorCode.SERVICE_RETIRED, `service ${p.id} is already retired`, { action: 'ignore' });
    state.set(serviceKey(p.id), encodeService({ ...s, retired: true, updatedHeight: ctx.height }));
  },
  touchedKeys: (_tx, p) => [serviceKey(p.id)],
  toJson: (p) => ({ id: p.id }),
};
