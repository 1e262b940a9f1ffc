/** The node's version, read once from package.json. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../services/projectRoot.js';

/** Version string of this node (package.json `version`). */
export const NODE_VERSION: string = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
