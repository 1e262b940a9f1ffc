/**
 * The `native-node sanctions update` command: refreshes the node's sanctions lists in
 * `<data dir>/sanctions` from the official addresses (or the given ones), through
 * services/sanctions/update.ts. Exit code 0 when every list was updated, 1 when one failed (its
 * previous copy is kept).
 */
import { join } from 'node:path';
import type { ListCode } from '../services/sanctions/parse.js';
import { updateSanctionsLists } from '../services/sanctions/update.js';
import type { NodeConfig } from './config.js';

/** Directory of a node's updated sanctions lists. */
export function sanctionsDirOf(config: Pick<NodeConfig, 'dataDir'>): string {
  return join(config.dataDir, 'sanctions');
}

/** Runs the update and prints one line per list; returns the exit code. */
export async function sanctionsUpdate(config: NodeConfig, out: { print(human: string, data: unknown): void }, sources: Partial<Record<ListCode, string | undefined>>): Promise<number> {
  const defined = Object.fromEntries(Object.entries(sources).filter(([, v]) => v !== undefined)) as Partial<Record<ListCode, string>>;
  const dir = sanctionsDirOf(config);
  const outcomes = await updateSanctionsLists({ dir, sources: defined });
  const lines = outcomes.map((o) => (o.ok ? `${o.list}: updated, dated ${o.date}, ${o.entries} entries` : `${o.list}: FAILED (${o.error})${o.kept ? `; kept the list dated ${o.kept}` : ''}`));
  out.print(`${lines.join('\n')}\nlists in ${dir}`, { dir, outcomes });
  return outcomes.every((o) => o.ok) ? 0 : 1;
}
