/** Polling in tests that wait on real processes. */

/**
 * Calls `f` every `stepMs` until it answers something truthy, and answers that; throws
 * `timed out waiting for <what>` once `ms` have passed without.
 */
export async function until<T>(what: string, f: () => Promise<T | undefined | false>, ms = 60_000, stepMs = 250): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
