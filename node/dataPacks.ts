/**
 * Data packs: data a service needs that is too large to install with every node, kept as a folder
 * with a package.json and a lock file (`packs/<name>/`) that pin the data's npm packages, sha512
 * included. `native-node data install <name>` runs `npm ci` there — npm fetches each tarball from
 * the configured registry and refuses one whose integrity differs from the lock — and
 * `native-node data status` says what is installed. A pack is complete only when npm wrote its
 * `node_modules/.package-lock.json` at the end of the install, so an interrupted install leaves
 * the service `down`, never reading half-written files.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NodeError } from '../consensus/errors.js';
import { GEOIP_PACK_DIR, geoIpDataInstalled } from '../services/identity/geoip.js';

/** One data pack. */
export interface DataPack {
  readonly name: string;
  readonly dir: string;
  /** What it holds and for which service. */
  readonly description: string;
  /** Whether the service can use it (complete install, files present). */
  installed(): boolean;
}

/** The packs, by name. */
export const DATA_PACKS: Readonly<Record<string, DataPack>> = {
  geoip: {
    name: 'geoip',
    dir: GEOIP_PACK_DIR,
    description: 'native-geo-ip: DB-IP IP to City Lite and RouteViews + DB-IP ASN (CC BY 4.0), 191 MB',
    installed: geoIpDataInstalled,
  },
};

/** Error codes of the data commands. */
export const DataPackErrorCode = { UNKNOWN_PACK: 'unknown_data_pack', INSTALL_FAILED: 'data_pack_install_failed' } as const;

/** A pack's state: installed or not, and the pinned packages with their versions. */
export interface DataPackStatus {
  readonly name: string;
  readonly dir: string;
  readonly description: string;
  readonly installed: boolean;
  readonly packages: Readonly<Record<string, string>>;
}

/** The pack named `name`, or a coded error listing the others. */
export function dataPack(name: string | undefined): DataPack {
  const pack = name === undefined ? undefined : DATA_PACKS[name];
  if (!pack) throw new NodeError(DataPackErrorCode.UNKNOWN_PACK, `unknown data pack ${name ?? '(none)'}; packs: ${Object.keys(DATA_PACKS).join(', ')}`);
  return pack;
}

/** The state of one pack. */
export function dataPackStatus(pack: DataPack): DataPackStatus {
  const manifest = JSON.parse(readFileSync(join(pack.dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  return { name: pack.name, dir: pack.dir, description: pack.description, installed: pack.installed(), packages: manifest.dependencies };
}

/** `npm ci` in `dir` from its own lock file (a data pack; the tests' reference/ and test/tools/ too); rejects with a coded error carrying npm's last words. */
export function npmCi(dir: string, extraArgs: readonly string[] = [], timeoutMs = 15 * 60_000): Promise<void> {
  const args = ['ci', ...extraArgs, '--no-audit', '--no-fund', '--loglevel=error'];
  return new Promise((resolve, reject) => {
    // npm is a .cmd script on Windows, which only a shell runs.
    execFile('npm', args, { cwd: dir, timeout: timeoutMs, maxBuffer: 32 * 1024 * 1024, shell: process.platform === 'win32' }, (err, _stdout, stderr) =>
      err ? reject(new NodeError(DataPackErrorCode.INSTALL_FAILED, `npm ${args.join(' ')} in ${dir} failed: ${String(stderr).trim().slice(-2000) || err.message}`)) : resolve(),
    );
  });
}

/** Installs (or re-installs) `pack` from its lock file with npm; resolves with its state, throws a coded error when npm fails. */
export async function installDataPack(pack: DataPack, timeoutMs = 15 * 60_000): Promise<DataPackStatus> {
  if (!existsSync(join(pack.dir, 'package-lock.json'))) throw new NodeError(DataPackErrorCode.INSTALL_FAILED, `${pack.dir} has no package-lock.json`);
  await npmCi(pack.dir, ['--omit=dev', '--ignore-scripts'], timeoutMs);
  const status = dataPackStatus(pack);
  if (!status.installed) throw new NodeError(DataPackErrorCode.INSTALL_FAILED, `npm finished but the ${pack.name} data is incomplete in ${pack.dir}`);
  return status;
}
