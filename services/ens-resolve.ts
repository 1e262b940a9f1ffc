/**
 * native-ens-resolve: ENS forward resolution (name → address) and reverse resolution (address →
 * primary name, counted only when the name resolves back to the address), with the avatar record
 * when the name has one, over the operator's Ethereum RPC.
 */
import { ens_normalize } from '@adraffy/ens-normalize';
import type { Address } from 'viem';
import { defineService, EXTERNAL_TIMEOUT_MS } from './define.js';
import { evmAddressInput } from './inputs.js';
import { loadViem } from './providers/evm.js';
import { callProvider, inputAndProvidersReady, providersHealth } from './providers/index.js';
import type { ServiceContext } from './types.js';

/** Public gateway an `ipfs://` avatar is shown through (the node does not fetch it). */
export const IPFS_GATEWAY = 'https://ipfs.io/ipfs/';

/** An avatar record (ENSIP-12) and what it points to, without fetching anything. */
export async function describeAvatar(record: string | null) {
  const { getAddress } = await loadViem();
  if (!record) return null;
  const nft = /^eip155:(\d+)\/(erc721|erc1155):(0x[0-9a-fA-F]{40})\/(\d+)$/i.exec(record);
  if (nft) return { record, url: null, nft: { chainId: Number(nft[1]), standard: nft[2].toLowerCase(), contract: getAddress(nft[3]), tokenId: nft[4] } };
  if (/^ipfs:\/\//i.test(record)) return { record, url: IPFS_GATEWAY + record.slice(7).replace(/^ipfs\//i, ''), nft: null };
  if (/^https?:\/\//i.test(record) || /^data:image\//i.test(record)) return { record, url: record, nft: null };
  return { record, url: null, nft: null };
}

/** The ENSIP-15 form of a name read from a resolver, or null when it is not a valid name (then it is no primary name). */
function normalizedOrNull(name: string): string | null {
  try {
    return ens_normalize(name);
  } catch {
    return null;
  }
}

async function run(ctx: ServiceContext, input: unknown) {
  const query = String(input);
  const { getAddress } = await loadViem();
  return callProvider(ctx, 'evmEthereum', async (p) => {
    const eth = p.evm.ethereum;
    if (/^0x[0-9a-fA-F]{40}$/.test(query)) {
      const address = getAddress(query);
      const claimed = await eth.ensReverse(address, ctx.signal);
      const normalized = claimed === null ? null : normalizedOrNull(claimed);
      const forward = normalized === null ? null : await eth.ensForward(normalized, ctx.signal);
      const verified = forward !== null && forward.address !== null && forward.address.toLowerCase() === address.toLowerCase();
      return {
        type: 'reverse',
        query,
        address,
        name: verified ? normalized : null,
        reverseRecord: claimed,
        verified,
        avatar: verified ? await describeAvatar(forward!.avatar) : null,
        resolver: verified ? forward!.resolver : null,
      };
    }
    const name = ens_normalize(query);
    const forward = await eth.ensForward(name, ctx.signal);
    let isPrimary: boolean | null = null;
    if (forward.address) {
      const back = await eth.ensReverse(forward.address as Address, ctx.signal);
      isPrimary = back !== null && normalizedOrNull(back) === name;
    }
    return { type: 'forward', query, name, address: forward.address, resolver: forward.resolver, registered: forward.resolver !== null, isPrimaryName: isPrimary, avatar: await describeAvatar(forward.avatar) };
  });
}

/** native-ens-resolve. */
export const ensResolve = defineService({
  id: 'native-ens-resolve',
  name: 'ENS Resolver',
  category: 'explorer',
  priceBase: 400_000n,
  description: 'name-service forward and reverse resolution with avatar when available',
  tags: ['ens', 'name-service', 'resolve', 'reverse', 'avatar', 'ethereum'],
  requestFormat: 'name ending .eth, or a 0x address',
  requestRequired: false,
  needsInput: true,
  inputSchema: { anyOf: [{ type: 'string', maxLength: 255, pattern: '^[^\\s./]+(\\.[^\\s./]+)*\\.[Ee][Tt][Hh]$', 'x-ens-name': true }, evmAddressInput()], description: 'ENS name ending .eth, or an EVM address.' },
  timeoutMs: EXTERNAL_TIMEOUT_MS,
  run,
  health: providersHealth('evmEthereum'),
  precheck: inputAndProvidersReady('a name ending .eth, or a 0x address', 'evmEthereum'),
});
