/**
 * The project's root directory (where package.json, genesis.json and bin/ are), found from this
 * module's own location: `services/` in a checkout run through tsx, `build/services/` in the compiled
 * build. Files outside the compiled tree are read relative to it, never to `import.meta.url`.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest directory above `from` holding a package.json. */
export function findProjectRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/** Absolute path of the project's root directory. */
export const PROJECT_ROOT: string = findProjectRoot(dirname(fileURLToPath(import.meta.url)));
