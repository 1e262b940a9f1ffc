/**
 * The soak run: the whole suite, `npm test`, N times in a row with a CPU hog (one
 * busy-looping child process, one core's worth) running beside it, as on a shared CI host. Prints
 * each run's wall time and every failure with its file and test name, then a summary; exits 1 if
 * any run failed. Not part of `npm test`.
 *
 *   npm run test:soak               # 3 runs
 *   npm run test:soak -- 5          # 5 runs
 *   npm run test:soak -- 2 test/node/mining/stratum.test.ts   # arguments after N go to jest
 *   npm run test:soak -- 3 --no-hog # without the hog
 *   npm run test:soak -- 1 --jest-only test/chain   # jest alone, without npm test's type check first
 *
 * Jest's own output of run i goes to <tmp>/native-soak-…/run-i.log (its path is printed); the
 * failures are read from jest's JSON report (--json --outputFile), not from the text.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
const runs = /^\d+$/.test(args[0] ?? '') ? Number(args.shift()) : 3;
const hog = !args.includes('--no-hog');
const jestOnly = args.includes('--jest-only');
const jestArgs = args.filter((a) => a !== '--no-hog' && a !== '--jest-only');
const logDir = mkdtempSync(join(tmpdir(), 'native-soak-'));

/** One busy-looping process: it takes a core until it is killed. */
function startHog() {
  const child = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
  child.unref();
  return child;
}

let hogProc = hog ? startHog() : undefined;
let current;
const stopAll = () => {
  hogProc?.kill('SIGKILL');
  hogProc = undefined;
  // `npm test` runs in its own process group (detached): end the group, jest's workers and the nodes they started included.
  if (current?.pid) {
    try {
      process.kill(-current.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
};
// Stopped by a signal (Ctrl-C, kill, a CI timeout): the hog and the suite go too. A SIGTERM used to
// leave the hog running, a core busy for whatever ran next.
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]]) {
  process.on(signal, () => {
    stopAll();
    process.exit(code);
  });
}
process.on('exit', stopAll);

/** Runs `npm test` (or jest alone) once; resolves with its exit code, wall time and jest's JSON report (undefined when jest did not get to write one, e.g. the type check failed). */
function runOnce(i) {
  const report = join(logDir, `run-${i}.json`);
  const logPath = join(logDir, `run-${i}.log`);
  const log = createWriteStream(logPath);
  const started = performance.now();
  return new Promise((resolve) => {
    const jest = ['--json', `--outputFile=${report}`, ...jestArgs];
    const [cmd, cmdArgs, env] = jestOnly
      ? ['npx', ['jest', ...jest], { ...process.env, NODE_OPTIONS: '--experimental-vm-modules' }]
      : ['npm', ['test', '--', ...jest], process.env];
    const child = spawn(cmd, cmdArgs, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env });
    current = child;
    let tail = '';
    const keep = (d) => {
      log.write(d);
      tail = (tail + d).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('close', (code) => {
      current = undefined;
      log.end();
      const seconds = (performance.now() - started) / 1000;
      const json = existsSync(report) ? JSON.parse(readFileSync(report, 'utf8')) : undefined;
      resolve({ code, seconds, json, logPath, tail });
    });
  });
}

/** The failures of a jest JSON report: one line per failed test, and per suite that failed outside any test. */
function failuresOf(json) {
  const out = [];
  for (const suite of json.testResults) {
    const file = suite.name.startsWith(process.cwd()) ? suite.name.slice(process.cwd().length + 1) : suite.name;
    const failed = suite.assertionResults.filter((t) => t.status === 'failed');
    for (const t of failed) out.push({ file, test: t.fullName, message: firstLine(t.failureMessages.join('\n')) });
    if (suite.status === 'failed' && failed.length === 0) out.push({ file, test: '(suite)', message: firstLine(suite.message) });
  }
  return out;
}

/** The gist of a jest failure message: its first three lines without colour codes, headings or stack frames. */
function firstLine(text) {
  const plain = String(text ?? '').replace(/\u001b\[[0-9;]*m/g, '');
  const lines = plain.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('●') && !l.startsWith('at '));
  return lines.slice(0, 3).join(' / ').slice(0, 400);
}

const m = (s) => `${Math.floor(s / 60)} min ${String(Math.round(s % 60)).padStart(2, '0')} s`;
console.log(`soak: ${runs} run(s) of ${jestOnly ? 'jest' : 'npm test'}${jestArgs.length ? ` -- ${jestArgs.join(' ')}` : ''}, ${hog ? `CPU hog beside it (pid ${hogProc.pid})` : 'no hog'}; logs in ${logDir}`);
const summary = [];
for (let i = 1; i <= runs; i++) {
  const load = loadavg()[0].toFixed(1);
  console.log(`\nrun ${i}/${runs}: started, load average ${load}`);
  const r = await runOnce(i);
  let failures;
  let counts;
  if (r.json) {
    failures = failuresOf(r.json);
    counts = `${r.json.numPassedTests} passed, ${r.json.numFailedTests} failed, ${r.json.numPendingTests + r.json.numTodoTests} skipped, ${r.json.numRuntimeErrorTestSuites} suites not run`;
  } else {
    // No report: jest did not run to its end (npm test's type check failed, or jest crashed).
    const tscErrors = r.tail.split('\n').filter((l) => /error TS\d+/.test(l));
    failures = tscErrors.length
      ? tscErrors.map((l) => ({ file: l.replace(/\(.*$/, ''), test: '(type check)', message: l.trim() }))
      : [{ file: '(npm test)', test: '(no jest report)', message: r.tail.split('\n').filter((l) => l.trim()).slice(-5).join(' / ') }];
    counts = 'no jest report';
  }
  if (r.code !== 0 && failures.length === 0) failures.push({ file: '(jest)', test: '(no failed test)', message: `exit code ${r.code}: see the log` });
  const ok = r.code === 0 && failures.length === 0;
  console.log(`run ${i}/${runs}: ${ok ? 'green' : 'RED'} in ${m(r.seconds)} (exit ${r.code}; ${counts}); log ${r.logPath}`);
  for (const f of failures) console.log(`  FAILED ${f.file} › ${f.test}\n         ${f.message}`);
  summary.push({ i, ok, seconds: r.seconds, failures: failures.length, load });
}
stopAll();
console.log('\n| run | result | wall time | failures | load average at start |\n|---:|---|---:|---:|---:|');
for (const s of summary) console.log(`| ${s.i} | ${s.ok ? 'green' : 'red'} | ${m(s.seconds)} | ${s.failures} | ${s.load} |`);
const green = summary.filter((s) => s.ok).length;
console.log(`\n${green} of ${runs} run(s) green${hog ? ', with a CPU hog on one core' : ''}`);
process.exitCode = green === runs ? 0 : 1;
