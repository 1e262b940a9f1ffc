/**
 * A transaction in words for the explorer: one sentence per transaction type, built from the
 * API's JSON view of it (`txToJson`: amounts already at their asset's decimals) and what the
 * indexes and the settlement ledger add (a swap's actual output and price, an invoke's
 * settlement or refund). Returns HTML (every value escaped).
 */
import { esc } from './layout.js';

/** A swap hop as the swap log records it (base units), with the decimals of its assets. */
export interface SwapHop {
  readonly pool: string;
  readonly assetIn: string;
  readonly assetOut: string;
  readonly amountIn: string;
  readonly amountOut: string;
}

/** What the node knows of an invoke's payment (its own ledger for payments to it; consensus for all). */
export interface InvokeState {
  /** The service's display name, when the node sells it. */
  readonly serviceName?: string;
  /** Consensus: a refund of it was mined. */
  readonly refundedOnChain?: boolean;
  /** This node's ledger record (payments to this node only). */
  readonly ledger?: { readonly status: string; readonly refundTxId?: string; readonly error?: { code: string; message: string } };
  /** Refund queued by this node and not mined yet. */
  readonly refundPending?: boolean;
}

/** Extras of a transaction page besides the JSON view. */
export interface TxExtras {
  readonly swaps?: readonly SwapHop[];
  readonly invoke?: InvokeState;
  /** For a refund or a provider payout: the service of the invoke it names. */
  readonly invokeService?: string;
  /** Decimals of assets (NATIVE 8). */
  readonly decimals: (asset: string) => number;
  readonly mined: boolean;
}

/** Link to an address page. */
export function addrLink(a: unknown): string {
  const s = String(a);
  return `<a class="mono" href="/explorer/address/${esc(encodeURIComponent(s))}">${esc(short(s))}</a>`;
}

/** Link to a transaction page. */
export function txLink(id: unknown, label?: string): string {
  const s = String(id);
  return `<a class="mono" href="/explorer/tx/${esc(s)}">${esc(label ?? short(s))}</a>`;
}

/** Link to a token page (NATIVE has none). */
export function assetLink(sym: unknown): string {
  const s = String(sym);
  return s === 'NATIVE' ? 'NATIVE' : `<a href="/explorer/token/${esc(encodeURIComponent(s))}">${esc(s)}</a>`;
}

/** Link to a pool page. */
export function poolLink(id: unknown): string {
  const s = String(id);
  return `<a href="/explorer/pool/${esc(encodeURIComponent(s))}">${esc(s.replace('-', '/'))}</a>`;
}

/** A long id or address shortened for tables: first 10 … last 6 (the full value in the link target). */
export function short(s: string): string {
  return s.length > 24 ? `${s.slice(0, 12)}…${s.slice(-6)}` : s;
}

/** Exact decimal text of base units at `decimals`. */
export function units(base: string | bigint, decimals: number): string {
  const n = BigInt(base);
  const neg = n < 0n;
  const abs = neg ? -n : n;
  if (decimals === 0) return `${neg ? '-' : ''}${abs}`;
  const s = abs.toString().padStart(decimals + 1, '0');
  const frac = s.slice(-decimals).replace(/0+$/, '');
  const whole = s.slice(0, -decimals).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${neg ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}

/** A decimal string of the JSON view with its asset: `<strong>1.5</strong> NATIVE`. */
function amt(v: unknown, asset: unknown): string {
  return `<strong>${esc(v)}</strong> ${assetLink(asset)}`;
}

/** A price with about 6 significant digits. */
export function priceText(p: number): string {
  if (!Number.isFinite(p) || p === 0) return '0';
  return p >= 1000 ? p.toLocaleString('en-US', { maximumFractionDigits: 2 }) : Number(p.toPrecision(6)).toString();
}

/** The invoke's outcome in words. */
function invokeOutcome(s: InvokeState | undefined, mined: boolean): string {
  if (!mined) return 'Pending: not mined yet, so not settled.';
  const l = s?.ledger;
  if (l) {
    const why = l.error ? ` (${esc(l.error.code)}: ${esc(l.error.message)})` : '';
    switch (l.status) {
      case 'settled':
        return 'Settled: this node ran the service and delivered the result.';
      case 'refunded':
        return `Refunded${why}: the payment went back to the payer${l.refundTxId ? ` in ${txLink(l.refundTxId)}` : ''}.`;
      case 'refund_pending':
        return `Refund pending${why}${l.refundTxId ? `: refund ${txLink(l.refundTxId)} waits to be mined` : ''}.`;
      case 'claimed':
        return 'Being served: the call is running.';
      default:
        return `Ledger status: ${esc(l.status)}${why}.`;
    }
  }
  if (s?.refundedOnChain) return 'Refunded: a refund of this payment was mined.';
  if (s?.refundPending) return 'Refund pending: signed by this node, not mined yet.';
  return 'Not settled here: no settle of this payment reached this node (it may have been paid to another node, or the payer has not asked for the result yet).';
}

/** The sentence (HTML) describing a transaction. */
export function describeTx(j: Record<string, unknown>, x: TxExtras): string {
  const from = addrLink(j.from);
  switch (j.type) {
    case 'transfer':
      return `${from} sent ${amt(j.amount, 'NATIVE')} to ${addrLink(j.to)}.`;
    case 'token_transfer':
      return `${from} sent ${amt(j.amount, j.symbol)} to ${addrLink(j.to)}.`;
    case 'swap': {
      const path = (j.path as string[]) ?? [];
      const route = path.map(assetLink).join(' → ');
      const hops = x.swaps ?? [];
      if (x.mined && hops.length > 0) {
        const first = hops[0];
        const last = hops[hops.length - 1];
        const dIn = x.decimals(first.assetIn);
        const dOut = x.decimals(last.assetOut);
        const inN = Number(first.amountIn) / 10 ** dIn;
        const outN = Number(last.amountOut) / 10 ** dOut;
        const price = inN > 0 ? outN / inN : 0;
        return `${from} swapped ${amt(units(first.amountIn, dIn), first.assetIn)} for ${amt(units(last.amountOut, dOut), last.assetOut)} at <strong>1 ${esc(first.assetIn)} = ${esc(priceText(price))} ${esc(last.assetOut)}</strong> (${esc(priceText(price > 0 ? 1 / price : 0))} ${esc(first.assetIn)} per ${esc(last.assetOut)}), route ${route}${hops.length > 1 ? ` through ${hops.length} pools` : ` in pool ${poolLink(first.pool)}`}.`;
      }
      return `${from} ${x.mined ? 'offered' : 'offers'} ${amt(j.amountIn, path[0])} for at least ${amt(j.minOut, path[path.length - 1])}, route ${route}${x.mined ? '' : ` (valid until block ${esc(j.expiryHeight)})`}.`;
    }
    case 'agent_invoke': {
      const svc = x.invoke?.serviceName ? `${esc(x.invoke.serviceName)} (<code>${esc(j.serviceId)}</code>)` : `<code>${esc(j.serviceId)}</code>`;
      return `${from} paid ${amt(j.amount, 'NATIVE')} to ${addrLink(j.payTo)} for a call of the service ${svc}. <span class="outcome">${invokeOutcome(x.invoke, x.mined)}</span>`;
    }
    case 'refund':
      return `${from} refunded ${amt(j.amount, 'NATIVE')} to ${addrLink(j.to)} for the paid call ${txLink(j.invokeId)}${x.invokeService ? ` of <code>${esc(x.invokeService)}</code>` : ''}.`;
    case 'provider_payout':
      return `${from} paid the provider ${addrLink(j.to)} ${amt(j.amount, 'NATIVE')} for the call ${txLink(j.invokeId)}${x.invokeService ? ` of <code>${esc(x.invokeService)}</code>` : ''}.`;
    case 'token_issue':
      return `${from} issued the ${j.kind === 'usd-stable' ? 'USD stablecoin' : 'token'} ${assetLink(j.symbol)} “${esc(j.name)}” with ${esc(j.decimals)} decimals: ${esc(j.initialSupply)} at once, at most ${esc(j.maxSupply)}.`;
    case 'token_mint':
      return `${from} minted ${amt(j.amount, j.symbol)}${j.to ? ` to ${addrLink(j.to)}` : ''}.`;
    case 'token_burn':
      return `${from} burned ${amt(j.amount, j.symbol)}.`;
    case 'token_redeem':
      return `${from} redeemed ${amt(j.amount, j.symbol)} for its NATIVE backing.`;
    case 'token_back':
      return `${from} added ${amt(j.amount, 'NATIVE')} of backing to ${assetLink(j.symbol)}.`;
    case 'token_flags':
      return `${from} set ${assetLink(j.symbol)} ${j.frozen ? 'frozen' : 'not frozen'} and ${j.hidden ? 'hidden' : 'listed'}.`;
    case 'stable_mint':
      return `${from} locked ${amt(j.collateral, 'NATIVE')} as collateral to mint ${amt(j.amount, j.symbol)}.`;
    case 'pool_create':
      return `${from} created the pool ${poolLink(j.pool)} with ${amt(j.amountX, j.assetX)} and ${amt(j.amountY, j.assetY)}.`;
    case 'pool_add':
      return `${from} added liquidity to ${poolLink(j.pool)}: up to ${amt(j.desiredX, j.assetX)} and ${amt(j.desiredY, j.assetY)}.`;
    case 'pool_remove':
      return `${from} withdrew ${esc(j.shares)} liquidity shares from ${poolLink(j.pool)} (at least ${amt(j.minX, j.assetX)} and ${amt(j.minY, j.assetY)}).`;
    case 'stake':
      return `${from} staked ${amt(j.amount, 'NATIVE')} in the ${esc(j.tierName ?? j.tier)} tier.`;
    case 'unstake':
      return `${from} closed the stake ${txLink(j.stakeId)} and took back its amount and reward.`;
    case 'bridge_record':
      return `Bridge ${esc(j.direction)} on ${esc(j.network)}: ${amt(j.amount, 'NATIVE')} for ${addrLink(j.account)} (fee ${esc(j.fee)} NATIVE, reference <code>${esc(j.ref)}</code>), recorded by ${from}.`;
    case 'agent_register':
    case 'agent_update':
      return `${from} ${j.type === 'agent_register' ? 'registered' : 'updated'} the provider agent <strong>${esc(j.name)}</strong> (payouts to ${addrLink(j.payout)}).`;
    case 'service_register':
    case 'service_update':
      return `${from} ${j.type === 'service_register' ? 'listed' : 'updated'} the service <code>${esc(j.id)}</code> “${esc(j.name)}”.`;
    case 'service_retire':
      return `${from} retired the service <code>${esc(j.id)}</code>.`;
    case 'moderation':
      return j.action === 'label' ? `${from} labelled ${addrLink(j.address)} “${esc(j.label)}”: ${esc(j.reason)}.` : `${from} ${esc(j.action)} the service <code>${esc(j.serviceId)}</code>: ${esc(j.reason)}.`;
    default:
      return `${from} sent a transaction of type <code>${esc(j.type)}</code>.`;
  }
}
