/**
 * The CPU miner's worker threads (miner.ts): starting one per slot (the hasher and the thread
 * priority it reports, its readiness), restarting one that exits, giving up on one that keeps
 * failing, and stopping them gracefully. What the workers are given to do is the miner's.
 */
import type { Worker } from 'node:worker_threads';
import { createTsWorker, siblingModuleUrl } from './tsWorker.js';
import type { HasherKind, MainToWorker, MinerWorkerData, WorkerToMain } from './minerWorker.js';
import type { Logger } from './types.js';

const WORKER_URL = siblingModuleUrl('minerWorker', import.meta.url);
const STOP_GRACE_MS = 500;
const RESTART_DELAY_MS = 1_000;
const MAX_WORKER_FAILURES = 5;

/** A worker thread's place in the miner. */
export interface Slot {
  readonly index: number;
  worker?: Worker;
  ready: boolean;
  hasher?: HasherKind;
  /** The worker thread's nice value, when it could set its own (minerWorker.ts lowerThreadPriority). */
  nice?: number;
  exited?: Promise<void>;
  /** Exits since the worker was last ready (a worker that cannot start is not restarted forever). */
  failures: number;
}

/** What a slot's worker reports to. */
export interface SlotHandlers {
  readonly log: Logger;
  /** Whether the miner runs (an exited worker is restarted only then). */
  running(): boolean;
  onMessage(slot: Slot, worker: Worker, msg: WorkerToMain): void;
}

/**
 * Starts the worker of `slot`; resolves when it is ready or has failed (never rejects). A worker
 * that exits while `h.running()` is restarted after a second, up to MAX_WORKER_FAILURES exits in
 * a row without becoming ready.
 */
export function spawnSlot(slot: Slot, data: MinerWorkerData, h: SlotHandlers): Promise<void> {
  let worker: Worker;
  try {
    worker = createTsWorker(WORKER_URL, { workerData: data });
  } catch (e) {
    h.log.error({ worker: slot.index, err: (e as Error).message }, 'miner worker failed to start');
    return Promise.resolve();
  }
  slot.worker = worker;
  slot.ready = false;
  let settle!: () => void;
  const ready = new Promise<void>((resolve) => (settle = resolve));
  slot.exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('message', (msg: WorkerToMain) => {
    if (msg.type === 'ready') {
      slot.ready = true;
      slot.hasher = msg.hasher;
      if ('error' in msg.priority) {
        slot.nice = undefined;
        h.log.debug({ worker: slot.index, reason: msg.priority.error }, 'miner worker keeps the process priority');
      } else slot.nice = msg.priority.nice;
      slot.failures = 0;
      settle();
    }
    h.onMessage(slot, worker, msg);
  });
  worker.on('error', (err) => {
    h.log.error({ worker: slot.index, err: err.message }, 'miner worker failed');
  });
  worker.on('exit', (code) => {
    settle();
    if (slot.worker !== worker) return;
    slot.worker = undefined;
    slot.ready = false;
    if (h.running() && ++slot.failures >= MAX_WORKER_FAILURES) {
      h.log.error({ worker: slot.index, code, failures: slot.failures }, 'miner worker keeps failing; not restarting it');
    } else if (h.running()) {
      h.log.warn({ worker: slot.index, code }, 'miner worker exited; restarting');
      setTimeout(() => {
        if (h.running() && !slot.worker) void spawnSlot(slot, data, h);
      }, RESTART_DELAY_MS).unref();
    }
  });
  return ready;
}

/** Stops the worker of `slot`: asks it to stop, terminates it after a grace period. */
export async function stopSlot(slot: Slot): Promise<void> {
  const worker = slot.worker;
  if (!worker) return;
  slot.worker = undefined;
  slot.ready = false;
  const exited = slot.exited ?? Promise.resolve();
  try {
    worker.postMessage({ type: 'stop' } satisfies MainToWorker);
  } catch {
    // Already gone.
  }
  let timer: NodeJS.Timeout | undefined;
  const graceful = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), STOP_GRACE_MS)))]);
  clearTimeout(timer);
  if (!graceful) await worker.terminate();
}
