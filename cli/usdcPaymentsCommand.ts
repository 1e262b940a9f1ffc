/**
 * `native-node usdc-payments [--status <s>]`: lists the node's USDC payments from its ledger
 * (`<data dir>/ledger`) for the operator: status (settled, settle_pending, expired_unsettled,
 * failed, claimed), service, payer, amount, tx hash or error, validBefore of pending ones. The
 * ledger is a LevelDB the running node holds locked: run it with the node stopped; while it runs,
 * `/api/v1/status` `payments.usdc` has the counts.
 */
import { join } from 'node:path';
import { NodeError } from '../consensus/errors.js';
import { openLedger, type PaymentRecord, type PaymentStatus } from '../x402/ledger/open.js';
import type { NodeConfig } from '../node/config.js';

/** Error codes of the command. */
export const UsdcPaymentsErrorCode = {
  LEDGER_LOCKED: 'ledger_locked',
  BAD_STATUS: 'invalid_payment_status',
} as const;

const STATUSES: readonly PaymentStatus[] = ['claimed', 'settled', 'settle_pending', 'expired_unsettled', 'failed'];

/** One listed payment. */
export interface UsdcPaymentRow {
  readonly id: string;
  readonly status: PaymentStatus;
  readonly serviceId: string;
  readonly payer: string;
  readonly amountAtomic: string;
  readonly txId: string | null;
  readonly validBefore: number | null;
  readonly error: string | null;
  readonly updatedAt: number;
}

function rowOf(r: PaymentRecord): UsdcPaymentRow {
  const txId = typeof r.receipt?.txId === 'string' && r.receipt.txId ? r.receipt.txId : null;
  return { id: r.id, status: r.status, serviceId: r.serviceId, payer: r.caller, amountAtomic: r.amount, txId, validBefore: r.reconcile?.validBefore ?? null, error: r.error?.code ?? null, updatedAt: r.updatedAt };
}

/** Lists the USDC payments of the ledger in `dataDir` (optionally of one status). */
export async function listUsdcPayments(dataDir: string, status?: string, location = join(dataDir, 'ledger')): Promise<UsdcPaymentRow[]> {
  if (status !== undefined && !STATUSES.includes(status as PaymentStatus)) throw new NodeError(UsdcPaymentsErrorCode.BAD_STATUS, `unknown status ${status}; one of ${STATUSES.join(', ')}`);
  let ledger;
  try {
    ledger = await openLedger(location);
  } catch (e) {
    throw new NodeError(UsdcPaymentsErrorCode.LEDGER_LOCKED, `cannot open the ledger in ${dataDir} (${(e as Error).message}); stop the node first, or read /api/v1/status payments.usdc for the counts`);
  }
  try {
    const rows: UsdcPaymentRow[] = [];
    for await (const r of ledger.records()) if (r.rail === 'usdc' && (status === undefined || r.status === status)) rows.push(rowOf(r));
    return rows.sort((a, b) => a.updatedAt - b.updatedAt);
  } finally {
    await ledger.close();
  }
}

/** Runs the command; returns the exit code. */
export async function usdcPaymentsCommand(config: Pick<NodeConfig, 'dataDir'> & { readonly ledger?: string }, out: { print(human: string, data: unknown): void }, status?: string): Promise<number> {
  const rows = await listUsdcPayments(config.dataDir, status, config.ledger);
  const lines = rows.map((r) => `${r.status.padEnd(17)} ${r.serviceId} ${r.payer} ${r.amountAtomic} ${r.txId ?? (r.validBefore !== null ? `validBefore ${r.validBefore}` : '')}${r.error ? ` (${r.error})` : ''}  ${r.id}`);
  out.print(rows.length ? lines.join('\n') : 'no USDC payments', { payments: rows });
  return 0;
}
