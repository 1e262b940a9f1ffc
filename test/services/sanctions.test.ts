/**
 * Sanctions screening on the lists shipped in services/data/sanctions (converted from the OFAC SDN of
 * 2024-05-03, OFAC digital-currency addresses of 2024-09-27 and the UN list of 2020-03-20), the
 * publishers' parsers on fixtures (the EU parser on a file in the EU's published shape), the
 * update command against a local HTTP server, and the compliance report.
 */
import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { copyFileSync, readFileSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../cli/cli.js';
import { fromUnits, toUnits } from '../../services/compliance/report.js';
import { parseEuFsfXml, parseOfacSdnCsv, parseUnConsolidatedXml, SanctionsFormatError } from '../../services/sanctions/parse.js';
import { createSanctionsIndex, nameScore, nameTokens, sanctionsIndex } from '../../services/sanctions/screen.js';
import { readList, readLists } from '../../services/sanctions/store.js';
import { updateSanctionsLists } from '../../services/sanctions/update.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { callLocal, refusal } from './local.js';

const FIX = join(fileURLToPath(new URL('.', import.meta.url)), '..', 'fixtures', 'sanctions');
const fixture = (f: string) => readFileSync(join(FIX, f), 'utf8');

afterAll(cleanupTmp);

describe('screening the shipped lists', () => {
  const ix = sanctionsIndex();

  test('the lists and their dates', () => {
    const r = ix.screenName('anything');
    expect(r.listsUsed.map((l) => [l.list, l.date])).toEqual([['OFAC', '2024-05-03'], ['UN', '2020-03-20']]);
    expect(r.listsUsed[0].parts.map((p) => p.date)).toEqual(['2024-05-03', '2024-09-27']);
    expect(r.listsNotLoaded).toEqual([{ list: 'EU', reason: expect.stringContaining('sanctions update') }]);
  });

  test('a known company found in any token order, legal form ignored', () => {
    for (const q of ['Rosneft Trading', 'TRADING ROSNEFT S.A.', 'rosneft trading sa']) {
      expect(ix.screenName(q).matches[0]).toMatchObject({ list: 'OFAC', listId: '18299', name: 'ROSNEFT TRADING S.A.', alias: false, score: 1, listDate: '2024-05-03', programs: ['UKRAINE-EO13662', 'VENEZUELA-EO13850'] });
    }
  });

  test('a misspelt name still matches with a score under 1; a near miss does not', () => {
    const m = ix.screenName('Aerocaribean Airlines').matches[0];
    expect(m).toMatchObject({ listId: '36', name: 'AEROCARIBBEAN AIRLINES' });
    expect(m.score).toBeGreaterThan(0.85);
    expect(m.score).toBeLessThan(1);
    expect(ix.screenName('Rosneft Marketing').matches).toEqual([]);
    expect(ix.screenName('Bank Nacional Cuba').matches).toEqual([]);
    expect(ix.screenName('Acme Trading Ltd').matches).toEqual([]);
  });

  test('an alias (a.k.a.) is found and reported as such', () => {
    expect(ix.screenName('Hidden Cobra').matches[0]).toMatchObject({ list: 'OFAC', listId: '27307', name: 'HIDDEN COBRA', primaryName: 'LAZARUS GROUP', alias: true, score: 1 });
  });

  test('a Cyrillic spelling is transliterated and matches both lists, token order ignored', () => {
    const r = ix.screenName('Чол Ким Сок');
    expect(r.matches.map((m) => [m.list, m.listId, m.score])).toEqual([['OFAC', '17622', 1], ['UN', 'KPi.036', 1]]);
    expect(ix.screenName('Kim Sok Chol', { lists: ['UN'] }).matches.map((m) => m.list)).toEqual(['UN']);
  });

  test('addresses: exact, EVM case-insensitive, with the address list date', () => {
    expect(ix.screen('0x098b716b8aaf21512996dc57eb0615e2383e2f96').matches[0]).toMatchObject({ list: 'OFAC', listId: '27307', name: 'LAZARUS GROUP', asset: 'ETH', address: '0x098B716B8Aaf21512996dC57EB0615e2383E2f96', score: 1, listDate: '2024-05-03' });
    expect(ix.screen('12QtD5BFwRsdNsAZY76UVE1xyCGNTojH9h').matches[0]).toMatchObject({ listId: '25308', name: 'YAN, Xiaobing', asset: 'XBT' });
    // Only in the per-asset address files: dated by them.
    expect(ix.screen('qpusmp64rajses77x95g9ah825mtyyv74smwwkxhx3').matches[0]).toMatchObject({ asset: 'BCH', listDate: '2024-09-27' });
    // One character off: no match (addresses are exact).
    expect(ix.screen('12QtD5BFwRsdNsAZY76UVE1xyCGNTojH9i').matches).toEqual([]);
  });

  test('OFAC entries under the names their owners use: legal forms abbreviated or written out, "of <country>" on one side only', () => {
    // [query, OFAC SDN uid, the entry's name as OFAC lists it]: each must be the best match, at score 1.
    const cases: [string, string, string][] = [
      ['Sberbank of Russia', '17018', 'PUBLIC JOINT STOCK COMPANY SBERBANK OF RUSSIA'],
      ['PJSC Sberbank of Russia', '17018', 'PUBLIC JOINT STOCK COMPANY SBERBANK OF RUSSIA'],
      ['VTB Bank', '17013', 'VTB BANK PUBLIC JOINT STOCK COMPANY'],
      ['VTB Bank PJSC', '17013', 'VTB BANK PUBLIC JOINT STOCK COMPANY'],
      ['OAO VTB Bank', '17013', 'VTB BANK PUBLIC JOINT STOCK COMPANY'],
      ['OOO VTB Foreks', '34536', 'OBSHCHESTVO S OGRANICHENNOI OTVETSTVENNOSTYU VTB FOREKS'],
      ['VTB Foreks LLC', '34536', 'OBSHCHESTVO S OGRANICHENNOI OTVETSTVENNOSTYU VTB FOREKS'],
      ['AO Sberbank Leasing', '18709', 'JOINT STOCK COMPANY SBERBANK LEASING'],
      ['Sberbank Capital LLC', '18669', 'LIMITED LIABILITY COMPANY SBERBANK CAPITAL'],
      ['Sberbank Europe GmbH', '18716', 'SBERBANK EUROPE AG'],
      ['CJSC VTB Bank Belarus', '18721', 'VTB BANK BELARUS CLOSED JOINT STOCK COMPANY'],
      ['Anti-Globalization Movement', '36137', 'ANTI-GLOBALIZATION MOVEMENT OF RUSSIA'],
      ['Foreign Intelligence Service of Russia', '42717', 'FOREIGN INTELLIGENCE SERVICE OF THE RUSSIAN FEDERATION'],
      ['Law Enforcement Forces of Iran', '12763', 'LAW ENFORCEMENT FORCES OF THE ISLAMIC REPUBLIC OF IRAN'],
    ];
    const ofac = ix.lists.get('OFAC')!;
    for (const [q, uid, listed] of cases) {
      // The reference: OFAC's own entry in the shipped snapshot.
      expect(ofac.entries.find((e) => e.id === uid)?.name).toBe(listed);
      expect({ q, best: ix.screenName(q).matches.find((m) => m.listId === uid) }).toEqual({ q, best: expect.objectContaining({ list: 'OFAC', name: listed, score: 1 }) });
    }
    // Dropping "of <country>" never makes two countries' institutions one, nor leaves a generic name.
    expect(ix.screenName('Central Bank of Iran').matches).toEqual([]);
    expect(ix.screenName('Commercial Bank').matches).toEqual([]);
    expect(ofac.entries.some((e) => e.name === 'CENTRAL BANK OF SYRIA')).toBe(true);
  });

  test('vessels and their former names are matched by vessel queries only, never by an organisation', () => {
    const ofac = ix.lists.get('OFAC')!;
    // The reference: OFAC lists the vessel ARTAVIL, formerly ALPHA.
    expect(ofac.entries.find((e) => e.id === '15036')).toMatchObject({ name: 'ARTAVIL', aliases: ['ALPHA'], type: 'vessel' });
    for (const q of ['Alpha GmbH', 'Alpha', 'Artavil Trading LLC']) {
      const r = ix.screenName(q);
      expect({ q, vessels: r.matches.filter((m) => m.type === 'vessel' || m.type === 'aircraft') }).toEqual({ q, vessels: [] });
      expect(r.subject).toBe('person-or-organization');
    }
    expect(ix.screenName('MV Alpha').matches[0]).toMatchObject({ listId: '15036', name: 'ALPHA', alias: true, type: 'vessel', score: 1 });
    expect(ix.screenName('IMO 9187629 Artavil').matches[0]).toMatchObject({ listId: '15036', name: 'ARTAVIL', score: 1 });
    expect(ix.screenName('Artavil', { subject: 'vessel' }).matches[0]).toMatchObject({ listId: '15036', type: 'vessel' });
    // A vessel query compares vessels only.
    expect(ix.screenName('Sberbank', { subject: 'vessel' }).matches).toEqual([]);
  });

  test('name scoring', () => {
    expect(nameTokens('ООО «Ромашка» Ltd')).toEqual(['romashka']);
    expect(nameScore(['rosneft', 'trading'], ['trading', 'rosneft'])).toBe(1);
    expect(nameScore(['rosneft'], ['rosneft', 'trading'])).toBeCloseTo(14 / 21, 6);
  });
});

describe('native-aml-sanctions-scan', () => {
  test('a sanctioned name: risk score, matches and the dates of the lists', async () => {
    const r = await callLocal('native-aml-sanctions-scan', JSON.stringify({ entity: 'Banco Nacional de Cuba', lists: ['OFAC', 'EU', 'UN'] }));
    expect(r).toMatchObject({ entity: 'Banco Nacional de Cuba', screenedAs: 'name', riskScore: 100, riskLevel: 'high', flagged: true, threshold: 0.85 });
    expect((r.matches as unknown[])[0]).toMatchObject({ list: 'OFAC', listId: '306', name: 'BANCO NACIONAL DE CUBA', programs: ['CUBA'] });
    expect((r.lists as { list: string; date: string }[]).map((l) => `${l.list} ${l.date}`)).toEqual(['OFAC 2024-05-03', 'UN 2020-03-20']);
    expect(r.listsNotLoaded).toEqual([{ list: 'EU', reason: expect.any(String) }]);
  });

  test('a clean name and a sanctioned wallet', async () => {
    expect(await callLocal('native-aml-sanctions-scan', JSON.stringify({ entity: 'Acme Trading Ltd' }))).toMatchObject({ riskScore: 0, riskLevel: 'none', flagged: false, matches: [] });
    expect(await callLocal('native-aml-sanctions-scan', JSON.stringify({ entity: '0x098B716B8Aaf21512996dC57EB0615e2383E2f96', lists: ['OFAC'] }))).toMatchObject({ screenedAs: 'address', riskScore: 100, flagged: true });
    // Only the UN list asked: an OFAC-only entry is not reported.
    expect(await callLocal('native-aml-sanctions-scan', JSON.stringify({ entity: 'Rosneft Trading', lists: ['UN'] }))).toMatchObject({ flagged: false, lists: [{ list: 'UN' }] });
  });

  test('Sberbank of Russia and VTB Bank are flagged high; Alpha GmbH is not a vessel; b2b-compliance-report screens the same way', async () => {
    for (const entity of ['Sberbank of Russia', 'PJSC Sberbank of Russia', 'VTB Bank']) {
      expect(await callLocal('native-aml-sanctions-scan', JSON.stringify({ entity }))).toMatchObject({ riskScore: 100, riskLevel: 'high', flagged: true, subject: 'person-or-organization' });
    }
    const alpha = await callLocal<Record<string, any>>('native-aml-sanctions-scan', JSON.stringify({ entity: 'Alpha GmbH' }));
    expect(alpha.matches.filter((m: { type: string }) => m.type === 'vessel')).toEqual([]);
    expect(alpha.riskScore).toBeLessThan(95);
    expect(await callLocal('native-aml-sanctions-scan', JSON.stringify({ entity: 'Alpha', subject: 'vessel' }))).toMatchObject({ riskScore: 100, subject: 'vessel', matches: [{ listId: '15036', type: 'vessel' }] });
    const report = await callLocal<Record<string, any>>('native-b2b-compliance-report', JSON.stringify({ txs: [
      { id: 'a', amount: 100, counterparty: 'PJSC Sberbank of Russia', country: 'RU' },
      { id: 'b', amount: 100, counterparty: 'VTB Bank', country: 'RU' },
      { id: 'c', amount: 100, counterparty: 'Alpha GmbH', country: 'DE' },
    ] }));
    expect(report.sanctionedCounterparties.map((s: { counterparty: string; matches: { listId: string }[] }) => [s.counterparty, s.matches[0].listId])).toEqual([['PJSC Sberbank of Russia', '17018'], ['VTB Bank', '17013']]);
  });

  test('bad input is refused before payment, naming the field', () => {
    expect(refusal('native-aml-sanctions-scan', JSON.stringify({ entity: 'x', lists: ['OFAC', 'FBI'] }))).toContain('lists[1] must be one of "OFAC", "EU", "UN"');
    expect(refusal('native-aml-sanctions-scan', JSON.stringify({ lists: ['OFAC'] }))).toContain('entity is required');
    expect(refusal('native-aml-sanctions-scan', JSON.stringify({ entity: 'x', threshold: 0.2 }))).toContain('threshold must be >= 0.5');
  });
});

describe('parsers of the publishers\' formats', () => {
  test('EU Financial Sanctions Files XML v1.1', () => {
    const eu = parseEuFsfXml(fixture('eu-fsf-sample.xml'));
    expect(eu.date).toBe('2025-03-14');
    expect(eu.entries).toEqual([
      { id: 'EU.27.28', name: 'Sergey Valeryevich Aksyonov', aliases: ['Сергей Валерьевич Аксёнов', 'Serhiy Valeriyovych Aksyonov'], type: 'individual', programs: ['UKR'] },
      { id: 'EU.3593.73', name: 'Joint Stock Company Sovcomflot', aliases: ['PAO Sovcomflot'], type: 'entity', programs: ['UKR'] },
    ]);
    // Screened like the others: the Cyrillic alias and a reordered name match.
    const ix = createSanctionsIndex(new Map([['EU', eu]]));
    expect(ix.screenName('Aksyonov Sergey Valeryevich').matches[0]).toMatchObject({ list: 'EU', listId: 'EU.27.28', score: 1, listDate: '2025-03-14' });
    // The legal form, abbreviated (PAO) or written out (Joint Stock Company), is no part of the name: the primary name matches whole.
    expect(ix.screenName('Sovcomflot PAO').matches[0]).toMatchObject({ listId: 'EU.3593.73', name: 'Joint Stock Company Sovcomflot', score: 1 });
    expect(() => parseEuFsfXml('<other/>')).toThrow(SanctionsFormatError);
  });

  test('OFAC SDN.CSV and UN consolidated XML', () => {
    const ofac = parseOfacSdnCsv(fixture('ofac-sdn-sample.csv'), '2024-05-03');
    expect(ofac.entries).toHaveLength(41);
    expect(ofac.entries[2]).toEqual({ id: '306', name: 'BANCO NACIONAL DE CUBA', aliases: ['BNC'], type: 'entity', programs: ['CUBA'] });
    expect(ofac.entries[40].addresses).toHaveLength(8);
    const un = parseUnConsolidatedXml(fixture('un-consolidated-sample.xml'));
    expect(un.date).toBe('2020-03-20');
    expect(un.entries.map((e) => e.id)).toEqual(['KPi.033', 'KPi.037', 'KPi.038', 'KPi.034', 'KPi.035', 'KPe.053', 'IRe.001', 'QDe.144']);
    expect(un.entries[1]).toMatchObject({ name: 'CHANG CHANG HA', aliases: ['Jang Chang Ha'], type: 'individual', programs: ['DPRK'] });
    expect(() => parseUnConsolidatedXml('<CONSOLIDATED_LIST/>')).toThrow(SanctionsFormatError);
  });
});

describe('native-node sanctions update', () => {
  let server: Server;
  let base: string;
  let broken = false;
  const bodies: Record<string, string> = { '/SDN.CSV': fixture('ofac-sdn-sample.csv'), '/ALT.CSV': fixture('ofac-alt-sample.csv'), '/consolidated.xml': fixture('un-consolidated-sample.xml'), '/eu.xml': fixture('eu-fsf-sample.xml') };

  beforeAll(async () => {
    server = createServer((req, res) => {
      const body = bodies[req.url ?? ''];
      if (!body) return void res.writeHead(404).end();
      if (broken && req.url === '/consolidated.xml') return void res.writeHead(500).end('down');
      if (broken && req.url === '/SDN.CSV') return void res.writeHead(200, { 'last-modified': 'Fri, 01 Nov 2024 10:00:00 GMT' }).end('<html>maintenance</html>');
      res.writeHead(200, { 'last-modified': 'Fri, 01 Nov 2024 10:00:00 GMT' }).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const opts = (dir: string) => ({ dir, sources: { OFAC: `${base}/SDN.CSV`, UN: `${base}/consolidated.xml`, EU: `${base}/eu.xml` }, minEntries: { OFAC: 10, UN: 5, EU: 2 } });

  test('downloads, validates and swaps in all three lists; a failed download keeps the old list', async () => {
    const dir = await tmpDir();
    broken = false;
    const first = await updateSanctionsLists(opts(dir));
    expect(first).toEqual([
      { list: 'OFAC', ok: true, date: '2024-11-01', entries: 41 },
      { list: 'UN', ok: true, date: '2020-03-20', entries: 8 },
      { list: 'EU', ok: true, date: '2025-03-14', entries: 2 },
    ]);
    // ALT.CSV (fetched beside SDN.CSV) adds the aliases SDN.CSV's remarks do not give.
    const ofac = readList(dir, 'OFAC')!;
    expect(ofac.entries.find((e) => e.id === '306')!.aliases).toEqual(['BNC', 'BNC BANK', 'BANCO NACIONAL']);
    expect(ofac.parts.map((p) => p.name)).toEqual(['OFAC SDN list (SDN.CSV)', 'OFAC SDN aliases (ALT.CSV)']);
    const before = { ofac: readFileSync(join(dir, 'ofac.json'), 'utf8'), un: readFileSync(join(dir, 'un.json'), 'utf8'), unTime: statSync(join(dir, 'un.json')).mtimeMs };
    broken = true;
    const second = await updateSanctionsLists(opts(dir));
    expect(second[0]).toMatchObject({ list: 'OFAC', ok: false, kept: '2024-11-01', error: expect.stringContaining('SDN.CSV') });
    expect(second[1]).toMatchObject({ list: 'UN', ok: false, kept: '2020-03-20', error: expect.stringContaining('HTTP 500') });
    expect(second[2]).toMatchObject({ list: 'EU', ok: true });
    expect(readFileSync(join(dir, 'ofac.json'), 'utf8')).toBe(before.ofac);
    expect(readFileSync(join(dir, 'un.json'), 'utf8')).toBe(before.un);
    expect(statSync(join(dir, 'un.json')).mtimeMs).toBe(before.unTime);
    expect(readList(dir, 'EU')!.entries).toHaveLength(2);
  });

  test('the CLI command writes into <data dir>/sanctions and exits 1 when a list is refused', async () => {
    const dataDir = await tmpDir();
    broken = false;
    const printed: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (printed.push(String(chunk)), true));
    let code: number;
    try {
      // The fixtures are far smaller than the official lists: the default minimum sizes refuse them.
      code = await main(['sanctions', 'update', '--dev', '--data-dir', dataDir, '--json', '--ofac-url', `${base}/SDN.CSV`, '--un-url', `${base}/consolidated.xml`, '--eu-url', `${base}/eu.xml`], { env: {}, cwd: dataDir });
    } finally {
      spy.mockRestore();
    }
    expect(code).toBe(1);
    const out = JSON.parse(printed.join('')) as { dir: string; outcomes: { list: string; ok: boolean; error?: string }[] };
    expect(out.dir).toBe(join(dataDir, 'sanctions'));
    expect(out.outcomes.map((o) => [o.list, o.ok])).toEqual([['OFAC', false], ['UN', false], ['EU', false]]);
    expect(out.outcomes[0].error).toContain('only 41 entries (expected at least 5000)');
    expect(readList(join(dataDir, 'sanctions'), 'OFAC')).toBeUndefined();
  });

  test('without its alias file the OFAC list is still updated, with a warning', async () => {
    const dir = await tmpDir();
    broken = false;
    const [out] = await updateSanctionsLists({ ...opts(dir), lists: ['OFAC'], ofacAltSource: `${base}/missing/ALT.CSV` });
    expect(out).toMatchObject({ list: 'OFAC', ok: true, entries: 41, warning: expect.stringContaining('HTTP 404') });
    expect(readList(dir, 'OFAC')!.entries.find((e) => e.id === '306')!.aliases).toEqual(['BNC']);
  });

  test('a truncated list is not swapped in; the newer of shipped and updated lists wins', async () => {
    const dir = await tmpDir();
    broken = false;
    const out = await updateSanctionsLists({ ...opts(dir), minEntries: { OFAC: 5000 }, lists: ['OFAC'] });
    expect(out).toEqual([{ list: 'OFAC', ok: false, error: expect.stringContaining('only 41 entries') }]);
    copyFileSync(join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', 'services', 'data', 'sanctions', 'un.json'), join(dir, 'un.json'));
    await updateSanctionsLists({ ...opts(dir), lists: ['EU'] });
    const lists = readLists([join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', 'services', 'data', 'sanctions'), dir]);
    expect([...lists.keys()]).toEqual(['OFAC', 'EU', 'UN']);
    expect(lists.get('EU')!.date).toBe('2025-03-14');
  });
});

describe('native-b2b-compliance-report', () => {
  const txs = [
    { id: 't1', amount: 9500, counterparty: 'Nordwind Logistik GmbH', country: 'DE' },
    { id: 't2', amount: '9800.50', counterparty: 'Nordwind Logistik GmbH', country: 'DE' },
    { id: 't3', amount: 9900, counterparty: 'nordwind logistik gmbh', country: 'DE' },
    { id: 't4', amount: 1250.25, counterparty: 'Rosneft Trading S.A.', country: 'CH' },
    { id: 't5', amount: 400, counterparty: 'Lagos Supplies Ltd', country: 'NG' },
    { id: 't6', amount: 20000, counterparty: 'Acme Trading Ltd', country: 'GB' },
    { id: 't7', amount: 0.1, counterparty: 'Acme Trading Ltd', country: 'GB' },
    { id: 't8', amount: 0.2, counterparty: 'Tehran Parts Co', country: 'IR' },
  ];

  test('totals, jurisdictions, structuring, sanctioned counterparties, rating and markdown', async () => {
    const r = await callLocal<Record<string, any>>('native-b2b-compliance-report', JSON.stringify({ txs }));
    // 9500 + 9800.5 + 9900 + 1250.25 + 400 + 20000 + 0.1 + 0.2 = 50851.05 (exact: 0.1 + 0.2 is 0.3 here).
    expect(r.total).toBe('50851.05');
    expect(r.txCount).toBe(8);
    expect(r.countries).toEqual([
      { country: 'DE', txCount: 3, total: '29200.5' },
      { country: 'GB', txCount: 2, total: '20000.1' },
      { country: 'CH', txCount: 1, total: '1250.25' },
      { country: 'NG', txCount: 1, total: '400' },
      { country: 'IR', txCount: 1, total: '0.2' },
    ]);
    expect(r.counterparties[0]).toEqual({ counterparty: 'Nordwind Logistik GmbH', txCount: 3, total: '29200.5', countries: ['DE'] });
    expect(r.highRiskJurisdictions).toEqual([
      { country: 'IR', name: 'Iran', categories: ['FATF call for action', 'comprehensive sanctions (OFAC)'], txCount: 1, total: '0.2' },
      { country: 'NG', name: 'Nigeria', categories: ['FATF increased monitoring'], txCount: 1, total: '400' },
    ]);
    expect(r.structuring).toEqual([{ counterparty: 'Nordwind Logistik GmbH', txIds: ['t1', 't2', 't3'], amounts: ['9500', '9800.5', '9900'], total: '29200.5', totalReachesThreshold: true }]);
    expect(r.sanctionedCounterparties).toHaveLength(1);
    expect(r.sanctionedCounterparties[0]).toMatchObject({ counterparty: 'Rosneft Trading S.A.', matches: [{ list: 'OFAC', listId: '18299', score: 1 }] });
    expect(r.riskRating).toBe('high');
    expect(r.reasons.map((x: { severity: string }) => x.severity)).toEqual(['high', 'high', 'high', 'medium']);
    expect(r.jurisdictionLists.date).toBe('2024-10-25');
    expect(r.markdown).toContain('**Risk rating: HIGH**');
    expect(r.markdown).toContain('| DE | 3 | 29200.5 |');
    expect(r.markdown).toContain('possible structuring: 3 amounts to "Nordwind Logistik GmbH"');
  });

  test('a clean batch rates low; bad input and more than 1000 transactions are refused before payment', async () => {
    expect(await callLocal('native-b2b-compliance-report', JSON.stringify({ txs: [{ id: 'a', amount: 100, counterparty: 'Acme Trading Ltd', country: 'FR' }] }))).toMatchObject({ riskRating: 'low', reasons: [] });
    expect(refusal('native-b2b-compliance-report', JSON.stringify({ txs: [{ id: 'a', amount: -5, counterparty: 'x', country: 'FR' }] }))).toContain('txs[0].amount must be >= 0');
    expect(refusal('native-b2b-compliance-report', JSON.stringify({ txs: [{ id: 'a', amount: 5, counterparty: 'x', country: 'FRA' }] }))).toContain('txs[0].country');
    const many = Array.from({ length: 1001 }, (_, i) => ({ id: `t${i}`, amount: 1, counterparty: 'x', country: 'FR' }));
    expect(refusal('native-b2b-compliance-report', JSON.stringify({ txs: many }))).toContain('txs must NOT have more than 1000 items');
    expect(fromUnits(toUnits('0.1') + toUnits(0.2))).toBe('0.3');
  });
});
