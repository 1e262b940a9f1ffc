/**
 * Running one service call with its timeout: the x402 flow calls this after a payment was
 * verified and claimed. Every failure comes out as a `ServiceError` with a stable code (the
 * caller then refunds); a result is returned only when it is plain JSON.
 */
import { ServiceError, type ServiceContext, type ServiceDefinition } from './types.js';

/** Codes of `ServiceError`s raised by the execution wrapper itself (services raise their own too). */
export const ServiceExecErrorCode = {
  /** The definition has no `run`. */
  UNAVAILABLE: 'service_unavailable',
  /** `def.timeoutMs` expired. */
  TIMEOUT: 'service_timeout',
  /** The caller's signal aborted the call (node stopping). */
  ABORTED: 'service_aborted',
  /** `run` threw something that is not a ServiceError. */
  FAILED: 'service_failed',
  /** `run` returned something that is not JSON (a bigint, a cycle). */
  BAD_RESULT: 'service_bad_result',
} as const;

/**
 * Runs `def` on `input` (already validated by the registry) under a fresh abort signal that
 * fires after `def.timeoutMs` or when `ctx.signal` aborts. Resolves to a JSON-clean copy of the
 * result; rejects with a `ServiceError` only.
 */
export async function executeService(def: ServiceDefinition, ctx: Omit<ServiceContext, 'signal'> & { readonly signal?: AbortSignal }, input: unknown): Promise<unknown> {
  const run = def.run;
  if (!run) throw new ServiceError(ServiceExecErrorCode.UNAVAILABLE, `${def.id} is not available on this node`);
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let onParentAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    const fail = (e: ServiceError) => {
      controller.abort(e);
      reject(e);
    };
    timer = setTimeout(() => fail(new ServiceError(ServiceExecErrorCode.TIMEOUT, `${def.id} did not finish within ${def.timeoutMs} ms`)), def.timeoutMs);
    const parent = ctx.signal;
    if (parent) {
      onParentAbort = () => fail(new ServiceError(ServiceExecErrorCode.ABORTED, `${def.id} was aborted`));
      if (parent.aborted) onParentAbort();
      else parent.addEventListener('abort', onParentAbort, { once: true });
    }
  });
  try {
    const result = await Promise.race([run({ ...ctx, signal: controller.signal }, input), stopped]);
    let json: string | undefined;
    try {
      json = JSON.stringify(result);
    } catch (e) {
      throw new ServiceError(ServiceExecErrorCode.BAD_RESULT, `${def.id} returned a result that is not JSON: ${(e as Error).message}`);
    }
    return json === undefined ? null : (JSON.parse(json) as unknown);
  } catch (e) {
    if (e instanceof ServiceError) throw e;
    throw new ServiceError(ServiceExecErrorCode.FAILED, `${def.id} failed: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    clearTimeout(timer);
    if (onParentAbort) ctx.signal?.removeEventListener('abort', onParentAbort);
  }
}
