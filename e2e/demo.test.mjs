// The demo (e2e/demo.mjs, what scripts/demo runs after the build) as a test: it exits 0 and prints
// one "ok" summary line per server (WARDEN, Kōdo, Librarian) and the total.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { NODE22, REPO_ROOT } from './lib/env.mjs';

test('the demo runs each server end to end and reports three ok lines', { timeout: 400000 }, async (t) => {
  const run = await new Promise((resolve) => {
    execFile(NODE22, [path.join(REPO_ROOT, 'e2e', 'demo.mjs')], {
      cwd: REPO_ROOT, timeout: 390000, maxBuffer: 16 * 1024 * 1024,
    }, (error, stdout, stderr) => resolve({ code: error ? error.code : 0, signal: error?.signal, stdout, stderr }));
  });
  const out = `${run.stdout}\n${run.stderr}`;
  const summary = run.stdout.split('\n').slice(run.stdout.split('\n').indexOf('== summary'));
  for (const line of summary) if (line) t.diagnostic(line);
  assert.equal(run.code, 0, `demo exited ${run.code}${run.signal ? ` (${run.signal})` : ''}:\n${out.slice(-4000)}`);
  assert.match(run.stdout, /^WARDEN: ok, \d+\/\d+ functions named .*human name kept against the agent, 4 exports written/m);
  assert.match(run.stdout, /^Kōdo: ok, \d+ errors repaired by \d+ kodo\.fix patches .*the program checks clean/m);
  assert.match(run.stdout, /^Librarian: ok, \d+ files indexed .* 3 intents answered with packs and evidence/m);
  assert.match(run.stdout, /^demo: 3 of 3 servers ok in \d+\.\d s \(after the build\)$/m);
  assert.doesNotMatch(run.stdout, /FAILED/);
});
