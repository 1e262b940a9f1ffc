/**
 * The node's logger: pino, written synchronously so the last lines before an exit are never
 * lost. Child loggers carry a `module` field (`chain`, `mempool`, `miner`, `http`…).
 *
 * Two formats: JSON lines (one object per line, ISO time, level names) for machines and log
 * collectors, and for people on a terminal one coloured line per event through pino-pretty
 * (`HH:MM:ss.l LEVEL [module] message key=value…`). `auto` picks pretty when the output is a TTY.
 */
import { pino, type Logger as PinoLogger } from 'pino';
import { PinoPretty } from 'pino-pretty';
import type { LogFormat, LogLevel } from './config.js';

/** The node's logger type (pino's; structurally a `Logger` of chain/types.ts). */
export type NodeLogger = PinoLogger;

/** Options of `createLogger`. */
export interface LoggerOptions {
  readonly level: LogLevel;
  /** File descriptor written to: 1 (stdout, default) or 2 (stderr). */
  readonly fd?: 1 | 2;
  /** Fields on every line, e.g. `{ network }`. */
  readonly base?: Record<string, unknown>;
  /** `json`, `pretty`, or `auto`: pretty when the file descriptor is a terminal. */
  readonly format?: LogFormat;
  /** Whether the descriptor is a terminal (for `auto`; default: asks the process's stream). */
  readonly isTTY?: boolean;
}

/** Default logger options: info to stdout, pretty on a terminal. */
export const defaultLoggerOptions: LoggerOptions = { level: 'info', fd: 1, format: 'auto' };

/** Whether `opts` resolve to the human format. */
export function isPrettyLog(opts: Pick<LoggerOptions, 'format' | 'fd' | 'isTTY'>): boolean {
  if (opts.format === 'pretty') return true;
  if (opts.format === 'json') return false;
  return opts.isTTY ?? (opts.fd === 2 ? process.stderr.isTTY : process.stdout.isTTY) === true;
}

/** Creates the root logger of the node. */
export function createLogger(opts: Partial<LoggerOptions> = {}): NodeLogger {
  const o = { ...defaultLoggerOptions, ...opts };
  const fd = o.fd ?? 1;
  if (isPrettyLog(o)) {
    return pino(
      // pino-pretty prints its error key on lines of their own: rename it, so `{ err }` stays on the event's line like every other field.
      { level: o.level, base: { ...o.base }, errorKey: 'exception', serializers: { err: pino.stdSerializers.err } },
      PinoPretty({
        destination: fd,
        sync: true,
        colorize: o.isTTY ?? (fd === 2 ? process.stderr.isTTY : process.stdout.isTTY) === true,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname,module',
        messageFormat: '{if module}[{module}] {end}{msg}',
        singleLine: true,
        errorLikeObjectKeys: [],
      }),
    );
  }
  return pino(
    {
      level: o.level,
      base: { pid: process.pid, ...o.base },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: pino.stdSerializers.err },
    },
    pino.destination({ fd, sync: true }),
  );
}
