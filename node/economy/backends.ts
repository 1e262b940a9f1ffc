/** The two places the economy simulator can act on: this node's own chain and mempool, or a node's HTTP API. */
import { encodeAddress } from '../../consensus/address.js';
import { toHex } from '../../consensus/hash.js';
import type { Chain } from '../../chain/chain.js';
import type { Mempool } from '../../chain/mempool.js';
import type { ChainParams } from '../../consensus/params.js';
import type { NodeClient } from '../client.js';
import type { SimBackend, SimPool } from './simulator.js';

/** Acts on a node's own chain and mempool (the `--economy` devnet). */
export function createChainBackend(chain: Chain, mempool: Mempool): SimBackend {
  const eco = chain.economy;
  return {
    async nextNonce(id) {
      return mempool.pendingNonce(id, (await chain.getAccount(id)).nonce);
    },
    async submit(bytes) {
      await mempool.add(bytes);
    },
    async height() {
      return chain.tip.height;
    },
    async tokens() {
      return new Set((await eco.tokenRecords()).keys());
    },
    async pools() {
      return (await eco.poolRecords()).map((p) => ({ id: `${p.a}-${p.b}`, a: p.a, b: p.b, reserveA: p.reserveA, reserveB: p.reserveB }));
    },
    async floats() {
      return (await eco.bridgeNetworks()).map((n) => BigInt(n.float));
    },
    async positions(id) {
      const a = await eco.account(id);
      return { lp: a.lp.map((l) => ({ pool: l.pool, shares: BigInt(l.shares) })), stakes: a.stakes.map((s) => ({ id: s.id, unlocked: s.unlocked })) };
    },
  };
}

/** Acts on any node through its HTTP API (`native-node simulate --node URL`). */
export function createHttpBackend(client: NodeClient, params: ChainParams): SimBackend {
  const address = (id: Uint8Array) => encodeAddress(id, params.hrp);
  return {
    async nextNonce(id) {
      return BigInt((await client.account(address(id))).pendingNonce);
    },
    async submit(bytes) {
      await client.submitTx(toHex(bytes));
    },
    async height() {
      return (await client.status()).height;
    },
    async tokens() {
      const r = await client.request<{ tokens: { symbol: string }[] }>('GET', '/api/v1/tokens?hidden=1');
      return new Set(r.tokens.map((t) => t.symbol));
    },
    async pools() {
      const r = await client.request<{ pools: { id: string; a: string; b: string; reserveA: string; reserveB: string }[] }>('GET', '/api/v1/pools');
      return r.pools.map((p): SimPool => ({ id: p.id, a: p.a, b: p.b, reserveA: BigInt(p.reserveA), reserveB: BigInt(p.reserveB) }));
    },
    async floats() {
      const r = await client.request<{ networks: { float: string }[] }>('GET', '/api/v1/bridge');
      return r.networks.map((n) => BigInt(n.float));
    },
    async positions(id) {
      const r = await client.request<{ lpPositions?: { pool: string; shares: string }[]; stakes?: { id: string; unlocked: boolean }[] }>('GET', `/api/v1/account/${address(id)}`);
      return { lp: (r.lpPositions ?? []).map((l) => ({ pool: l.pool, shares: BigInt(l.shares) })), stakes: (r.stakes ?? []).map((s) => ({ id: s.id, unlocked: s.unlocked })) };
    },
  };
}
