/**
 * The service registry: the catalog's definitions by id, and the input check every paid call
 * passes before a quote. Each definition's schema is compiled once with ajv (plus the custom
 * keywords of `inputs.ts`).
 *
 * `validateInput(def, request)`:
 *   - `request` absent, empty or only whitespace: refused with `invalid_request` when the service
 *     requires it (the spec's governing list) or cannot run without one (`needsInput`), otherwise
 *     accepted with input `undefined`;
 *   - text services: the trimmed string is validated against the schema and is the input;
 *   - JSON services (`inputIsJson`): the string is parsed, then validated; when it is not JSON
 *     but the schema accepts the raw text (native-x402-validation takes a plain URL or a JSON
 *     object), the text is the input;
 *   - errors name the field (`items[0].qty is required`) and carry ajv's errors in `details`.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { inputKeywords, MAX_REQUEST_CHARS } from './inputs.js';
import { requestIsRequired, type ServiceDefinition, type ServiceRegistryReader } from './types.js';

/** The error a refused input gets (HTTP 400 before any quote). */
export interface InvalidRequest {
  readonly code: 'invalid_request';
  readonly message: string;
  readonly details?: unknown;
}

/** Outcome of an input check. */
export type InputValidation = { readonly ok: true; readonly input: unknown } | { readonly ok: false; readonly error: InvalidRequest };

/** The registry the x402 flow, discovery and MCP use. */
export interface ServiceRegistry extends ServiceRegistryReader {
  /** Every definition, catalog order. */
  list(): readonly ServiceDefinition[];
  /** The definition of a `native-…` id, undefined when unknown. */
  get(id: string): ServiceDefinition | undefined;
  /** Checks a call's `request` against the service's input rules (see module comment). */
  validateInput(def: ServiceDefinition, request: string | undefined): InputValidation;
  /** Whether the service can run (has `run`); otherwise it answers 503 `service_unavailable` and reports `down`. */
  isAvailable(def: ServiceDefinition): boolean;
}

/** Error code of a refused input. */
export const INVALID_REQUEST = 'invalid_request' as const;


function invalid(message: string, details?: unknown): InputValidation {
  return { ok: false, error: details === undefined ? { code: INVALID_REQUEST, message } : { code: INVALID_REQUEST, message, details } };
}

/** `/items/0/qty` → `items[0].qty`. */
function fieldPath(instancePath: string, child?: string): string {
  const parts = instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  let out = '';
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out ? `.${p}` : p;
  return out;
}

function describeError(e: ErrorObject, json: boolean): string {
  const params = e.params as Record<string, unknown>;
  if (e.keyword === 'required') return `${fieldPath(e.instancePath, String(params.missingProperty))} is required`;
  if (e.keyword === 'additionalProperties') return `${fieldPath(e.instancePath, String(params.additionalProperty))} is not an accepted field`;
  const at = fieldPath(e.instancePath) || (json ? 'request (JSON)' : 'request');
  // A regex says little to a caller; the requestFormat appended to the message says what is expected.
  if (e.keyword === 'pattern') return `${at} does not have the expected format`;
  if (e.keyword === 'enum') return `${at} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
  return `${at} ${e.message ?? 'is invalid'}`;
}

function schemaErrors(def: ServiceDefinition, errors: readonly ErrorObject[], json: boolean): InputValidation {
  // anyOf/oneOf wrappers only repeat "must match a schema in anyOf"; the branch errors say more.
  const specific = errors.filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf' && e.keyword !== 'if');
  const messages = [...new Set((specific.length ? specific : errors).map((e) => describeError(e, json)))];
  let message = messages.slice(0, 3).join('; ');
  if (messages.length > 3) message += `; and ${messages.length - 3} more`;
  if (def.requestFormat) message += ` (expected: ${def.requestFormat})`;
  const details = errors.map((e) => ({ field: fieldPath(e.instancePath) || null, keyword: e.keyword, message: e.message, params: e.params }));
  return invalid(message, details);
}

/**
 * Creates the registry over `defs`; throws on duplicate ids, and on invalid schemas unless
 * `compileAtCreation` is false (each schema is then compiled at its first validation: the
 * catalog's own, which test/services/registry.test.ts compiles, cost a node start ~0.3 s of CPU).
 */
export function createRegistryOf(defs: readonly ServiceDefinition[], opts: { compileAtCreation?: boolean } = {}): ServiceRegistry {
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
  for (const k of inputKeywords) ajv.addKeyword(k);
  const byId = new Map<string, ServiceDefinition>();
  const validators = new WeakMap<ServiceDefinition, ValidateFunction>();
  const compile = (def: ServiceDefinition): ValidateFunction => {
    let v = validators.get(def);
    if (!v) {
      try {
        v = ajv.compile(def.inputSchema);
      } catch (e) {
        throw new Error(`service ${def.id}: invalid input schema: ${(e as Error).message}`);
      }
      validators.set(def, v);
    }
    return v;
  };
  for (const def of defs) {
    if (byId.has(def.id)) throw new Error(`duplicate service id ${def.id}`);
    byId.set(def.id, def);
    if (opts.compileAtCreation !== false) compile(def);
  }
  const list = Object.freeze([...defs]);

  return {
    list: () => list,
    get: (id) => byId.get(id),
    isAvailable: (def) => typeof def.run === 'function',
    validateInput(def, request) {
      if (request !== undefined && typeof request !== 'string') return invalid('request must be a string');
      if (request !== undefined && request.length > MAX_REQUEST_CHARS) return invalid(`request is longer than ${MAX_REQUEST_CHARS} characters`);
      const text = request?.trim() ?? '';
      if (text === '') {
        if (requestIsRequired(def)) return invalid(`request is required for ${def.id}${def.requestFormat ? `: ${def.requestFormat}` : ''}`);
        return { ok: true, input: undefined };
      }
      const validate = compile(def);
      if (!def.inputIsJson) {
        return validate(text) ? { ok: true, input: text } : schemaErrors(def, validate.errors ?? [], false);
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (e) {
        if (validate(text)) return { ok: true, input: text };
        // A schema that also takes plain text (a URL) got past its type check: its errors say more than JSON.parse's.
        const errors = validate.errors ?? [];
        if (errors.some((x) => x.keyword !== 'type' && x.keyword !== 'anyOf' && x.keyword !== 'oneOf')) return schemaErrors(def, errors, false);
        return invalid(`request is not valid JSON: ${(e as Error).message}${def.requestFormat ? ` (expected: ${def.requestFormat})` : ''}`);
      }
      return validate(parsed) ? { ok: true, input: parsed } : schemaErrors(def, validate.errors ?? [], true);
    },
  };
}
