/**
 * The house rules (scripts/architecture.mjs): the product has no import circle, no arrow up
 * between its folders or between the rooms of x402/, no file over 650 lines and no file its
 * folder's README does not name; and the check does find each kind of breach in a small tree
 * made for it.
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
    put('chain/README.md', '`a.ts` and `b.ts`\n');
    put('services/README.md', '`s.ts`\n');
    put('x402/README.md', '`core/q.ts`, `ledger/l.ts`\n');
    put('consensus/README.md', '`long.ts`\n');
    const { problems } = check(dir) as { problems: Problem[] };
    expect(problems.map((p) => p.rule).sort()).toEqual(['arrow-up', 'arrow-up', 'circle', 'too-long']);
    expect(problems.find((p) => p.rule === 'circle')?.files).toEqual(['chain/a.ts', 'chain/b.ts']);
    expect(problems.filter((p) => p.rule === 'arrow-up').map((p) => p.files[0]).sort()).toEqual(['services/s.ts', 'x402/ledger/l.ts']);
    expect(problems.find((p) => p.rule === 'too-long')?.files).toEqual(['consensus/long.ts']);
  });

  test('a file its folder\'s README does not name is found', async () => {
    const dir = await tmpDir();
    const put = (path: string, text = 'export const x = 1;\n') => {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    };
    // Named by its file name in its folder's README, or missing from it.
    put('sdk/README.md', '# sdk/\n\n- `client.ts`: the client.\n');
    put('sdk/client.ts');
    put('sdk/receipts.ts');
    // The nearest README may name a file of a subfolder by its name; a README above, by its path from there.
    put('node/README.md', '- `api/`: the HTTP API (`app.ts`).\n');
    put('node/api/app.ts');
    put('node/api/mcp.ts');
    put('x402/README.md', 'A room: `core/wire.ts`; `offers.ts`; `myquote.ts`.\n');
    put('x402/core/README.md', '# x402/core/\n');
    put('x402/core/wire.ts');
    put('x402/core/offers.ts');
    put('x402/core/quote.ts');
    // The catalog names the service files it imports; a helper beside them needs its README.
    put('services/README.md', 'One file per service, imported by `index.ts`.\n');
    put('services/index.ts', "import { clock } from './world-clock.js';\nexport const all = [clock];\n");
    put('services/world-clock.ts', 'export const clock = 1;\n');
    put('services/helper.ts');
    // No README at or above it; and a script of scripts/ its README does not list.
    put('packages/agent/src/index.ts');
    put('scripts/README.md', '- `a.mjs`: one script.\n');
    put('scripts/a.mjs', '');
    put('scripts/b.mjs', '');
    const { problems } = check(dir) as { problems: Problem[] };
    expect(problems.filter((p) => p.rule !== 'unnamed')).toEqual([]);
    expect(problems.map((p) => p.files[0]).sort()).toEqual(['node/api/mcp.ts', 'packages/agent/src/index.ts', 'scripts/b.mjs', 'sdk/receipts.ts', 'services/helper.ts', 'x402/core/offers.ts', 'x402/core/quote.ts']);
    const message = (f: string) => problems.find((p) => p.files[0] === f)?.message;
    expect(message('sdk/receipts.ts')).toBe('sdk/receipts.ts is not named in sdk/README.md');
    expect(message('x402/core/quote.ts')).toBe('x402/core/quote.ts is not named in x402/core/README.md');
    expect(message('packages/agent/src/index.ts')).toBe('packages/agent/src/index.ts has no README.md in its folder or above');
  });
});
