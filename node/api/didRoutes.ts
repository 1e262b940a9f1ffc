/**
 * The seller's DID document (W3C `did:web` of the node's public base URL):
 *
 *   GET /.well-known/did.json   the document of `did:web:<host>` (a base URL without a path)
 *   GET /did.json               the same document, where `did:web:<host>:<path>` resolves when the
 *                               public URL has a path (`https://x.example/node` → `/node/did.json`)
 *
 * It publishes the Ed25519 key that signs the x402 Offer and Receipt extension's JWS offers and
 * receipts (`verificationMethod`, `assertionMethod`) and, in `x402Payee`, the payee's hybrid
 * public key with its signature binding that key to the payee (x402/core/offers.ts), and the
 * bindings of keys retired by payee rotations the operator lists (`--retired-keys`, read here).
 */
import { readFile } from 'node:fs/promises';
import { Router } from '@koa/router';
import type Koa from 'koa';
import { NodeError } from '../../consensus/errors.js';
import { readRetiredBindings, type PayeeBinding, type SellerIdentity } from '../../x402/core/offers.js';
import { ConfigErrorCode } from '../config.js';
import { localBaseUrl } from './publicUrl.js';

/** The retired key bindings of the `--retired-keys` file (none without one); a config error naming the file when it is unreadable or a binding does not verify. */
export async function loadRetiredKeys(path: string | undefined, hrp: string): Promise<PayeeBinding[] | undefined> {
  if (path === undefined) return undefined;
  try {
    return readRetiredBindings(JSON.parse(await readFile(path, 'utf8')), hrp);
  } catch (e) {
    throw new NodeError(ConfigErrorCode.INVALID, `--retired-keys ${path}: ${(e as Error).message}`, { option: 'retiredKeys' });
  }
}

/** Builds the router of the DID document; `publicBaseUrl` as for the paid endpoints. */
export function createDidRouter(seller: SellerIdentity, publicBaseUrl?: () => string): Router {
  const router = new Router();
  const serve = (ctx: Koa.Context) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.type = 'application/did+json';
    ctx.body = JSON.stringify(seller.didDocument(publicBaseUrl?.() ?? localBaseUrl(ctx)));
  };
  router.get('/.well-known/did.json', serve);
  router.get('/did.json', serve);
  return router;
}
