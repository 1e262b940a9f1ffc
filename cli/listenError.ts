/**
 * A listener that could not bind, in one line naming the flag that moves it: the node's
 * `*_listen_failed` errors (HTTP, metrics, getblocktemplate RPC, p2p, Stratum) carry the address
 * and the system's reason; which listener it was is told by the code, else by the port.
 */
import { NodeError, isNodeError } from '../consensus/errors.js';
import type { NodeConfig } from '../node/config.js';

/** The system's reason in words. */
function reasonText(reason: string): string {
  if (reason === 'EADDRINUSE') return 'the port is in use (another node or program has it)';
  if (reason === 'EACCES') return 'not allowed (ports below 1024 need privileges)';
  if (reason === 'EADDRNOTAVAIL') return 'the host is not an address of this machine';
  return reason;
}

/** `e` as one line naming the flag, when it is a listener that could not bind; otherwise `e` itself. */
export function listenErrorOneLine(e: unknown, config: Pick<NodeConfig, 'httpPort' | 'metricsPort' | 'rpcPort' | 'p2pPort' | 'stratumPort'>): unknown {
  if (!isNodeError(e) || !/_listen_failed$/.test(e.code)) return e;
  const m = /on (\[[^\]]+\]|[^\s:]+):(\d+)/.exec(e.message);
  const port = m ? Number(m[2]) : undefined;
  const reason = /\b(EADDRINUSE|EACCES|EADDRNOTAVAIL)\b/.exec(e.message)?.[1];
  const listener: [string, string] | undefined =
    e.code === 'p2p_listen_failed'
      ? ['peers', '--p2p-port']
      : e.code === 'stratum_listen_failed'
        ? ['Stratum', '--stratum-port']
        : port === config.metricsPort
          ? ['metrics', '--metrics-port']
          : port === config.rpcPort
            ? ['getblocktemplate RPC', '--rpc-port']
            : port === config.httpPort
              ? ['HTTP', '--http-port']
              : undefined;
  if (!listener || !m) return e;
  const message = `cannot listen for ${listener[0]} on ${m[1]}:${m[2]}: ${reason ? reasonText(reason) : 'refused'}; start with another ${listener[1]} (0 picks a free port)`;
  return new NodeError(e.code, message, { flag: listener[1], host: m[1], port });
}
