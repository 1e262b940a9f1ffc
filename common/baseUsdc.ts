/**
 * USD Coin on Base (chain 8453): the token the USDC rail is paid in and the EVM services read.
 * Its EIP-712 domain is name "USD Coin", version "2" (the contract's own `name()` and
 * `version()`); 6 decimals.
 */
export const BASE_USDC = { asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', chainId: 8453, name: 'USD Coin', version: '2' } as const;
