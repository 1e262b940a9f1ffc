/**
 * `native-node receipt verify <file> [--did <did.json>]`: checks, offline, a paid call's signed
 * receipts (the x402 Offer and Receipt extension's JWS receipt and the payee's hybrid ML-DSA-87 +
 * Ed25519 receipt) against the seller's DID document, and that they cover the result bytes.
 *
 * `<file>` is either the 200 body exactly as the node returned it (then `--did` names the seller's
 * `/.well-known/did.json`, saved beside it), or an evidence bundle
 * `{"body": "<the 200 body text>", "didDocument": {…}}`. Exit 0 when everything verifies, 1 when
 * not (the reason printed), 2 on a usage error.
 */
import { readFileSync } from 'node:fs';
import { NodeError } from '../consensus/errors.js';
import { verifyPaidBody } from '../sdk/receipts.js';
import { CliErrorCode, parse, type Out } from './cliKit.js';

/** The flags `receipt verify`'s parser accepts beyond the common ones (its --help lists them from here). */
export const RECEIPT_OPTIONS = { did: { type: 'string' } } as const;

/** Usage of the receipt command. */
export const RECEIPT_USAGE = 'usage: npx native-node receipt verify <file> [--did <did.json>] [--json]';

/** Reads a JSON file; a usage error naming it when it is not one. */
function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new NodeError(CliErrorCode.USAGE, `${path} is not a readable JSON file: ${(e as Error).message}`);
  }
}

/** Runs `receipt <sub> …`; returns the exit code. */
export function runReceiptCommand(rest: string[], out: Out): number {
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
  const bundle = typeof parsed === 'object' && parsed !== null && typeof (parsed as { body?: unknown }).body === 'string' ? (parsed as { body: string; didDocument?: unknown }) : undefined;
  const body = bundle ? bundle.body : text;
  const did = typeof values.did === 'string' ? readJson(values.did) : bundle?.didDocument;
  if (did === undefined) throw new NodeError(CliErrorCode.USAGE, `no DID document: pass --did <did.json> (the seller's /.well-known/did.json) or a bundle with didDocument; ${RECEIPT_USAGE}`);
  const r = verifyPaidBody(body, did);
  if (!r.ok) {
    out.print(`receipt NOT valid: ${r.reason}: ${r.message}`, { valid: false, reason: r.reason, message: r.message });
    return 1;
  }
  const h = r.hybrid;
  out.print(
    [
      `receipt valid: ${h.serviceId} sold by seller ${h.sellerId} (payee ${h.payee})`,
      `  paid ${h.amount} ${h.asset} on ${h.network} in ${h.txId} by ${h.payer}`,
      `  issued ${new Date(h.issuedAt * 1000).toISOString()} for ${h.resourceUrl}`,
      `  result sha256 ${h.resultSha256}: matches the body's result bytes`,
      `  signatures: JWS (EdDSA, ${r.receipt.network}) and hybrid ML-DSA-87 + Ed25519, both verified`,
    ].join('\n'),
    { valid: true, receipt: r.receipt, hybrid: h },
  );
  return 0;
}
