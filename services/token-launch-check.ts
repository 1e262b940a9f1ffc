/** native-token-launch-check: every consensus rule a token_issue of `SYMBOL|Name|decimals|maxSupply` would face at the tip, plus warnings; nothing is broadcast. */
import { defineService } from './define.js';
import { TOKEN_SYMBOL_PATTERN } from './inputs.js';
import { MAX_AMOUNT } from '../consensus/amount.js';
import { NATIVE } from '../consensus/ledger.js';
import { SYMBOL_RE } from '../consensus/txTypes/economyRules.js';
import { validateTokenName } from '../consensus/txTypes/tokenIssue.js';
import { chainHealth } from './health.js';
import { economyOf, formatUnits, parseUnits } from './market/economy.js';
import type { ServiceContext } from './types.js';


/** Symbols of well-known assets a new token should not imitate (a warning, not a consensus rule). */
const WELL_KNOWN = ['BTC', 'WBTC', 'ETH', 'WETH', 'USDC', 'USDT', 'DAI', 'SOL', 'BNB', 'LTC', 'USD', 'EUR'];

/** Levenshtein distance ≤ 1 (symbols that differ by one character). */
function nearlyEqual(a: string, b: string): boolean {
  if (a === b) return true;
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return a.slice(i + 1) === b.slice(i + 1) || a.slice(i) === b.slice(i + 1) || a.slice(i + 1) === b.slice(i);
}

async function run(ctx: ServiceContext, input: unknown) {
  const eco = economyOf(ctx);
  const [symbolRaw, nameRaw, decRaw, maxRaw] = String(input).split('|').map((s) => s.trim());
  const decimals = Number(decRaw);
  const rules: { rule: string; passed: boolean; code?: string; detail: string }[] = [];
  const add = (rule: string, passed: boolean, code: string, detail: string) => rules.push({ rule, passed, ...(passed ? {} : { code }), detail });
  add('symbol format', SYMBOL_RE.test(symbolRaw), 'token_bad_symbol', SYMBOL_RE.test(symbolRaw) ? `${symbolRaw} is 2-10 characters A-Z 0-9` : `symbol must be 2-10 characters A-Z 0-9 (upper case)${SYMBOL_RE.test(symbolRaw.toUpperCase()) ? `: ${symbolRaw.toUpperCase()} would pass` : ''}`);
  const symbol = symbolRaw.toUpperCase();
  const taken = symbol === NATIVE || (await eco.getTokenRecord(symbol)) !== undefined;
  add('symbol free', !taken, 'token_symbol_taken', taken ? `${symbol} is ${symbol === NATIVE ? 'the chain\'s coin' : 'already issued on this chain'}` : `no token ${symbol} exists`);
  let nameOk = true;
  try {
    validateTokenName(nameRaw);
  } catch {
    nameOk = false;
  }
  add('name', nameOk, 'token_bad_name', nameOk ? `${new TextEncoder().encode(nameRaw).length} bytes of UTF-8, no control characters` : 'name must be 1-64 bytes of UTF-8 without control characters');
  const decOk = Number.isInteger(decimals) && decimals >= 0 && decimals <= 18;
  add('decimals', decOk, 'token_bad_decimals', decOk ? `${decimals} is within 0-18` : `decimals ${decRaw} outside 0-18`);
  const units = decOk ? parseUnits(maxRaw, decimals) : undefined;
  const supplyOk = units !== undefined && units > 0n && units <= MAX_AMOUNT;
  add(
    'max supply bounds',
    supplyOk,
    'token_bad_supply',
    units === undefined
      ? decOk ? `${maxRaw} has more than ${decimals} decimals` : 'cannot be checked without valid decimals'
      : units === 0n ? 'maxSupply must be positive' : units > MAX_AMOUNT ? `${units} smallest units exceed the 64-bit amount limit ${MAX_AMOUNT}` : `${units} smallest units, within 1-${MAX_AMOUNT}`,
  );
  const warnings: string[] = [];
  const existing = [...(await eco.tokenRecords()).entries()];
  if (WELL_KNOWN.includes(symbol)) warnings.push(`${symbol} is the symbol of a well-known asset elsewhere: holders may mistake the token for it`);
  const similar = existing.filter(([s]) => s !== symbol && nearlyEqual(s, symbol)).map(([s]) => s);
  if (similar.length) warnings.push(`symbol is one character away from existing token(s) ${similar.join(', ')}`);
  const sameName = existing.filter(([, t]) => t.name.toLowerCase() === nameRaw.toLowerCase()).map(([s]) => s);
  if (sameName.length) warnings.push(`name is already used by ${sameName.join(', ')}`);
  if (decOk && decimals > 8) warnings.push(`${decimals} decimals: amounts above ~${formatUnits(2n ** 53n, decimals)} lose precision in clients that use floating point`);
  if (supplyOk && decOk && units! > 10n ** BigInt(decimals + 15)) warnings.push('maxSupply above 10^15 whole tokens: headroom lets the issuer mint without practical limit');
  const passed = rules.every((r) => r.passed);
  return {
    symbol,
    name: nameRaw,
    decimals: decOk ? decimals : null,
    maxSupply: maxRaw,
    maxSupplyUnits: units?.toString() ?? null,
    valid: passed,
    rules,
    warnings,
    notes: [
      'token_issue is sent by the issuer, who becomes the only account allowed to mint, back, freeze and hide the token',
      'the initial supply (at most maxSupply) is credited to the issuer; a USD stablecoin starts at 0 and is minted against NATIVE collateral',
      'nothing was broadcast: this is a check against the current tip, and the symbol can be taken before your transaction is mined',
    ],
    height: ctx.chain.tip.height,
  };
}

/** native-token-launch-check. */
export const tokenLaunchCheck = defineService({
  id: 'native-token-launch-check',
  name: 'Token Launch Check',
  category: 'compliance',
  priceBase: 1_200_000n,
  description: 'pre-flight validation of a new token',
  tags: ['token', 'launch', 'validation', 'compliance', 'pre-flight'],
  requestFormat: 'SYMBOL|Name|decimals|maxSupply, e.g. "GOLD|Gold Token|8|21000000"',
  requestRequired: true,
  inputSchema: { type: 'string', maxLength: 160, pattern: `^${TOKEN_SYMBOL_PATTERN}\\s*\\|\\s*[^|]{1,64}\\s*\\|\\s*[0-9]{1,2}\\s*\\|\\s*[0-9]{1,30}(\\.[0-9]{1,18})?$`, description: 'SYMBOL|Name|decimals|maxSupply joined by pipes.' },
  run,
  health: chainHealth,
});
