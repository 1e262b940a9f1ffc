/**
 * The sync progress bar of an interactive terminal: one line, redrawn in place on stderr while
 * a download is under way (`\r`, no scrolling), cleared when it ends. The node passes its stderr
 * only when it is a TTY; logs go to stdout as usual.
 */
import type { SyncState } from './types.js';

/** Where the bar is drawn (a TTY write stream). */
export interface ProgressOutput {
  write(s: string): unknown;
  readonly columns?: number;
}

/** Whole seconds as `1h02m`, `3m05s` or `42s`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

/** One line of the bar for `state`, at most `width` characters. */
export function renderProgress(state: SyncState, width: number, startHeight = 0): string {
  const total = Math.max(1, state.targetHeight - startHeight);
  const done = Math.min(total, Math.max(0, state.height - startHeight));
  const pct = (done / total) * 100;
  const info = ` ${pct.toFixed(1)}%  ${state.height}/${state.targetHeight}  ${state.rate.toFixed(1)} blk/s  ETA ${state.eta === null ? '?' : formatDuration(state.eta)}`;
  const barWidth = Math.max(10, Math.min(40, width - info.length - 8));
  const filled = Math.round((done / total) * barWidth);
  const line = `sync [${'#'.repeat(filled)}${'.'.repeat(barWidth - filled)}]${info}`;
  return line.length > width ? line.slice(0, Math.max(0, width)) : line;
}

/** Redraws the bar every `intervalMs` while the sync downloads. */
export class ProgressBar {
  private timer: NodeJS.Timeout | undefined;
  private shown = false;
  private startHeight: number | undefined;

  constructor(
    private readonly out: ProgressOutput,
    private readonly read: () => SyncState,
    private readonly intervalMs = 250,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.draw(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.clear();
  }

  private draw(): void {
    const s = this.read();
    // Short catch-ups at the tip (a block or two) would only flicker.
    if (!s.downloading || s.targetHeight - s.height < 5) {
      this.clear();
      this.startHeight = undefined;
      return;
    }
    this.startHeight ??= s.height;
    this.out.write(`\r${renderProgress(s, (this.out.columns ?? 80) - 1, this.startHeight)}\x1b[K`);
    this.shown = true;
  }

  private clear(): void {
    if (!this.shown) return;
    this.out.write('\r\x1b[K');
    this.shown = false;
  }
}
