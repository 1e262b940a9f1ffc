/** The providers' pure parts: exact decimal arithmetic, the PNG header check, the ECB document reader, ENS avatar records. */
import { describe, expect, test } from '@jest/globals';
import { getAddress } from 'viem';
import { describeAvatar } from '../../../services/ens-resolve.js';
import { formatUnits, mulDiv, ONE, parseDecimal } from '../../../services/providers/decimal.js';
import { parseEcbDaily } from '../../../services/providers/ecb.js';
import { readPngInfo } from '../../../services/providers/png.js';
import { ServiceError } from '../../../services/types.js';
import { ECB_DAILY_XML, makePng } from './fixtures.js';

describe('decimal', () => {
  test('parses plain decimals only', () => {
    expect(parseDecimal('1.0812')).toEqual({ units: 10812n, scale: 4 });
    expect(parseDecimal('100')).toEqual({ units: 100n, scale: 0 });
    for (const bad of ['', '-1', '1e3', '.5', '1.', ' 1', '0x10']) expect(parseDecimal(bad)).toBeUndefined();
  });

  test('a × b / c rounds half-up at the asked decimals, exactly', () => {
    const d = (s: string) => parseDecimal(s)!;
    expect(mulDiv(d('100'), d('1'), d('1.1562'), 6)).toBe('86.490227');
    expect(mulDiv(ONE, d('1'), d('8'), 2)).toBe('0.13'); // 0.125 → up
    expect(mulDiv(ONE, d('1'), d('3'), 4)).toBe('0.3333');
    expect(mulDiv(d('0.1'), d('0.2'), ONE, 2)).toBe('0.02');
    expect(mulDiv(d('123456789012345678901234567890'), d('1'), d('1'), 0)).toBe('123456789012345678901234567890');
    expect(() => mulDiv(ONE, ONE, d('0'), 2)).toThrow(RangeError);
  });

  test('formatUnits drops trailing zeros', () => {
    expect(formatUnits(1_500_000_000_000_000_000n, 18)).toBe('1.5');
    expect(formatUnits(21n, 9)).toBe('0.000000021');
    expect(formatUnits(0n, 6)).toBe('0');
  });
});

describe('PNG header', () => {
  const png = makePng(64, 32);
  test('a well-formed PNG gives its size', () => {
    expect(readPngInfo(png)).toEqual({ width: 64, height: 32, bitDepth: 8, colorType: 0 });
  });
  test('bad signature, bad IHDR checksum, truncation', () => {
    expect(readPngInfo(Buffer.from('GIF89a……………………………………………………………………'))).toEqual({ error: 'not a PNG (bad signature)' });
    const badCrc = Buffer.from(png);
    badCrc[17] ^= 1; // width changed under the CRC
    expect(readPngInfo(badCrc)).toEqual({ error: 'PNG IHDR checksum mismatch' });
    expect(readPngInfo(png.subarray(0, png.length - 5))).toEqual({ error: 'PNG is truncated (no IEND chunk)' });
  });
});

describe('ECB daily document', () => {
  test('the date, EUR at 1 and 29 published rates', () => {
    const r = parseEcbDaily(ECB_DAILY_XML);
    expect(r.date).toBe('2026-11-23');
    expect(r.rates.size).toBe(30);
    expect(r.text.USD).toBe('1.1562');
    expect(r.rates.get('EUR')).toEqual({ units: 1n, scale: 0 });
  });
  test('a bad rate, a missing date, too few currencies, another document: provider_bad_response', () => {
    const bad = (xml: string) => {
      try {
        parseEcbDaily(xml);
      } catch (e) {
        return (e as ServiceError).code;
      }
      return 'parsed';
    };
    expect(bad(ECB_DAILY_XML.replace("rate='1.1562'", "rate='-1.1562'"))).toBe('provider_bad_response');
    expect(bad(ECB_DAILY_XML.replace("rate='1.1562'", "rate='0'"))).toBe('provider_bad_response');
    expect(bad(ECB_DAILY_XML.replace("time='2026-11-23'", "time='yesterday'"))).toBe('provider_bad_response');
    expect(bad(ECB_DAILY_XML.split('\n').filter((l) => !/currency='(A|B|C|H|I)/.test(l)).join('\n'))).toBe('provider_bad_response');
    expect(bad('<html><body>Maintenance</body></html>')).toBe('provider_bad_response');
  });
});

describe('ENS avatar records (ENSIP-12), described without fetching', () => {
  test('https, ipfs, data, NFT and unknown schemes', async () => {
    expect(await describeAvatar('https://example.org/a.png')).toEqual({ record: 'https://example.org/a.png', url: 'https://example.org/a.png', nft: null });
    expect((await describeAvatar('ipfs://ipfs/bafyabc/x.png'))?.url).toBe('https://ipfs.io/ipfs/bafyabc/x.png');
    expect(await describeAvatar('eip155:1/erc721:0xb47e3cd837ddf8e4c57f05d70ab865de6e193bbb/1234')).toEqual({
      record: 'eip155:1/erc721:0xb47e3cd837ddf8e4c57f05d70ab865de6e193bbb/1234',
      url: null,
      nft: { chainId: 1, standard: 'erc721', contract: getAddress('0xb47e3cd837ddf8e4c57f05d70ab865de6e193bbb'), tokenId: '1234' },
    });
    expect(await describeAvatar('ftp://x')).toEqual({ record: 'ftp://x', url: null, nft: null });
    expect(await describeAvatar(null)).toBeNull();
  });
});
