/**
 * Constant-product pool math (Uniswap v2), exact in integers. Every division rounds down, and
 * each rounding is in the pool's favour: a trader receives the floor of the exact output, a
 * liquidity provider receives the floor of the pro-rata shares or reserves.
 */

/** Integer square root: the largest r with r² ≤ n. */
export function isqrt(n: bigint): bigint {
  if (n < 0n) throw new RangeError('isqrt of a negative number');
  if (n < 2n) return n;
  let x = BigInt(Math.floor(Math.sqrt(Number(n))));
  // The float estimate is within a few units; settle it exactly.
  while (x * x > n) x--;
  while ((x + 1n) * (x + 1n) <= n) x++;
  return x;
}

/**
 * Output of a swap of `amountIn` into a pool with reserves (`reserveIn`, `reserveOut`), the fee
 * `feeBps` staying in the pool: out = ⌊ in·(10000−fee)·rOut / (rIn·10000 + in·(10000−fee)) ⌋.
 */
export function getAmountOut(amountIn: bigint, reserveIn: bigint, reserveOut: bigint, feeBps: number): bigint {
  if (amountIn <= 0n || reserveIn <= 0n || reserveOut <= 0n) return 0n;
  const inWithFee = amountIn * BigInt(10_000 - feeBps);
  return (inWithFee * reserveOut) / (reserveIn * 10_000n + inWithFee);
}

/** Fee kept by the pool on a swap of `amountIn` (in the input asset, rounded up: the pool's favour). */
export function swapFee(amountIn: bigint, feeBps: number): bigint {
  return (amountIn * BigInt(feeBps) + 9_999n) / 10_000n;
}

/** LP shares of a first deposit: √(a·b), of which `minLiquidity` are locked forever. */
export function initialShares(amountA: bigint, amountB: bigint): bigint {
  return isqrt(amountA * amountB);
}

/**
 * A later deposit: the amounts actually taken (Uniswap v2's optimal pair, never more than
 * desired) and the shares minted, min(a·S/rA, b·S/rB) rounded down.
 */
export function addLiquidityAmounts(
  desiredA: bigint,
  desiredB: bigint,
  reserveA: bigint,
  reserveB: bigint,
  lpSupply: bigint,
): { amountA: bigint; amountB: bigint; shares: bigint } {
  let amountA = desiredA;
  let amountB = (desiredA * reserveB) / reserveA;
  if (amountB > desiredB) {
    amountB = desiredB;
    amountA = (desiredB * reserveA) / reserveB;
  }
  const sa = (amountA * lpSupply) / reserveA;
  const sb = (amountB * lpSupply) / reserveB;
  return { amountA, amountB, shares: sa < sb ? sa : sb };
}

/** Reserves paid out for burning `shares`: each reserve × shares / supply, rounded down. */
export function removeLiquidityAmounts(shares: bigint, reserveA: bigint, reserveB: bigint, lpSupply: bigint): { amountA: bigint; amountB: bigint } {
  return { amountA: (shares * reserveA) / lpSupply, amountB: (shares * reserveB) / lpSupply };
}
