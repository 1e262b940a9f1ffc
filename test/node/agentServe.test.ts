/** How `agent serve` runs a job: `--exec` (stdin/stdout/exit code, time limit) and `--forward` (a local HTTP endpoint on 127.0.0.1). */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { runExec, runForward, type Job } from '../../cli/agentCli.js';

const job: Job = { jobId: 'a'.repeat(32), serviceId: 'echo-bot-upper', request: 'hello', input: 'hello', deadline: Date.now() + 10_000 };
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const j = JSON.parse(body) as { request: string; jobId: string };
      if (req.url === '/fail') {
        res.writeHead(500).end('{}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ upper: j.request.toUpperCase(), jobId: j.jobId }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

describe('agent serve job runners', () => {
  test('--exec: the request on stdin, JSON or text stdout is the result, a non-zero exit a failure, the deadline kills it', async () => {
    expect(await runExec('tr a-z A-Z', job, 5000)).toEqual({ result: 'HELLO' });
    expect(await runExec(`node -e 'process.stdin.on("data", d => console.log(JSON.stringify({n: String(d).length})))'`, job, 5000)).toEqual({ result: { n: 5 } });
    expect(await runExec('echo broken >&2; exit 3', job, 5000)).toEqual({ error: { message: 'exit 3: broken' } });
    expect(await runExec('sleep 5', job, 300)).toEqual({ error: { message: 'the command did not finish within 300 ms' } });
  });

  test('--forward: a 2xx JSON answer is the result; another status is a failure', async () => {
    expect(await runForward(`${url}/upper`, job, 5000)).toEqual({ result: { upper: 'HELLO', jobId: job.jobId } });
    expect(await runForward(`${url}/fail`, job, 5000)).toEqual({ error: { message: 'the local endpoint answered 500' } });
    expect('error' in (await runForward('http://127.0.0.1:1/none', job, 2000))).toBe(true);
  });
});
