/**
 * The house rules (scripts/architecture.mjs): the product has no import circle, no arrow up
 * between its folders or between the rooms of x402/, and no file over 650 lines; and the check
 * does find each kind of breach in a small tree made for it.
 */
import { describe, expect, test } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
// @ts-expect-error: a plain ES module without types (it runs in CI as `node scripts/architecture.mjs` too)
import { check } from '../scripts/architecture.mjs';
import { cleanupTmp, tmpDir } from './helpers/tmp.js';
import { afterAll } from '@jest/globals';

afterAll(cleanupTmp);

type Problem = { rule: string; files: string[]; message: string };

describe('the house rules', () => {
  test('the product keeps them', () => {
    const { files, problems } = check() as { files: number; problems: Problem[] };
    expect(files).toBeGreaterThan(300);
    expect(problems.map((p) => p.message)).toEqual([]);
  });

  test('a circle, an arrow up, an arrow between rooms and a long file are each found', async () => {
    const dir = await tmpDir();
    const put = (path: string, text: string) => {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    };
    put('chain/a.ts', "import { b } from './b.js';\nexport const a = b;\n");
    put('chain/b.ts', "import type { a } from './a.js';\nexport const b = 1 as unknown as typeof a;\n");
    put('services/s.ts', "import { q } from '../x402/core/q.js';\nexport const s = q;\n");
    put('x402/core/q.ts', "export const q = 1;\n");
    put('x402/ledger/l.ts', "import { q } from '../core/q.js';\nexport const l = q;\n");
    put('consensus/long.ts', 'export const x = 1;\n'.repeat(700));
    const { problems } = check(dir) as { problems: Problem[] };
    expect(problems.map((p) => p.rule).sort()).toEqual(['arrow-up', 'arrow-up', 'circle', 'too-long']);
    expect(problems.find((p) => p.rule === 'circle')?.files).toEqual(['chain/a.ts', 'chain/b.ts']);
    expect(problems.filter((p) => p.rule === 'arrow-up').map((p) => p.files[0]).sort()).toEqual(['services/s.ts', 'x402/ledger/l.ts']);
    expect(problems.find((p) => p.rule === 'too-long')?.files).toEqual(['consensus/long.ts']);
  });
});
