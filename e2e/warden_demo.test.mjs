// `warden demo` end to end (docs/warden.md §10.3; issue 19): the seven steps offline, run twice
// (in two directories, and once more in a temporary one) with byte-identical stdout; coverage
// after every step, 100 % after both agent passes with the placeholders counted apart, and the
// v1 -> v2 changelog with the planted edits. A directory that already holds a project is
// refused (exit 2). The KB it leaves behind is a real one: `coverage --json`, `versions` and
// `show` read it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD_DIR } from './lib/env.mjs';

const WARDEN = path.join(BUILD_DIR, 'src', 'warden', 'cli', 'warden');

function warden(args, options = {}) {
  const r = spawnSync(WARDEN, args, { encoding: 'utf8', timeout: 120000, ...options });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('warden demo: seven steps, byte-identical between runs, exit 0; a used directory is refused', () => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'warden-demo-e2e-'));
  try {
    const a = warden(['demo', '--dir', 'first'], { cwd: scratch });
    assert.equal(a.code, 0, `${a.stdout}\n${a.stderr}`);
    // Same relative --dir text from another working directory: the same bytes.
    const b = warden(['demo', '--dir', path.join('..', path.basename(scratch), 'first2')], { cwd: scratch });
    assert.equal(b.code, 0, b.stderr);
    const tmp = warden(['demo'], { cwd: scratch, env: { ...process.env, TMPDIR: scratch } });
    assert.equal(tmp.code, 0, tmp.stderr);
    assert.match(tmp.stderr, /^warden demo: working in .*warden-demo-[A-Za-z0-9]{6}\n$/);
    // Byte-identical apart from the directory line of step 1, which names what was given.
    const strip = (s) => s.replace(/^== step 1: create a KB in .*$/m, '== step 1');
    assert.equal(strip(b.stdout), strip(a.stdout));
    assert.equal(strip(tmp.stdout), strip(a.stdout));
    const again = warden(['demo', '--dir', 'first'], { cwd: scratch });
    assert.equal(again.code, 2);
    assert.match(again.stderr, /^warden: error: demo: first already holds a WARDEN project/);
    const c = warden(['demo', '--dir', 'third'], { cwd: scratch });
    assert.equal(c.stdout, a.stdout.replace('create a KB in first', 'create a KB in third'));

    const out = a.stdout;
    for (let step = 1; step <= 7; ++step) assert.match(out, new RegExp(`^== step ${step}: `, 'm'));
    const cov = [...out.matchAll(/^coverage (v\d): (\d+)\/(\d+) named \((\d+\.\d) %\).*placeholders \(sub_<hex>\) (\d+), real names (\d+\.\d) %$/gm)];
    assert.equal(cov.length, 6, out);  // steps 2-7
    const [s2, s3, s4, s5, s6, s7] = cov.map((m) => ({ v: m[1], named: +m[2], defined: +m[3], pct: m[4], ph: +m[5], real: m[6] }));
    assert.ok(s2.named < s3.named && s3.named < s4.named, out);
    assert.equal(s4.pct, '100.0');
    assert.equal(s7.pct, '100.0');
    assert.equal(s5.v, 'v2');
    assert.ok(s5.named < s6.named && s6.named < s7.named, out);
    // 100 % does not hide the placeholders: some remain, and the real figure says so.
    assert.ok(s4.ph > 0 && s4.real !== '100.0', out);
    assert.equal(s4.named, s4.defined);
    // The changelog: one modified, one new, one deleted, the carried name, and the carry line.
    assert.match(out, /^# v1 → v2/m);
    assert.match(out, /^## Modified/m);
    assert.match(out, /^## New/m);
    assert.match(out, /^## Deleted/m);
    assert.match(out, /^Carried 1 names to v2 /m);
    assert.match(out, /oracle \(stand-in until `warden oracle` is merged\)|\$ warden oracle identify/);
    assert.match(out, /\ndemo: ok, all 7 steps ended as expected\n$/);
    assert.doesNotMatch(out, /deviation/);

    // The KB left behind is an ordinary one.
    const db = path.join(scratch, 'first', '.warden', 'warden.db');
    const j = JSON.parse(warden(['coverage', 'v2', '--json', '--db', db]).stdout);
    assert.equal(j.named, j.defined);
    assert.equal(j.placeholder_named + j.real_named, j.named);
    assert.ok(j.placeholder_named > 0);
    assert.equal(j.real_coverage_pct, (100 * j.real_named) / j.defined);
    assert.deepEqual(j.producers, {});
    assert.deepEqual(j.target_features, []);
    const text = warden(['coverage', 'v2', '--db', db]).stdout;
    assert.match(text, new RegExp(`^placeholders ${j.placeholder_named} \\(sub_<hex>, counted in named\\)$`, 'm'));
    assert.match(text, /^real names +\d+ \(\d+\.\d %\)$/m);
    const show = JSON.parse(warden(['show', 'strlen', '--version', 'v1', '--json', '--db', db]).stdout);
    assert.equal(show.symbol.provenance, 'oracle');
    assert.deepEqual(show.module, { producers: {}, target_features: [] });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});
