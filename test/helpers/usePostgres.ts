/**
 * `usePostgres()`: a throwaway PostgreSQL (test/helpers/postgres.ts) for one jest test file. Kept
 * apart from postgres.ts, which the benches import too: '@jest/globals' loads only under jest.
 */
import { afterAll, beforeAll } from '@jest/globals';
import { startPostgres, type TestPostgres } from './postgres.js';

/** The server of `usePostgres`, started by its beforeAll. */
export interface UsedPostgres {
  /** The running server (throws before the suite's beforeAll ran). */
  readonly server: TestPostgres;
}

/**
 * One throwaway PostgreSQL for the calling test file: started in a `beforeAll` (allowed
 * `startTimeoutMs`), stopped and deleted in an `afterAll`. Call it at the top level of the file.
 */
export function usePostgres(startTimeoutMs = 60_000): UsedPostgres {
  let server: TestPostgres | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  }, startTimeoutMs);
  afterAll(async () => {
    await server?.stop();
  });
  return {
    get server() {
      if (!server) throw new Error('usePostgres: the server is not started (call usePostgres at the top level of the test file)');
      return server;
    },
  };
}
