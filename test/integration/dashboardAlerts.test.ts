/**
 * The operator's dashboard raises what needs acting on, in headless Chromium (Debian's
 * `chromium`, playwright-core), with two real devnet node processes on one paced genesis (a
 * block every 4 s): A mines, B follows A over p2p and serves the dashboard.
 *
 * - while blocks come, B's tiles follow the tip and no "no block" alert shows;
 * - A killed (mining stops): B's banner says no block came within 2 target intervals;
 * - B killed: the open page says the node does not answer within 2 target intervals;
 * - the page has no horizontal scroll at 390 px.
 *
 * Screenshots go to tmp/artifacts/ (ARTIFACTS_DIR overrides; gitignored). Skipped only without
 * /usr/bin/chromium.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEVNET_POW_LIMIT_BITS } from '../../consensus/params.js';
import { startP2PNode, stopProc, writeSharedGenesis, type P2PProc } from '../p2p/helpers/processes.js';
import { ARTIFACTS_DIR as ARTIFACTS, CHROMIUM, CHROMIUM_FLAGS, hasChromium } from '../helpers/chromium.js';
import { until } from '../helpers/until.js';

if (!hasChromium) console.warn(`dashboard browser test skipped: ${CHROMIUM} not found (apt-get install -y chromium)`);

/** Target seconds between blocks of the shared genesis. */
const TARGET = 4;

let dir: string;
let miner: P2PProc;
let viewer: P2PProc;


beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-dashboard-'));
  writeSharedGenesis([join(dir, 'a'), join(dir, 'b')], { targetSpacing: TARGET, genesisBits: DEVNET_POW_LIMIT_BITS, powLimitBits: DEVNET_POW_LIMIT_BITS, actors: true });
  miner = await startP2PNode(join(dir, 'a'), ['--block-time', String(TARGET)], dir);
  viewer = await startP2PNode(join(dir, 'b'), ['--no-mine', '--bootstrap', miner.addr], dir);
  await until('B to follow A to block 2', async () => ((await (await fetch(`${viewer.url}/api/v1/status`)).json()) as { height: number }).height >= 2, 60_000, 250);
}, 180_000);

afterAll(async () => {
  if (miner) await stopProc(miner);
  if (viewer) await stopProc(viewer);
  rmSync(dir, { recursive: true, force: true });
});

describe('the dashboard in headless Chromium', () => {
  (hasChromium ? test : test.skip)(
    'live tiles; a banner within 2 target intervals once mining stops and once the node is gone; 390 px',
    async () => {
      const { chromium } = await import('playwright-core');
      mkdirSync(ARTIFACTS, { recursive: true });
      const profile = mkdtempSync(join(tmpdir(), 'native-chromium-'));
      const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS, viewport: { width: 390, height: 844 }, timeout: 30_000 });
      try {
        const page = context.pages()[0] ?? (await context.newPage());
        page.setDefaultTimeout(15_000);
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        const codes = () => page.locator('#alerts li').evaluateAll((lis) => lis.map((l) => l.getAttribute('data-code')));

        await page.goto(`${viewer.url}/dashboard`);
        // Live tiles: the height tile follows the node without a reload.
        const first = Number(await page.locator('#now-height').textContent());
        await until('the height tile to move', async () => Number(await page.locator('#now-height').textContent()) > first, 4 * TARGET * 1000, 100);
        expect(await codes()).not.toContain('no_blocks');
        expect(await page.locator('#now-miner').textContent()).toBe('off');
        expect(await page.locator('#now-stratum').textContent()).toBe('off');
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(390);
        await page.screenshot({ path: join(ARTIFACTS, 'dashboard-390.png'), fullPage: true });

        // Mining stops: the miner is killed.
        miner.child.kill('SIGKILL');
        const stoppedAt = Date.now();
        await until('the no-block banner', async () => (await codes()).includes('no_blocks'), 4 * TARGET * 1000, 100);
        expect(Date.now() - stoppedAt).toBeLessThanOrEqual(2 * TARGET * 1000);
        expect(await page.locator('#alerts').isVisible()).toBe(true);
        expect(await page.locator('#alerts li[data-code="no_blocks"]').textContent()).toMatch(/^No block for \d+ s \(\d+× the target interval of 4 s\); the tip is block \d+\.$/);
        await until('the no-peers alert', async () => (await codes()).includes('no_peers'), 30_000, 250);
        await page.screenshot({ path: join(ARTIFACTS, 'dashboard-no-blocks.png'), fullPage: true });

        // The node is gone: the open page says so.
        viewer.child.kill('SIGKILL');
        const killedAt = Date.now();
        await until('the unreachable banner', async () => (await codes()).includes('node_unreachable'), 4 * TARGET * 1000, 100);
        expect(Date.now() - killedAt).toBeLessThanOrEqual(2 * TARGET * 1000);
        expect(await page.locator('#alerts li[data-code="node_unreachable"]').textContent()).toMatch(/^The node does not answer since /);
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(390);
        await page.screenshot({ path: join(ARTIFACTS, 'dashboard-unreachable.png'), fullPage: true });
        expect(errors).toEqual([]);
      } finally {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
