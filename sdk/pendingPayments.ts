/**
 * Where an agent keeps the payments it signed until they are mined, so that a payment a node
 * lost (a crash before its block, a mempool file lost) is broadcast again — the same signed
 * bytes, the same tx id, so it can never pay twice. The SDK (sdk/client.ts) puts a payment
 * before broadcasting it and deletes it once a settle proves it mined; the CLI keeps them in
 * files so `native-node call --tx <id>` can broadcast again after the process ended.
 */
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A signed payment not yet known to be mined. */
export interface PendingPayment {
  /** Hex id of the agent_invoke. */
  readonly txId: string;
  /** Hex of the signed transaction bytes. */
  readonly tx: string;
  /** Its nonce (decimal string): stored payments are broadcast again in nonce order. */
  readonly nonce: string;
  readonly serviceId: string;
  /** Unix ms when it was signed. */
  readonly createdAt: number;
  /** The secret its requestHash commits to (the settle reveals it); absent in payments stored by older versions. */
  readonly salt?: string;
  /** The request it commits to (absent: none). */
  readonly request?: string;
}

/** A store of pending payments. */
export interface PendingPaymentStore {
  put(p: PendingPayment): Promise<void>;
  get(txId: string): Promise<PendingPayment | undefined>;
  delete(txId: string): Promise<void>;
  /** Every stored payment, lowest nonce first. */
  list(): Promise<PendingPayment[]>;
}

const TX_ID_RE = /^[0-9a-f]{64}$/;

function byNonce(a: PendingPayment, b: PendingPayment): number {
  const x = BigInt(a.nonce);
  const y = BigInt(b.nonce);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Pending payments in memory (the SDK's default: they last as long as the client). */
export function createMemoryPaymentStore(): PendingPaymentStore {
  const m = new Map<string, PendingPayment>();
  return {
    async put(p) {
      m.set(p.txId, p);
    },
    async get(txId) {
      return m.get(txId);
    },
    async delete(txId) {
      m.delete(txId);
    },
    async list() {
      return [...m.values()].sort(byNonce);
    },
  };
}

/** Pending payments as one JSON file each in `dir` (written atomically, mode 0600). */
export function createFilePaymentStore(dir: string): PendingPaymentStore {
  const file = (txId: string) => {
    if (!TX_ID_RE.test(txId)) throw new Error(`not a tx id: ${txId}`);
    return join(dir, `${txId}.json`);
  };
  const read = async (path: string): Promise<PendingPayment | undefined> => {
    try {
      const p = JSON.parse(await readFile(path, 'utf8')) as PendingPayment;
      return typeof p.tx === 'string' && typeof p.txId === 'string' && typeof p.nonce === 'string' ? p : undefined;
    } catch {
      return undefined;
    }
  };
  return {
    async put(p) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const tmp = `${file(p.txId)}.${process.pid}.tmp`;
      await writeFile(tmp, `${JSON.stringify(p)}\n`, { mode: 0o600 });
      await rename(tmp, file(p.txId));
    },
    get: (txId) => read(file(txId)),
    async delete(txId) {
      await rm(file(txId), { force: true });
    },
    async list() {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch {
        return [];
      }
      const all = await Promise.all(names.filter((n) => /^[0-9a-f]{64}\.json$/.test(n)).map((n) => read(join(dir, n))));
      return all.filter((p): p is PendingPayment => p !== undefined).sort(byNonce);
    },
  };
}
