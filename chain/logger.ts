/**
 * The logging interface of the node and of the agent SDK (pino's signature: structured object
 * first, then message). Imports nothing, so the agent package compiles it without the chain.
 */

/** The logging calls the chain and the SDK make. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** A logger that drops everything (tests, tools, the SDK's default). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
