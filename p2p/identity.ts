/**
 * The node's persistent libp2p identity: an Ed25519 key kept in `<dataDir>/p2p-key` (the
 * libp2p protobuf encoding of the private key, mode 0600), created at the first start. The peer
 * id derived from it is stable across restarts, so bootstrap addresses stay valid.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { generateKeyPair, privateKeyFromProtobuf, privateKeyToProtobuf } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import type { PrivateKey } from '@libp2p/interface';
import { NodeError } from '../consensus/errors.js';

/** File name of the identity key inside the data directory. */
export const P2P_KEY_FILE = 'p2p-key';

/** Error codes of the identity file. */
export const IdentityErrorCode = {
  UNREADABLE: 'p2p_key_unreadable',
} as const;

/** Loads the identity key of `dataDir`, creating it when absent. */
export async function loadOrCreateIdentity(dataDir: string): Promise<{ privateKey: PrivateKey; peerId: string; created: boolean }> {
  const file = join(dataDir, P2P_KEY_FILE);
  if (existsSync(file)) {
    let privateKey: PrivateKey;
    try {
      privateKey = privateKeyFromProtobuf(readFileSync(file));
    } catch (e) {
      throw new NodeError(IdentityErrorCode.UNREADABLE, `cannot read the p2p identity key ${file}: ${(e as Error).message}`, { path: file });
    }
    return { privateKey, peerId: peerIdFromPrivateKey(privateKey).toString(), created: false };
  }
  const privateKey = await generateKeyPair('Ed25519');
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, privateKeyToProtobuf(privateKey), { mode: 0o600 });
  renameSync(tmp, file);
  return { privateKey, peerId: peerIdFromPrivateKey(privateKey).toString(), created: true };
}
