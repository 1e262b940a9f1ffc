/** The node's version, read once from package.json. */
import { readFileSync } from 'node:fs';

/** Version string of this node (package.json `version`). */
export const NODE_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
