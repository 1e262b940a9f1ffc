/**
 * The node's logger: pino JSON lines (one object per line, ISO time, level names), written
 * synchronously so the last lines before an exit are never lost. Child loggers carry a `module`
 * field (`chain`, `mempool`, `miner`, `http`…).
 */
import { pino, type Logger as PinoLogger } from 'pino';
import type { LogLevel } from './config.js';

/** The node's logger type (pino's; structurally a `Logger` of chain/types.ts). */
export type NodeLogger = PinoLogger;

/** Options of `createLogger`. */
export interface LoggerOptions {
  readonly level: LogLevel;
  /** File descriptor written to: 1 (stdout, default) or 2 (stderr). */
  readonly fd?: 1 | 2;
  /** Fields on every line, e.g. `{ network }`. */
  readonly base?: Record<string, unknown>;
}

/** Default logger options: info to stdout. */
export const defaultLoggerOptions: LoggerOptions = { level: 'info', fd: 1 };

/** Creates the root logger of the node. */
export function createLogger(opts: Partial<LoggerOptions> = {}): NodeLogger {
  const o = { ...defaultLoggerOptions, ...opts };
  return pino(
    {
      level: o.level,
      base: { pid: process.pid, ...o.base },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: pino.stdSerializers.err },
    },
    pino.destination({ fd: o.fd ?? 1, sync: true }),
  );
}
