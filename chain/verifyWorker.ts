/**
 * Worker thread of the verification pool (`verifyPool.ts`): loads the fast hybrid verifier, says
 * `ready`, then answers each chunk of jobs with one byte per job (1 = both signatures valid).
 * Started through `createTsWorker`: compiled in the build, under tsx from the sources.
 */
import { parentPort } from 'node:worker_threads';
import { createFastVerifier } from '../consensus/fastVerify.js';
import { decodeVerifyJobs, type VerifyRequest, type VerifyWorkerMessage } from './verifyPool.js';

const port = parentPort;
if (!port) throw new Error('verifyWorker.ts must run in a worker thread');

const verifier = await createFastVerifier();

port.on('message', (req: VerifyRequest) => {
  const jobs = decodeVerifyJobs(req.buf, req.count);
  const results = new Uint8Array(jobs.length);
  jobs.forEach((job, i) => {
    results[i] = verifier.verify(job.pub, job.msg, job.sig) ? 1 : 0;
  });
  const msg: VerifyWorkerMessage = { type: 'result', task: req.task, results };
  port.postMessage(msg, [results.buffer]);
});

const ready: VerifyWorkerMessage = { type: 'ready' };
port.postMessage(ready);
