// Kōdo programs of several modules through the kodoc binary (docs/kodo.md §4.3,
// docs/decisions/0074-kodo-multi-module-programs.md): each program of testdata/kodo/multi is
// copied to a scratch directory, `kodoc run` prints its stdout.txt, `kodoc build` makes an
// executable that prints the same, `kodoc mir` names clashing functions by module and `kodoc test`
// runs the tests against the imported modules.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD_DIR, REPO_ROOT } from './lib/env.mjs';

const KODOC = path.join(BUILD_DIR, 'src', 'kodo', 'cli', 'kodoc');
const MULTI = path.join(REPO_ROOT, 'testdata', 'kodo', 'multi');

describe('kodoc on programs of several modules', () => {
  let dir;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kodoc-multi-e2e-'));
    cpSync(MULTI, dir, { recursive: true });
  });
  after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

  const run = (bin, args, cwd) => {
    const r = spawnSync(bin, args, {
      cwd, encoding: 'utf8', timeout: 120000, env: { ...process.env, XDG_CACHE_HOME: path.join(dir, '.cache') },
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  for (const name of readdirSync(MULTI).sort()) {
    test(`${name}: run and build print the expected stdout`, { timeout: 180000 }, () => {
      const cwd = path.join(dir, name);
      const want = readFileSync(path.join(cwd, 'stdout.txt'), 'utf8');
      const ran = run(KODOC, ['run', 'main.ko'], cwd);
      assert.equal(ran.stderr, '');
      assert.equal(ran.code, 0);
      assert.equal(ran.stdout, want);
      const built = run(KODOC, ['build', 'main.ko', '-o', 'prog'], cwd);
      assert.equal(built.code, 0, built.stderr);
      assert.match(built.stdout, /^Successfully compiled `\w+` → prog\n$/);
      const exe = run(path.join(cwd, 'prog'), [], cwd);
      assert.equal(exe.code, 0, exe.stderr);
      assert.equal(exe.stdout, ran.stdout);
    });
  }

  test('mir names an imported clashing function by its module', () => {
    const r = run(KODOC, ['mir', '--no-opt', 'main.ko'], path.join(dir, 'app'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /name: "util::label"/);
    assert.match(r.stdout, /name: "label"/);
    assert.match(r.stdout, /callee: "text::version"/);
  });

  test('test runs the tests against the imported modules', () => {
    const r = run(KODOC, ['test', 'main.ko'], path.join(dir, 'app'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /test result: ok\. 2 passed; 0 failed/);
  });
});
