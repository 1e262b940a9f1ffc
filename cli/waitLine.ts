/**
 * The progress line of `native-node call` while it waits for its payment's block: one line on
 * an interactive terminal's stderr, redrawn in place (`\r`) with a spinner and the seconds
 * waited, cleared when the wait ends. Nothing at all when the stream is not a TTY (pipes, logs,
 * `--json`), so scripts see only the plain messages.
 */

/** Where the line is drawn. */
export interface WaitLineOutput {
  write(s: string): unknown;
  readonly isTTY?: boolean;
}

/** A running progress line. */
export interface WaitLine {
  /** Updates the label (e.g. after a retry). */
  update(label: string): void;
  /** Clears the line and stops redrawing; idempotent. */
  stop(): void;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/** Redraw period, ms. */
export const WAIT_LINE_INTERVAL_MS = 200;

/** Starts the line `⠋ <label> 3.4 s` on `out` if it is a TTY; otherwise a no-op line. */
export function startWaitLine(out: WaitLineOutput, label: string, now: () => number = Date.now): WaitLine {
  if (out.isTTY !== true) return { update() {}, stop() {} };
  const started = now();
  let frame = 0;
  let text = label;
  let timer: NodeJS.Timeout | undefined;
  const draw = () => {
    out.write(`\r\x1b[K${FRAMES[frame++ % FRAMES.length]} ${text} ${((now() - started) / 1000).toFixed(1)} s`);
  };
  draw();
  timer = setInterval(draw, WAIT_LINE_INTERVAL_MS);
  timer.unref();
  return {
    update(l: string) {
      text = l;
      draw();
    },
    stop() {
      if (timer === undefined) return;
      clearInterval(timer);
      timer = undefined;
      out.write('\r\x1b[K');
    },
  };
}
