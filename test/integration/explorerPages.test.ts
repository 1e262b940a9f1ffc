/**
 * The explorer as people use it, in headless Chromium (Debian's `chromium`, playwright-core),
 * against one real devnet node (a block every 3 s, a 2-second refund window):
 *
 * - the payer's and the payee's account pages list the paid call, its refund, and the miner's
 *   page (the dev wallet mines) the block reward;
 * - the mempool page lists a transaction just sent;
 * - the home page's live list never shows a mined transaction also as pending;
 * - the blocks pages reach block 1 through their "Older blocks" links;
 * - no page scrolls sideways at 390 px; dark mode follows prefers-color-scheme.
 *
 * Screenshots go to tmp/artifacts/ (ARTIFACTS_DIR overrides; gitignored). Skipped only without
 * /usr/bin/chromium.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { encodeAddress } from '../../consensus/address.js';
import { createAgentClient } from '../../sdk/client.js';
import { startNode, type NodeProc } from '../helpers/nodeProcess.js';
import { ARTIFACTS_DIR as ARTIFACTS, CHROMIUM, CHROMIUM_FLAGS, hasChromium } from '../helpers/chromium.js';
import { until } from '../helpers/until.js';

if (!hasChromium) console.warn(`explorer pages browser test skipped: ${CHROMIUM} not found (apt-get install -y chromium)`);

let dir: string;
let node: NodeProc;
let url: string;

async function json(path: string): Promise<any> {
  return (await fetch(`${url}${path}`)).json();
}
/** Resolves right after the node connects a new block (so the next transaction has a whole interval in the mempool). */
async function nextBlock(): Promise<number> {
  const h = (await json('/api/v1/status')).height as number;
  return until('a new block', async () => {
    const now = (await json('/api/v1/status')).height as number;
    return now > h ? now : undefined;
  }, 20_000, 150);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-explorer-pages-'));
  node = await startNode(['--dev', '--block-time', '3', '--data-dir', join(dir, 'data'), '--http-port', '0', '--no-stratum', '--refund-window', '2'], { cwd: dir });
  url = node.url;
  await until('block 2', async () => (await json('/api/v1/status')).height >= 2, 30_000, 150);
}, 120_000);

afterAll(async () => {
  node?.child.kill('SIGTERM');
  await node?.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe('the explorer in headless Chromium', () => {
  (hasChromium ? test : test.skip)(
    'accounts list paid calls, refunds and rewards; the mempool page; no mined tx shown pending; paging to block 1; 390 px; dark mode',
    async () => {
      const { chromium } = await import('playwright-core');
      mkdirSync(ARTIFACTS, { recursive: true });
      const profile = mkdtempSync(join(tmpdir(), 'native-chromium-'));
      const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS, viewport: { width: 1280, height: 900 }, timeout: 30_000 });
      try {
        const page = context.pages()[0] ?? (await context.newPage());
        page.setDefaultTimeout(15_000);
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));

        const key = getDevKeyPair();
        const payer = encodeAddress(key.address, 'tnative');
        const agent = createAgentClient({ nodeUrl: url, key });
        const settled = await agent.call('native-world-clock', 'UTC', { timeoutMs: 30_000 });

        // A paid call never settled (refunded when the 2-second window ends), sent right after a block;
        // the mempool page lists it while it waits (on a loaded machine the block may take it first:
        // then another payment is tried, at most three).
        const q = await agent.quote('native-world-clock', 'Europe/Paris');
        const payee = q.payTo;
        let invoke = '';
        for (let attempt = 0; attempt < 3; attempt++) {
          await nextBlock();
          invoke = await agent.pay(await agent.quote('native-world-clock', 'Europe/Paris'));
          await page.goto(`${url}/explorer/mempool`);
          const listed = (await page.locator(`#mempool tr[data-tx="${invoke}"]`).count()) === 1;
          if (listed) break;
          expect((await json(`/api/v1/tx/${invoke}`)).status).toBe('mined'); // not listed only because a block took it
          if (attempt === 2) throw new Error('three payments were mined before the mempool page was read');
        }
        await page.screenshot({ path: join(ARTIFACTS, 'explorer-mempool.png'), fullPage: true });

        // The home page: the transaction once (pending, then mined), never both.
        await page.goto(`${url}/explorer`);
        await until('the live stream', async () => /^Live/.test((await page.locator('#live-status').textContent()) ?? ''), 15_000, 150);
        const rowsOf = async () => page.locator(`#txs tr[data-tx="${invoke}"]`).evaluateAll((trs) => trs.map((t) => (t.className.includes('pending') ? 'pending' : 'mined')));
        const seen: string[][] = [];
        await until('the invoke mined in the live list', async () => {
          const r = await rowsOf();
          seen.push(r);
          return r.length === 1 && r[0] === 'mined';
        }, 20_000, 150);
        // Two more blocks: the row stays single.
        const h = await nextBlock();
        await until('one more block', async () => (await json('/api/v1/status')).height > h, 20_000, 150);
        seen.push(await rowsOf());
        expect(seen.filter((r) => r.length > 1)).toEqual([]);
        expect(seen.at(-1)).toEqual(['mined']);
        await page.screenshot({ path: join(ARTIFACTS, 'explorer-home-live.png') });

        // The refund, mined.
        const refundTx = await until('the refund', async () => {
          const t = await json(`/api/v1/tx/${invoke}`);
          const rec = (await json('/api/v1/status')).payments;
          return rec.refunded >= 1 && t.status === 'mined' ? true : undefined;
        }, 30_000, 150);
        expect(refundTx).toBe(true);
        await until('the refund to be mined', async () => {
          await page.goto(`${url}/explorer/address/${payer}`);
          return (await page.locator('#activity').textContent())?.includes('was refunded');
        }, 30_000, 150);

        // The payer (the dev wallet, which also mines): paid calls, the refund, block rewards.
        const activity = (await page.locator('#activity').textContent()) ?? '';
        expect(activity).toContain('was refunded 0.002 NATIVE');
        expect(activity).toContain('mined the block: reward 50 NATIVE');
        // The paid calls may sit a page down, below the newer rewards: follow "Older activity".
        let payerText = activity;
        for (let i = 0; i < 5 && !(payerText.includes(invoke.slice(0, 12)) && payerText.includes(settled.txId.slice(0, 12))); i++) {
          const older = page.getByRole('link', { name: 'Older activity' });
          if ((await older.count()) === 0) break;
          await Promise.all([page.waitForURL(/before=/), older.click()]);
          payerText += (await page.locator('#activity').textContent()) ?? '';
        }
        expect(payerText).toMatch(/paid 0\.002 NATIVE for a call of World Clock \(native-world-clock\)/);
        expect(await page.locator(`#activity a[href="/explorer/tx/${invoke}"]`).count()).toBeGreaterThan(0);
        await page.goto(`${url}/explorer/address/${payer}`);
        expect(await page.locator(`#address`).textContent()).toBe(payer);
        await page.screenshot({ path: join(ARTIFACTS, 'explorer-account-payer.png'), fullPage: true });

        // The payee: both calls received, the refund sent.
        await page.goto(`${url}/explorer/address/${payee}`);
        const payeeText = (await page.locator('#activity').textContent()) ?? '';
        expect(payeeText).toMatch(/was paid 0\.002 NATIVE for a call of World Clock \(native-world-clock\)/);
        expect(payeeText).toMatch(/refunded 0\.002 NATIVE to tnative1\S+ for the paid call/);
        expect(await page.locator(`#activity a[href="/explorer/tx/${invoke}"]`).count()).toBeGreaterThan(0);
        expect(await page.locator(`#activity a[href="/explorer/tx/${settled.txId}"]`).count()).toBe(1);
        await page.screenshot({ path: join(ARTIFACTS, 'explorer-account-payee.png'), fullPage: true });

        // A transaction page: the time and its age, the full sender with a copy button.
        await page.goto(`${url}/explorer/tx/${invoke}`);
        expect(await page.locator('dl.facts time').count()).toBe(1);
        expect(await page.locator('dl.facts .age').textContent()).toMatch(/ago$/);
        expect(await page.locator('dl.facts a.full').first().textContent()).toBe(payer);
        expect(await page.locator('button.copy').first().isVisible()).toBe(true);

        // Paging: "Older blocks" down to the genesis block, 4 blocks a page. Block 1 and block 0 may
        // fall on different pages (the chain grows while the test pages), so page until no "Older".
        await page.goto(`${url}/explorer/blocks?limit=4`);
        let pages = 1;
        let seen1 = false;
        let seen0 = false;
        for (;;) {
          seen1 ||= (await page.locator('#blocks a[href="/explorer/block/1"]').count()) === 1;
          seen0 ||= (await page.locator('#blocks a[href="/explorer/block/0"]').count()) === 1;
          const older = page.getByRole('link', { name: 'Older blocks' });
          if ((await older.count()) === 0) break;
          expect(seen0).toBe(false); // the genesis page has no "Older blocks"
          await Promise.all([page.waitForURL(/before=/), older.click()]);
          pages++;
          expect(pages).toBeLessThan(50);
        }
        expect(pages).toBeGreaterThan(1);
        expect({ seen1, seen0 }).toEqual({ seen1: true, seen0: true });

        // 390 px wide: no page scrolls sideways.
        await page.setViewportSize({ width: 390, height: 844 });
        for (const path of ['/explorer', `/explorer/address/${payer}`, `/explorer/tx/${invoke}`, '/explorer/blocks', '/explorer/mempool', '/explorer/tokens', '/explorer/pools', '/explorer/swaps', `/explorer/block/2`]) {
          await page.goto(`${url}${path}`);
          const wide = await page.evaluate('document.documentElement.scrollWidth');
          expect({ path, wide }).toEqual({ path, wide: 390 });
        }
        await page.goto(`${url}/explorer/address/${payee}`);
        await page.screenshot({ path: join(ARTIFACTS, 'explorer-account-390.png'), fullPage: true });

        // Dark mode follows the system setting.
        await page.emulateMedia({ colorScheme: 'dark' });
        await page.goto(`${url}/explorer`);
        const bg = String(await page.evaluate('getComputedStyle(document.body).backgroundColor'));
        const [r, g, b] = (bg.match(/\d+/g) ?? []).map(Number);
        expect(r + g + b).toBeLessThan(150);
        await page.screenshot({ path: join(ARTIFACTS, 'explorer-home-dark-390.png') });
        expect(errors).toEqual([]);
      } finally {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      }
    },
    150_000,
  );
});
