/** A process that takes the signer lease of the database at argv[2], says `acquired`, and then just holds it (for the SIGKILL takeover test). */
import { SignerLease } from '../../x402/fleet/signerLease.js';

const lease = new SignerLease(process.argv[2]!, { pollMs: 200 });
lease.on('acquired', () => process.stdout.write('acquired\n'));
await lease.start();
setInterval(() => undefined, 60_000);
