// Jest's global teardown: removes the run's state directory (globalSetup.mjs).
import { rmSync } from 'node:fs';

export default async function globalTeardown() {
  if (process.env.NATIVE_TEST_STATE_HOME) rmSync(process.env.NATIVE_TEST_STATE_HOME, { recursive: true, force: true });
}
