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

/** Becomes the signer (see module comment); resolves once refunds and payouts run. */
export async function beginPayeeSigning(p: PayeeSignerParts): Promise<void> {
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
