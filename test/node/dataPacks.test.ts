/**
 * The data packs (node/dataPacks.ts): each pack's lock pins exactly its package.json's versions
 * with a sha512 integrity (what `npm ci` checks every tarball against), the status lists them,
 * and an unknown pack is a coded error. Installing is exercised by the geo-IP tests
 * (test/services/identity.test.ts installs the pack through `installDataPack` when missing).
 */
import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DATA_PACKS, DataPackErrorCode, dataPack, dataPackStatus } from '../../node/dataPacks.js';

describe('data packs', () => {
  test.each(Object.keys(DATA_PACKS))('%s: the lock pins the manifest\'s exact versions with sha512 integrity', (name) => {
    const pack = DATA_PACKS[name];
    const manifest = JSON.parse(readFileSync(join(pack.dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const lock = JSON.parse(readFileSync(join(pack.dir, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; integrity?: string; dependencies?: Record<string, string> }> };
    expect(lock.packages[''].dependencies).toEqual(manifest.dependencies);
    for (const [dep, version] of Object.entries(manifest.dependencies)) {
      expect(version).toMatch(/^\d+\.\d+\.\d+$/);
      expect(lock.packages[`node_modules/${dep}`]).toMatchObject({ version, integrity: expect.stringMatching(/^sha512-[A-Za-z0-9+/]{86}==$/) });
    }
    expect(dataPackStatus(pack)).toMatchObject({ name, dir: pack.dir, packages: manifest.dependencies, installed: expect.any(Boolean) });
  });

  test('an unknown pack is refused with its code and the list of packs', () => {
    expect(() => dataPack('nope')).toThrow(expect.objectContaining({ code: DataPackErrorCode.UNKNOWN_PACK, message: expect.stringContaining('packs: geoip') }));
    expect(() => dataPack(undefined)).toThrow(expect.objectContaining({ code: DataPackErrorCode.UNKNOWN_PACK }));
  });
});
