/** native-wallet-portfolio: a chain address's NATIVE balance, stakes, LP positions (with underlying amounts) and token holdings, each valued in USD, with the total. */
import { defineService } from './define.js';
import { nativeAddressInput } from './inputs.js';
import { tryDecodeAddress } from '../consensus/address.js';
import { chainHealth } from './health.js';
import { economyOf, foreignAddressReason, round, thisChainAddress } from './market/economy.js';
import { valuePortfolio } from './market/portfolio.js';
import { ServiceError, type ServiceContext } from './types.js';


async function run(ctx: ServiceContext, input: unknown) {
  const eco = economyOf(ctx);
  const address = String(input).trim().toLowerCase();
  const id = tryDecodeAddress(address, ctx.params.hrp);
  // Refused before any quote (thisChainAddress); reached only by a payment that skipped it: no answer, so a refund.
  if (!id) throw new ServiceError('foreign_address', foreignAddressReason(String(input).trim(), ctx.params.hrp));
  const p = await valuePortfolio(ctx.chain, eco, id);
  return {
    address,
    found: true,
    balance: p.balance,
    stakes: p.stakes,
    lpPositions: p.lp,
    tokens: p.tokens,
    totalValueNative: p.totalNative,
    totalValueUsd: p.totalUsd,
    nativeUsd: round(p.nativeUsd, 8),
    priceSource: p.priceSource,
    method: 'tokens valued at their NATIVE pool spot price, LP positions at their underlying amounts, NATIVE at the on-chain NATIVE/USD pool price; assets without a NATIVE pool have null value',
    height: ctx.chain.tip.height,
  };
}

/** native-wallet-portfolio. */
export const walletPortfolio = defineService({
  id: 'native-wallet-portfolio',
  name: 'Wallet Portfolio',
  category: 'portfolio',
  priceBase: 1_200_000n,
  description: 'balance, stake, LP positions, token holdings, USD valuation',
  tags: ['wallet', 'portfolio', 'balance', 'stake', 'lp', 'tokens', 'usd'],
  requestFormat: 'chain address (native1… on mainnet, tnative1… elsewhere)',
  requestRequired: true,
  inputSchema: nativeAddressInput(),
  precheck: thisChainAddress,
  run,
  health: chainHealth,
});
