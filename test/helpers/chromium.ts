/**
 * Debian's Chromium for the browser tests (.ci/run installs it): where it is, whether it is there,
 * the flags every browser test launches it with (headless, no sandbox or GPU, nothing that
 * reaches beyond 127.0.0.1 by itself), and the one directory their screenshots go to.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
export const hasChromium = existsSync(CHROMIUM);

/**
 * Where every browser test writes its screenshots: `tmp/artifacts/` in the clone (gitignored;
 * .ci/run empties it first and prints where it is), or `ARTIFACTS_DIR` when set.
 */
export const ARTIFACTS_DIR = process.env.ARTIFACTS_DIR ?? fileURLToPath(new URL('../../tmp/artifacts', import.meta.url));
