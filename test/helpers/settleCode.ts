/**
 * A settle as a payer retries it, reduced to its answer: 'served', or the error code the node
 * gave (the restore tests ask whether a payment is served again).
 */
import { isAgentClientError, type AgentClient } from '../../sdk/client.js';

/** Settles `txId` (with its salt) for a fresh quote of `serviceId` with `request`; resolves to 'served' or the error code. */
export async function settleCode(client: AgentClient, serviceId: string, request: string, txId: string, salt: string): Promise<string> {
  const q = await client.quote(serviceId, request);
  return client.settle(q, txId, { timeoutMs: 20_000, salt }).then(
    () => 'served',
    (e: unknown) => (isAgentClientError(e) ? e.code : String(e)),
  );
}
