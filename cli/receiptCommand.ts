/**
 * `native-node receipt verify <file> [--did-document <did.json>] [pins…] [--node <url>]`: checks a
 * paid call's signed receipts (the x402 Offer and Receipt extension's JWS receipt and the payee's
 * hybrid ML-DSA-87 + Ed25519 receipt) against the seller's DID document, and that they cover the
 * result bytes.
 *
 * `<file>` is either the 200 body exactly as the node returned it (then `--did-document` names the
 * seller's `/.well-known/did.json`, saved beside it), or an evidence bundle
 * `{"body": "<the 200 body text>", "didDocument": {…}}`.
 *
 * A DID document proves nothing by itself (anyone can write one that names any DID and binds a
 * key of their own), so the verdict says what it rests on: the pins given (`--payee`, the payee
 * you paid, is the one that ties the signer to the seller; `--did`, `--seller`, `--tx`, `--payer`,
 * `--amount`, `--resource`) and, with `--node <url>`, the native payment found on chain paying
 * that payee. Exit 0 when everything verifies, 1 when not (the reason printed), 2 on a usage error.
 */
import { existsSync, readFileSync } from 'node:fs';
import { NodeError } from '../consensus/errors.js';
import { verifyPaidBody, type ReceiptExpectations, type VerifiedReceipt } from '../sdk/receipts.js';
import { checkNativePayment, type PaymentOnChain } from '../sdk/receiptPayment.js';
import type { VerifyFailure } from '../sdk/receipts.js';
import { CliErrorCode, parse, type Out } from './cliKit.js';

/** The flags `receipt verify`'s parser accepts beyond the common ones (its --help lists them from here; `--node` is a common one). */
export const RECEIPT_OPTIONS = {
  'did-document': { type: 'string' },
  did: { type: 'string' },
  payee: { type: 'string' },
  seller: { type: 'string' },
  tx: { type: 'string' },
  payer: { type: 'string' },
  amount: { type: 'string' },
  resource: { type: 'string' },
} as const;

/** Usage of the receipt command. */
export const RECEIPT_USAGE =
  'usage: npx native-node receipt verify <file> [--did-document <did.json>] [--payee <address>] [--did <did:web:…|url>] [--seller <id>] [--tx <id>] [--payer <address>] [--amount <atomic>] [--resource <url>] [--node <url>] [--json]';

/** Reads a JSON file; a usage error naming it when it is not one. */
function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new NodeError(CliErrorCode.USAGE, `${path} is not a readable JSON file: ${(e as Error).message}`);
  }
}

/** The expectations the flags pin. */
function expectationsOf(values: Record<string, unknown>): ReceiptExpectations {
  const s = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  const did = s('did');
  if (did !== undefined && !did.startsWith('did:') && !/^https?:\/\//.test(did)) {
    throw new NodeError(CliErrorCode.USAGE, `--did pins the seller's DID (did:web:… or the node's https URL), got ${did}${existsSync(did) ? `; pass the saved document with --did-document ${did}` : ''}`);
  }
  const e: Record<string, string | undefined> = {
    ...(did?.startsWith('did:') ? { did } : did ? { baseUrl: did } : {}),
    payee: s('payee'),
    sellerId: s('seller'),
    txId: s('tx'),
    payer: s('payer'),
    amount: s('amount'),
    resourceUrl: s('resource'),
  };
  if (e.amount !== undefined && !/^\d+$/.test(e.amount)) throw new NodeError(CliErrorCode.USAGE, `--amount is in atomic units (base units of NATIVE, USDC atomic units), got ${e.amount}`);
  return Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined)) as ReceiptExpectations;
}

/** The verdict's lines: what was proven and what was not. */
function verdictLines(r: VerifiedReceipt, chain: PaymentOnChain | VerifyFailure | undefined, nodeUrl: string | undefined): string[] {
  const h = r.hybrid;
  const onChain = chain?.ok === true;
  const anchored = r.anchored || onChain;
  const lines = [
    anchored
      ? `receipt valid: signed by payee ${h.payee} (seller ${h.sellerId}) for ${r.did}`
      : `receipt consistent, NOT anchored: the signatures are valid for ${r.did} as this DID document states it, but nothing ties that document to the seller`,
    `  paid ${h.amount} ${h.asset} on ${h.network} in ${h.txId} by ${h.payer} for ${h.serviceId}`,
    `  issued ${new Date(h.issuedAt * 1000).toISOString()} for ${h.resourceUrl}`,
    `  result sha256 ${h.resultSha256}: matches the body's result bytes`,
    `  signatures: JWS (EdDSA, ${r.kid}${r.retiredKey ? ', a retired key the document still lists' : ''}) and hybrid ML-DSA-87 + Ed25519, both verified`,
    `  pinned: ${r.pinned.length ? r.pinned.join(', ') : 'nothing'}; not pinned: ${r.unpinned.length ? r.unpinned.join(', ') : 'nothing'}`,
  ];
  if (!chain) lines.push(`  payment on chain: not checked (--node <url> checks a native payment at a node you trust)`);
  else if (chain.ok) lines.push(`  payment on chain: checked at ${nodeUrl}: mined at height ${chain.height} (${chain.confirmations} confirmations), paying ${h.payee} ${h.amount} from ${h.payer}`);
  else lines.push(`  payment on chain: not checked: ${chain.message}`);
  if (!anchored) {
    lines.push(
      '  WARNING: a DID document proves nothing by itself: anyone can write one naming any DID and sign receipts that verify like this one.',
      '  Pin the payee you paid (--payee, the payTo of your payment) or check the payment on chain (--node), and pin the DID (--did).',
    );
  } else if (!r.pinned.includes('did')) lines.push(`  note: the DID is not pinned (--did): the signer is the payee above, but ${r.did} is only what its document claims`);
  return lines;
}

/**
 * Runs `receipt <sub> …`; returns the exit code — at once when the verdict is offline, a promise
 * of it with `--node` (which never rejects: a node it cannot read is a refusal). Usage errors are
 * thrown synchronously.
 */
export function runReceiptCommand(rest: string[], out: Out): number | Promise<number> {
  const [sub, ...args] = rest;
  if (sub !== 'verify') throw new NodeError(CliErrorCode.USAGE, RECEIPT_USAGE);
  const { values, positionals } = parse(args, RECEIPT_OPTIONS, { min: 1, max: 1, usage: 'one receipt file' });
  const file = positionals[0];
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new NodeError(CliErrorCode.USAGE, `cannot read ${file}: ${(e as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new NodeError(CliErrorCode.USAGE, `${file} is not JSON: give the 200 body as returned, or {"body": "<200 body text>", "didDocument": {…}}`);
  }
  const expect = expectationsOf(values);
  const nodeUrl = typeof values.node === 'string' ? values.node : undefined;
  if (nodeUrl !== undefined && !/^https?:\/\/[^\s/]+/.test(nodeUrl)) throw new NodeError(CliErrorCode.USAGE, `--node must be an http(s) URL, got ${nodeUrl}`);
  const bundle = typeof parsed === 'object' && parsed !== null && typeof (parsed as { body?: unknown }).body === 'string' ? (parsed as { body: string; didDocument?: unknown }) : undefined;
  const body = bundle ? bundle.body : text;
  const did = typeof values['did-document'] === 'string' ? readJson(values['did-document']) : bundle?.didDocument;
  if (did === undefined) throw new NodeError(CliErrorCode.USAGE, `no DID document: pass --did-document <did.json> (the seller's /.well-known/did.json) or a bundle with didDocument; ${RECEIPT_USAGE}`);
  const r = verifyPaidBody(body, did, expect);
  if (!r.ok) return refuse(out, r);
  if (nodeUrl === undefined) return report(out, r, undefined, undefined);
  return checkNativePayment(nodeUrl, r.hybrid).then((chain) =>
    // A payment the node cannot vouch for refuses the receipt; one on another chain (USDC on Base) is reported unchecked.
    !chain.ok && chain.reason !== 'not_native' ? refuse(out, chain) : report(out, r, chain, nodeUrl),
  );
}

/** Prints a refusal; exit code 1. */
function refuse(out: Out, f: VerifyFailure): number {
  out.print(`receipt NOT valid: ${f.reason}: ${f.message}`, { valid: false, reason: f.reason, message: f.message });
  return 1;
}

/** Prints a verdict and what it rests on; exit code 0. */
function report(out: Out, r: VerifiedReceipt, chain: PaymentOnChain | VerifyFailure | undefined, nodeUrl: string | undefined): number {
  const onChain = chain?.ok === true ? { height: chain.height, confirmations: chain.confirmations, blockHash: chain.blockHash, node: nodeUrl } : chain ? { checked: false, reason: chain.reason, message: chain.message } : { checked: false };
  out.print(verdictLines(r, chain, nodeUrl).join('\n'), {
    valid: true,
    anchored: r.anchored || chain?.ok === true,
    did: r.did,
    kid: r.kid,
    retiredKey: r.retiredKey,
    pinned: r.pinned,
    unpinned: r.unpinned,
    onChain,
    receipt: r.receipt,
    hybrid: r.hybrid,
  });
  return 0;
}
