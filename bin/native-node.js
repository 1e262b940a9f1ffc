#!/usr/bin/env node
// The `native-node` command: loads the TypeScript sources through tsx, so a checkout and a
// global install (`npm install -g .`) run the same code without a build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../node/cli.ts');
process.exitCode = await main(process.argv.slice(2));
