/** The waiting line of `native-node call`: drawn in place on a TTY, cleared at the end; nothing on a pipe. */
import { describe, expect, test } from '@jest/globals';
import { startWaitLine, WAIT_LINE_INTERVAL_MS } from '../../cli/waitLine.js';

describe('startWaitLine', () => {
  test('on a TTY: one line redrawn with \\r, a spinner and the seconds waited, then cleared', async () => {
    const writes: string[] = [];
    let t = 1_000;
    const line = startWaitLine({ isTTY: true, write: (s: string) => writes.push(s) }, 'waiting for the block', () => t);
    t += 1_500;
    await new Promise((r) => setTimeout(r, WAIT_LINE_INTERVAL_MS * 2 + 50));
    line.update('settling again');
    line.stop();
    line.stop();
    expect(writes[0]).toBe('\r\x1b[K⠋ waiting for the block 0.0 s');
    expect(writes.some((w) => /^\r\x1b\[K. waiting for the block 1\.5 s$/.test(w))).toBe(true);
    expect(writes.at(-2)).toMatch(/^\r\x1b\[K. settling again 1\.5 s$/);
    expect(writes.at(-1)).toBe('\r\x1b[K');
    expect(writes.every((w) => !w.includes('\n'))).toBe(true);
    expect(writes.filter((w) => w === '\r\x1b[K')).toHaveLength(1);
  });

  test('not a TTY (pipe, file, CI): writes nothing', async () => {
    const writes: string[] = [];
    const line = startWaitLine({ isTTY: false, write: (s: string) => writes.push(s) }, 'waiting');
    await new Promise((r) => setTimeout(r, WAIT_LINE_INTERVAL_MS + 50));
    line.stop();
    expect(writes).toEqual([]);
  });
});
