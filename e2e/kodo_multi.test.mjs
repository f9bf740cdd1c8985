// Kōdo programs of several modules through the kodoc binary (docs/kodo.md §4.3,
// docs/decisions/0074-kodo-multi-module-programs.md): each program of testdata/kodo/multi is
// copied to a scratch directory, `kodoc run` prints its stdout.txt, `kodoc build` makes an
// executable that prints the same, `kodoc mir` names clashing functions by module and `kodoc test`
// runs the tests against the imported modules.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
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
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(ran.stdout, want);
      const built = run(KODOC, ['build', 'main.ko', '-o', 'prog'], cwd);
      assert.equal(built.code, 0, built.stderr);
      assert.match(built.stdout, /^Successfully compiled `\w+` → prog\n$/);
      // Both print the imported modules' warnings only (decision 0085; `two` imports a contract).
      assert.equal(ran.stderr, built.stderr);
      assert.doesNotMatch(ran.stderr, /error/);
      const exe = run(path.join(cwd, 'prog'), [], cwd);
      assert.equal(exe.code, 0, exe.stderr);
      assert.equal(exe.stderr, '');
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

// Decision 0085: imported modules' warnings in `check --sarif` (a log valid against the SARIF
// 2.1.0 schema, as e2e/reports.test.mjs checks the single-file one) and on the stderr of `run`,
// `mir`, `build` and `test`; qualified calls typed against the named module's own function.
describe('kodoc on imported modules with warnings and clashing signatures', () => {
  const IMPORTS = path.join(REPO_ROOT, 'testdata', 'kodo', 'imports');
  let dir;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kodoc-imports-e2e-'));
    cpSync(IMPORTS, dir, { recursive: true });
  });
  after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

  const run = (args, cwd = dir) => {
    const r = spawnSync(KODOC, args, {
      cwd, encoding: 'utf8', timeout: 120000, env: { ...process.env, XDG_CACHE_HOME: path.join(dir, '.cache') },
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  function validator() {
    const require = createRequire(import.meta.url);
    const Ajv = require('ajv').default;
    const addFormats = require('ajv-formats').default;
    const schema = JSON.parse(readFileSync(path.join(REPO_ROOT, 'e2e', 'testdata', 'sarif-2.1.0-rtm.5.json'), 'utf8'));
    // As e2e/reports.test.mjs: the draft-04 schema read as draft-07, rtm.5's stray ']' accepted.
    delete schema.$schema;
    schema.$id = schema.id;
    delete schema.id;
    const ajv = new Ajv({ strict: false, allErrors: true, unicodeRegExp: false });
    addFormats(ajv);
    return ajv.compile(schema);
  }

  test('check --sarif lists the imported warnings in their own files, schema-valid', () => {
    const r = run(['check', 'warnings/main.ko', '--sarif']);
    assert.equal(r.code, 0, r.stderr);
    const log = JSON.parse(r.stdout);
    const validate = validator();
    assert.ok(validate(log), JSON.stringify(validate.errors, null, 2));
    const env = JSON.parse(run(['check', 'warnings/main.ko', '--json-errors']).stdout);
    const results = log.runs[0].results;
    const artifacts = log.runs[0].artifacts;
    assert.equal(env.warnings.length, 2);
    assert.equal(results.length, env.warnings.length);
    assert.equal(artifacts[0].location.uri, 'warnings/main.ko');
    results.forEach((res, i) => {
      const w = env.warnings[i];
      assert.equal(res.ruleId, w.code);
      assert.equal(res.level, 'warning');
      assert.equal(res.message.text, w.message);
      const loc = res.locations[0].physicalLocation;
      assert.equal(loc.artifactLocation.uri, w.span.file);
      assert.equal(artifacts[loc.artifactLocation.index].location.uri, w.span.file);
      assert.equal(loc.region.startLine, w.span.line);
      assert.equal(loc.region.startColumn, w.span.column);
      assert.equal(loc.region.byteOffset, w.span.start);
    });
    assert.deepEqual(results.map((res) => res.locations[0].physicalLocation.artifactLocation.uri).sort(),
      ['warnings/limits.ko', 'warnings/tasks.ko']);
  });

  test('run, mir, build and test print the imported warnings on stderr as check does', { timeout: 180000 }, () => {
    const check = run(['check', 'main.ko'], path.join(dir, 'warnings'));
    assert.equal(check.code, 0, check.stderr);
    assert.match(check.stderr, /warning\[W0901\][^\n]*\n\s*--> limits\.ko:4:9/);
    assert.match(check.stderr, /--> tasks\.ko:5:/);
    const ran = run(['run', 'main.ko'], path.join(dir, 'warnings'));
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ran.stdout, '5\n');
    assert.equal(ran.stderr, check.stderr);
    const mir = run(['mir', 'main.ko'], path.join(dir, 'warnings'));
    assert.equal(mir.code, 0, mir.stderr);
    assert.equal(mir.stderr, check.stderr);
    const built = run(['build', 'main.ko', '-o', 'prog'], path.join(dir, 'warnings'));
    assert.equal(built.code, 0, built.stderr);
    assert.equal(built.stderr, check.stderr);
    const exe = spawnSync(path.join(dir, 'warnings', 'prog'), [], { encoding: 'utf8' });
    assert.equal(exe.stdout, '5\n');
    assert.equal(exe.stderr, '');
    const tested = run(['test', 'tested.ko'], path.join(dir, 'warnings'));
    assert.equal(tested.code, 0, tested.stderr);
    assert.match(tested.stdout, /test clamps \.\.\. ok/);
    assert.match(tested.stderr, /^warning\[W0901\][^\n]*\n\s*--> limits\.ko:4:9/);
  });

  test('util::f and util.f are typed against util\'s f, not the importer\'s', () => {
    const ok = run(['run', 'main.ko'], path.join(dir, 'qualified'));
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stderr, '');
    assert.equal(ok.stdout, readFileSync(path.join(dir, 'qualified', 'stdout.txt'), 'utf8'));
    const bad = run(['check', '--json-errors', path.join(REPO_ROOT, 'testdata', 'kodo', 'check', 'e0200_qualified_calls', 'main.ko')]);
    assert.equal(bad.code, 1);
    const errors = JSON.parse(bad.stdout).errors;
    assert.deepEqual(errors.map((e) => [e.code, e.span.line]),
      [['E0200', 19], ['E0200', 23], ['E0200', 27], ['E0200', 31], ['E0202', 35]]);
  });
});
