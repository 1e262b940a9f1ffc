/**
 * Debian's Chromium for the browser tests (.ci/run installs it): where it is, whether it is there,
 * and the flags every browser test launches it with (headless, no sandbox or GPU, nothing that
 * reaches beyond 127.0.0.1 by itself).
 */
import { existsSync } from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
export const hasChromium = existsSync(CHROMIUM);
