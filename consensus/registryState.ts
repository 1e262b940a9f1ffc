/**
 * The provider registry's consensus state: agents, their services, moderation
 * verdicts, address labels and provider payouts. Records, canonical codecs, state keys and the
 * field rules every node applies identically.
 *
 * Keys (beside `a<id>`, `supply`, `i<txid>` of state.ts and the economy's keys):
 *   A<40 hex>     agent record of an account (the key that signs is the agent's identity)
 *   N<name>       agent name → owner account id (20 bytes): names are unique
 *   S<serviceId>  provider service record (owner, definition, moderation status, retired flag)
 *   M<40 hex>     moderation label of an address (e.g. mixer, exploit), read by risk scoring
 *   O<64 hex>     payout marker of an agent_invoke: recipient and amount (once per invoke)
 * Every key a transaction touches can be named from the transaction alone (prefetch).
 */
import { Writer, decodeAll, type Reader } from './codec.js';
import { CodecError, CodecErrorCode, ValidationError } from './errors.js';
import { toHex } from './hash.js';
import { ADDRESS_SIZE } from './keys.js';
import type { StateView } from './state.js';

/** Codes of the registry's transaction rules. */
export const RegistryErrorCode = {
  BAD_FIELD: 'tx_registry_bad_field',
  FIELD_TOO_LONG: 'tx_registry_field_too_long',
  RESERVED_NAMESPACE: 'tx_registry_reserved_namespace',
  NAME_TAKEN: 'tx_registry_name_taken',
  AGENT_EXISTS: 'tx_registry_agent_exists',
  AGENT_NOT_REGISTERED: 'tx_registry_agent_not_registered',
  BAD_INPUT_SCHEMA: 'tx_registry_bad_input_schema',
  SERVICE_EXISTS: 'tx_registry_service_exists',
  SERVICE_NOT_FOUND: 'tx_registry_service_not_found',
  NOT_SERVICE_OWNER: 'tx_registry_not_service_owner',
  SERVICE_RETIRED: 'tx_registry_service_retired',
  NOT_MODERATOR: 'tx_registry_not_moderator',
  PAYOUT_NOT_PAYEE: 'tx_payout_not_payee',
  PAYOUT_TOO_LARGE: 'tx_payout_too_large',
  ALREADY_PAID_OUT: 'tx_already_paid_out',
  INVOKE_REFUNDED: 'tx_invoke_refunded',
} as const;
export type RegistryErrorCode = (typeof RegistryErrorCode)[keyof typeof RegistryErrorCode];

/** The spec's 17 service categories (a provider service takes one of them). */
export const REGISTRY_CATEGORIES = Object.freeze([
  'audit', 'compute', 'pricing', 'market-data', 'portfolio', 'utility', 'oracle', 'compliance', 'analytics',
  'trading', 'reports', 'staking-calculator', 'whale-watch', 'explorer', 'bridge', 'search', 'risk',
] as const);

/** Field limits, in characters (UTF-16 code units) unless said otherwise. */
export const RegistryLimits = {
  agentName: 32,
  agentDescription: 500,
  capabilities: 8,
  capability: 32,
  contact: 200,
  serviceId: 64,
  serviceName: 64,
  serviceDescription: 500,
  tags: 8,
  tag: 32,
  requestFormat: 200,
  /** UTF-8 bytes of the input JSON schema. */
  inputSchemaBytes: 4096,
  minTimeoutMs: 1_000,
  maxTimeoutMs: 30_000,
  reason: 200,
  label: 32,
} as const;

/** Agent names: lower-case letters, digits and inner hyphens, 3–32 characters. */
export const AGENT_NAME_RE = /^[a-z][a-z0-9-]{1,30}[a-z0-9]$/;
/** The node's own namespace: no agent name or provider service id may start with it. */
export const RESERVED_PREFIX = 'native';
const WORD_RE = /^[a-z0-9][a-z0-9-]{0,31}$/;

/** Moderation status of a provider service. */
export const ServiceStatus = { pending: 0, approved: 1, suspended: 2, rejected: 3 } as const;
export type ServiceStatusName = keyof typeof ServiceStatus;
const STATUS_NAMES = Object.keys(ServiceStatus) as ServiceStatusName[];

/** An agent as registered on chain. */
export interface AgentRecord {
  readonly name: string;
  readonly description: string;
  readonly capabilities: readonly string[];
  /** Account id the node pays the agent's earnings to. */
  readonly payout: Uint8Array;
  /** Optional contact (empty string when none). */
  readonly contact: string;
  readonly registeredHeight: number;
  readonly updatedHeight: number;
}

/** What a provider declares about one service (register and update carry it whole). */
export interface ServiceFields {
  readonly name: string;
  readonly description: string;
  /** One of REGISTRY_CATEGORIES. */
  readonly category: string;
  /** Exact price of a call, NATIVE base units, > 0. */
  readonly price: bigint;
  readonly tags: readonly string[];
  readonly requestFormat: string;
  readonly requestRequired: boolean;
  /** `request` is JSON text (parsed before validation). */
  readonly inputIsJson: boolean;
  /** JSON Schema of the input as JSON text (≤ 4096 UTF-8 bytes), compiled with ajv at registration. */
  readonly inputSchema: string;
  /** How long the node waits for the provider's result, ms (1,000–30,000). */
  readonly timeoutMs: number;
}

/** A provider service as registered on chain. */
export interface ServiceRecord extends ServiceFields {
  readonly id: string;
  /** The registering agent's account id. */
  readonly owner: Uint8Array;
  /** ServiceStatus value. */
  readonly status: number;
  readonly retired: boolean;
  /** The moderator's last reason (empty when none). */
  readonly reason: string;
  readonly registeredHeight: number;
  readonly updatedHeight: number;
}

/** A moderation label on an address. */
export interface AddressLabel {
  readonly label: string;
  readonly reason: string;
  readonly height: number;
}

/** A provider payout of one invoke. */
export interface PayoutRecord {
  readonly to: Uint8Array;
  readonly amount: bigint;
}

export const agentKey = (id: Uint8Array): string => `A${toHex(id)}`;
export const agentNameKey = (name: string): string => `N${name}`;
export const serviceKey = (id: string): string => `S${id}`;
export const labelKey = (id: Uint8Array): string => `M${toHex(id)}`;
export const payoutKey = (invokeId: Uint8Array): string => `O${toHex(invokeId)}`;
/** State key prefixes of the registry (for scans of the whole registry). */
export const REGISTRY_PREFIXES = { agent: 'A', service: 'S', label: 'M' } as const;

const te = new TextEncoder();
const td = new TextDecoder('utf-8', { fatal: true });
const str = (r: Reader, max: number, what: string) => td.decode(r.bytes(max * 4, what));
const writeList = (w: Writer, xs: readonly string[]) => {
  w.varint(BigInt(xs.length));
  for (const x of xs) w.bytes(te.encode(x));
};
const readList = (r: Reader, maxItems: number, maxLen: number, what: string) => {
  const n = r.varnum(maxItems, `${what} count`);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(str(r, maxLen, what));
  return out;
};
const flag = (r: Reader, what: string): boolean => {
  const v = r.u8();
  if (v > 1) throw new CodecError(CodecErrorCode.BAD_VALUE, `bad ${what} flag`, r.offset - 1);
  return v === 1;
};

/** Writes the agent fields shared by agent_register / agent_update payloads and the record. */
export function writeAgentFields(w: Writer, a: Pick<AgentRecord, 'name' | 'description' | 'capabilities' | 'payout' | 'contact'>): Writer {
  w.bytes(te.encode(a.name)).bytes(te.encode(a.description));
  writeList(w, a.capabilities);
  return w.raw(a.payout).bytes(te.encode(a.contact));
}

/** Reads what `writeAgentFields` wrote. */
export function readAgentFields(r: Reader): Pick<AgentRecord, 'name' | 'description' | 'capabilities' | 'payout' | 'contact'> {
  return {
    name: str(r, RegistryLimits.agentName, 'agent name'),
    description: str(r, RegistryLimits.agentDescription, 'description'),
    capabilities: readList(r, RegistryLimits.capabilities, RegistryLimits.capability, 'capability'),
    payout: r.raw(ADDRESS_SIZE).slice(),
    contact: str(r, RegistryLimits.contact, 'contact'),
  };
}

/** Canonical bytes of an agent record. */
export function encodeAgent(a: AgentRecord): Uint8Array {
  return writeAgentFields(new Writer(256), a).varint(BigInt(a.registeredHeight)).varint(BigInt(a.updatedHeight)).finish();
}

/** Decodes an agent record. */
export function decodeAgent(bytes: Uint8Array): AgentRecord {
  return decodeAll(bytes, (r) => ({ ...readAgentFields(r), registeredHeight: r.varnum(2 ** 32, 'height'), updatedHeight: r.varnum(2 ** 32, 'height') }));
}

/** Writes the service fields shared by service_register / service_update payloads and the record. */
export function writeServiceFields(w: Writer, s: ServiceFields): Writer {
  w.bytes(te.encode(s.name)).bytes(te.encode(s.description)).bytes(te.encode(s.category)).varint(s.price);
  writeList(w, s.tags);
  return w
    .bytes(te.encode(s.requestFormat))
    .u8(s.requestRequired ? 1 : 0)
    .u8(s.inputIsJson ? 1 : 0)
    .bytes(te.encode(s.inputSchema))
    .varint(BigInt(s.timeoutMs));
}

/** Reads what `writeServiceFields` wrote. */
export function readServiceFields(r: Reader): ServiceFields {
  return {
    name: str(r, RegistryLimits.serviceName, 'service name'),
    description: str(r, RegistryLimits.serviceDescription, 'description'),
    category: str(r, 32, 'category'),
    price: r.varint(),
    tags: readList(r, RegistryLimits.tags, RegistryLimits.tag, 'tag'),
    requestFormat: str(r, RegistryLimits.requestFormat, 'request format'),
    requestRequired: flag(r, 'requestRequired'),
    inputIsJson: flag(r, 'inputIsJson'),
    // Decoding allows twice the rule's limit so that a long schema gets the rule's coded error.
    inputSchema: td.decode(r.bytes(RegistryLimits.inputSchemaBytes * 2, 'input schema')),
    timeoutMs: r.varnum(RegistryLimits.maxTimeoutMs * 10, 'timeout'),
  };
}

/** Canonical bytes of a service record. */
export function encodeService(s: ServiceRecord): Uint8Array {
  const w = new Writer(512).bytes(te.encode(s.id)).raw(s.owner);
  writeServiceFields(w, s);
  return w.u8(s.status).u8(s.retired ? 1 : 0).bytes(te.encode(s.reason)).varint(BigInt(s.registeredHeight)).varint(BigInt(s.updatedHeight)).finish();
}

/** Decodes a service record. */
export function decodeService(bytes: Uint8Array): ServiceRecord {
  return decodeAll(bytes, (r) => {
    const id = str(r, RegistryLimits.serviceId, 'service id');
    const owner = r.raw(ADDRESS_SIZE).slice();
    const fields = readServiceFields(r);
    const status = r.u8();
    if (status > ServiceStatus.rejected) throw new CodecError(CodecErrorCode.BAD_VALUE, 'bad service status', r.offset - 1);
    const retired = flag(r, 'retired');
    const reason = str(r, RegistryLimits.reason, 'reason');
    return { id, owner, ...fields, status, retired, reason, registeredHeight: r.varnum(2 ** 32, 'height'), updatedHeight: r.varnum(2 ** 32, 'height') };
  });
}

/** Canonical bytes of an address label. */
export function encodeLabel(l: AddressLabel): Uint8Array {
  return new Writer(64).bytes(te.encode(l.label)).bytes(te.encode(l.reason)).varint(BigInt(l.height)).finish();
}

/** Decodes an address label. */
export function decodeLabel(bytes: Uint8Array): AddressLabel {
  return decodeAll(bytes, (r) => ({ label: str(r, RegistryLimits.label, 'label'), reason: str(r, RegistryLimits.reason, 'reason'), height: r.varnum(2 ** 32, 'height') }));
}

/** Canonical bytes of a payout marker. */
export function encodePayout(p: PayoutRecord): Uint8Array {
  return new Writer(32).raw(p.to).varint(p.amount).finish();
}

/** Decodes a payout marker. */
export function decodePayout(bytes: Uint8Array): PayoutRecord {
  return decodeAll(bytes, (r) => ({ to: r.raw(ADDRESS_SIZE).slice(), amount: r.varint() }));
}

/** The record under `key`, decoded, or undefined when absent. */
function read<T>(state: StateView, key: string, decode: (bytes: Uint8Array) => T): T | undefined {
  const raw = state.get(key);
  return raw ? decode(raw) : undefined;
}

/** The agent of an account, or undefined. */
export const getAgent = (state: StateView, id: Uint8Array): AgentRecord | undefined => read(state, agentKey(id), decodeAgent);
/** A provider service by id, or undefined. */
export const getService = (state: StateView, id: string): ServiceRecord | undefined => read(state, serviceKey(id), decodeService);
/** The moderation label of an address (for risk scoring), or undefined. */
export const getAddressLabel = (state: StateView, id: Uint8Array): AddressLabel | undefined => read(state, labelKey(id), decodeLabel);
/** The payout of an invoke, or undefined when it was not paid out. */
export const getPayout = (state: StateView, invokeId: Uint8Array): PayoutRecord | undefined => read(state, payoutKey(invokeId), decodePayout);

/** Name of a status value. */
export function serviceStatusName(status: number): ServiceStatusName {
  return STATUS_NAMES[status] ?? 'pending';
}

/** Whether a service is sellable: approved and not retired (suspended and rejected are not). */
export function isServiceListed(s: ServiceRecord): boolean {
  return s.status === ServiceStatus.approved && !s.retired;
}

export function registryError(code: RegistryErrorCode, message: string, opts: { action?: 'ignore' | 'reject' } = {}): ValidationError<string> {
  return new ValidationError<string>(code, message, opts);
}

/** Rule: a text field is at most `max` characters and has no control characters. */
export function checkText(value: string, max: number, what: string, required = false): void {
  if (value.length > max) throw registryError(RegistryErrorCode.FIELD_TOO_LONG, `${what} is longer than ${max} characters`);
  if (required && value.trim() === '') throw registryError(RegistryErrorCode.BAD_FIELD, `${what} is required`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(value)) throw registryError(RegistryErrorCode.BAD_FIELD, `${what} contains control characters`);
}

/** Rule: a list of short keywords (capabilities, tags). */
export function checkWords(xs: readonly string[], maxItems: number, what: string): void {
  if (xs.length > maxItems) throw registryError(RegistryErrorCode.FIELD_TOO_LONG, `more than ${maxItems} ${what}s`);
  for (const x of xs) if (!WORD_RE.test(x)) throw registryError(RegistryErrorCode.BAD_FIELD, `${what} "${x}" must be 1-32 of a-z, 0-9 and -`);
  if (new Set(xs).size !== xs.length) throw registryError(RegistryErrorCode.BAD_FIELD, `duplicate ${what}`);
}

/** Rule shared by agent names and service ids: a length cap, the node's reserved prefix, a pattern. */
function checkIdentifier(value: string, max: number, what: string, pattern: RegExp, shape: string): void {
  if (value.length > max) throw registryError(RegistryErrorCode.FIELD_TOO_LONG, `${what} is longer than ${max} characters`);
  if (value.startsWith(RESERVED_PREFIX)) throw registryError(RegistryErrorCode.RESERVED_NAMESPACE, `${what}s starting with "${RESERVED_PREFIX}" belong to the node`);
  if (!pattern.test(value) || value.includes('--')) throw registryError(RegistryErrorCode.BAD_FIELD, `${what} must be ${shape}`);
}

/** Rule: an agent name is 3–32 of a-z, 0-9, single inner hyphens, and not in the node's namespace. */
export function checkAgentName(name: string): void {
  checkIdentifier(name, RegistryLimits.agentName, 'agent name', AGENT_NAME_RE, '3-32 of a-z, 0-9 and single inner -, starting with a letter');
}

/** Rule: a provider service id is `<agent name>-<slug>` (the namespace is checked against the agent when applied), never `native…`. */
export function checkServiceId(id: string): void {
  checkIdentifier(id, RegistryLimits.serviceId, 'service id', /^[a-z][a-z0-9-]*[a-z0-9]$/, 'a-z, 0-9 and single inner -, starting with a letter');
}
