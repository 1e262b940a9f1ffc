/**
 * Becoming and ceasing to be the signer of the payee key (a node's start and stop; in a fleet,
 * the signer lease acquired and lost): the order that keeps every payee nonce to one transaction.
 *
 * Becoming the signer: the allocator's gate is `reconciling` (x402/native/payeeNonces.ts); every stored
 * transaction goes out again — the nonce slots' bytes, whoever signed them, then what the refund
 * and payout records store — and is checked against the chain; only then does the gate open and
 * do refunds and payouts sign what is owed. Ceasing: the gate closes first (a submission in
 * flight is refused), then the refunds and payouts stop and their queued work ends.
 */
import type { HybridKeyPair } from '../../consensus/keys.js';
import { silentLogger, type Logger } from '../../chain/types.js';
import type { PayeeNonces } from './payeeNonces.js';
import { reconcilePayeeTxs } from './payeeTx.js';
import { LedgerErrorCode } from '../ledger/ledger.js';
import type { PaymentChain, PaymentMempool } from '../core/ports.js';
import type { RefundManager } from './refunds.js';

/** What signs with the payee key. */
export interface PayeeSignerParts {
  readonly chain: PaymentChain;
  readonly mempool: PaymentMempool;
  readonly payee: HybridKeyPair;
  readonly nonces: PayeeNonces;
  readonly refunds?: Pick<RefundManager, 'resume' | 'start' | 'stop' | 'idle'>;
  /** The provider payouts (x402/providers/payouts.ts `PayoutManager`). */
  readonly payouts?: { resume(): Promise<void>; start(): Promise<void>; stop(): void; idle(): Promise<void> };
  readonly logger?: Logger;
}

/** How long a signer whose start failed (the ledger unreachable for a moment) waits before it starts again, ms. */
export const BEGIN_RETRY_MS = 250;

/**
 * Becomes the signer (see module comment); resolves once refunds and payouts run. A start that
 * fails for the ledger (`ledger_unavailable`) while this node is still the signer (a ledger blip: a PostgreSQL restart's stale
 * connection) starts again after `BEGIN_RETRY_MS`: a half-started signer holds the lease with its
 * gate shut, or open with refunds or payouts that never follow the tip (what they owe never
 * signed). It gives up (rejects) once the gate is closed: the signer role was lost meanwhile.
 */
export async function beginPayeeSigning(p: PayeeSignerParts): Promise<void> {
  for (;;) {
    try {
      return await beginOnce(p);
    } catch (e) {
      if ((e as { code?: string }).code !== LedgerErrorCode.UNAVAILABLE) throw e;
      // Nothing new signed until the start is whole again (a gate closed meanwhile stays closed).
      if (p.nonces.isOpen()) p.nonces.reconciling();
      p.refunds?.stop();
      p.payouts?.stop();
      await new Promise((r) => setTimeout(r, BEGIN_RETRY_MS));
      if (p.nonces.state() === 'closed') throw e;
      (p.logger ?? silentLogger).warn({ err: (e as Error).message }, 'payee signer could not start: starting again');
    }
  }
}

async function beginOnce(p: PayeeSignerParts): Promise<void> {
  const log = p.logger ?? silentLogger;
  const sent = await reconcilePayeeTxs(
    p.chain,
    p.mempool,
    p.payee,
    p.nonces,
    (slot, e) => log.warn({ nonce: slot.nonce.toString(), purpose: slot.purpose, txId: slot.txId, err: e.message }, 'stored payee transaction not accepted yet'),
    (e) => log.warn({ err: e.message }, 'old payee nonce slots could not be deleted (tried again at the next start)'),
  );
  if (sent) log.info({ sent }, 'stored payee transactions sent again');
  await p.refunds?.resume();
  await p.payouts?.resume();
  p.nonces.open();
  await p.payouts?.start();
  await p.refunds?.start();
}

/** Ceases to be the signer (see module comment); resolves once the refunds' and payouts' queued work ended. */
export async function endPayeeSigning(p: Pick<PayeeSignerParts, 'nonces' | 'refunds' | 'payouts'>): Promise<void> {
  p.nonces.close();
  p.refunds?.stop();
  p.payouts?.stop();
  await p.refunds?.idle();
  await p.payouts?.idle();
}
