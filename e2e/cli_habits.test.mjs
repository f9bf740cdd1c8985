// Terminal habits of every command line (issue 24): progress only when stderr is a terminal,
// no colour under NO_COLOR or without a terminal, and every error line starting with the
// program's name. Commands run as a pipeline or a script would run them (stdout and stderr
// pipes), and, through util-linux's `script`, on a pseudo-terminal.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD_DIR, REPO_ROOT } from './lib/env.mjs';

const WARDEN = path.join(BUILD_DIR, 'src', 'warden', 'cli', 'warden');
const KODOC = path.join(BUILD_DIR, 'src', 'kodo', 'cli', 'kodoc');
const KODO_MCP = path.join(BUILD_DIR, 'src', 'kodo', 'cli', 'kodo-mcp');
const LIBRARIAN = path.join(BUILD_DIR, 'src', 'librarian', 'cli', 'librarian');
const EVAL = path.join(BUILD_DIR, 'src', 'librarian', 'eval', 'librarian_eval');
const FIXTURE = path.join(REPO_ROOT, 'testdata', 'warden', 'fixtures', 'app-O2.wasm');
const ESC = '\x1b';

let dir;
before(() => { dir = mkdtempSync(path.join(os.tmpdir(), 'trove-habits-')); });
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

function run(bin, args, env = {}, cwd = dir) {
  const r = spawnSync(bin, args, { encoding: 'utf8', timeout: 120000, cwd, env: { ...process.env, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

// Every line that says "error" starts with "<program>: error: ".
function assertErrorLines(program, stderr) {
  const lines = stderr.split('\n').filter((l) => /error/i.test(l));
  assert.ok(lines.length > 0, `${program}: no error line in ${JSON.stringify(stderr)}`);
  for (const line of lines) assert.ok(line.startsWith(`${program}: error: `), `${program}: ${JSON.stringify(line)}`);
}

const haveScript = spawnSync('sh', ['-c', 'command -v script'], { encoding: 'utf8' }).status === 0;
// Runs `bin args` with a pseudo-terminal as stdin, stdout and stderr; returns what it printed.
function onTerminal(bin, args, env = {}) {
  const quoted = [bin, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  const r = spawnSync('script', ['-qec', quoted, '/dev/null'], {
    encoding: 'utf8', timeout: 120000, cwd: dir, env: { ...process.env, TERM: 'xterm', ...env },
  });
  return { code: r.status, out: r.stdout };
}

describe('without a terminal, under NO_COLOR', () => {
  test('warden ingest, coverage, verify and report print no progress and no escape', () => {
    const db = path.join(dir, 'kb.db');
    const wasm = path.join(dir, 'app.wasm');
    copyFileSync(FIXTURE, wasm);
    for (const args of [['ingest', wasm, '--db', db], ['coverage', '--db', db], ['verify', wasm],
      ['report', '--html', path.join(dir, 'r.html'), '--db', db], ['export', 'v1', '--format', 'headers', '--db', db]]) {
      for (const env of [{ NO_COLOR: '1' }, { NO_COLOR: '' }]) {
        const r = run(WARDEN, args, env);
        assert.equal(r.code, 0, `warden ${args[0]}: ${r.stderr}`);
        assert.equal(r.stderr, '', `warden ${args[0]} wrote to a piped stderr: ${JSON.stringify(r.stderr)}`);
        assert.ok(!r.stdout.includes(ESC), `warden ${args[0]}: an escape sequence on a pipe`);
      }
    }
  });

  test('librarian bootstrap prints no progress to a pipe', () => {
    const ws = path.join(dir, 'ws');
    mkdirSync(ws);
    for (let i = 0; i < 5; i++) writeFileSync(path.join(ws, `f${i}.js`), `function f${i}() { return ${i}; }\n`);
    const r = run(LIBRARIAN, ['bootstrap', ws, '--ctags', ''], { NO_COLOR: '1' });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.ok(!r.stdout.includes(ESC));
  });

  test('kodoc check prints diagnostics without colour', () => {
    writeFileSync(path.join(dir, 'bad.ko'), 'module bad {\n    meta { purpose: "x" }\n    fn main() -> Int {\n        return true\n    }\n}\n');
    const r = run(KODOC, ['check', 'bad.ko'], { NO_COLOR: '1' });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error\[E0200\]: /, 'a diagnostic, not a program error');
    assert.ok(!r.stderr.includes(ESC) && !r.stdout.includes(ESC));
  });
});

describe('error lines start with the program name', () => {
  test('warden', () => {
    assertErrorLines('warden', run(WARDEN, ['coverage', '--db', path.join(dir, 'none', 'kb.db')]).stderr);
    assertErrorLines('warden', run(WARDEN, ['coverage', '--no-such-flag']).stderr);
    assertErrorLines('warden', run(WARDEN, ['frobnicate']).stderr);
    assertErrorLines('warden', run(WARDEN, ['report']).stderr);  // --html is required
  });
  test('kodoc and kodo-mcp', () => {
    assertErrorLines('kodoc', run(KODOC, ['check', 'missing.ko']).stderr);
    assertErrorLines('kodoc', run(KODOC, ['check', '--no-such-flag']).stderr);
    assertErrorLines('kodoc', run(KODOC, ['check', 'x.ko', '--sarif', '--json-errors']).stderr);
    assertErrorLines('kodo-mcp', run(KODO_MCP, ['--no-such-flag']).stderr);
  });
  test('librarian and librarian_eval', () => {
    assertErrorLines('librarian', run(LIBRARIAN, ['query', dir, 'anything']).stderr);
    assertErrorLines('librarian', run(LIBRARIAN, ['bootstrap', '--no-such-flag']).stderr);
    assertErrorLines('librarian_eval', run(EVAL, ['run', '--no-such-flag', 'x']).stderr);
  });
});

describe('on a terminal', { skip: haveScript ? false : 'util-linux script is not installed' }, () => {
  test('warden ingest shows progress on a terminal, and NO_COLOR keeps colour off', () => {
    const db = path.join(dir, 'tty.db');
    const wasm = path.join(dir, 'tty.wasm');
    copyFileSync(FIXTURE, wasm);
    const r = onTerminal(WARDEN, ['ingest', wasm, '--db', db], { NO_COLOR: '1' });
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /\r\x1b\[K\[[#.]+\]/, 'no progress bar on a terminal');
    assert.doesNotMatch(r.out, /\x1b\[[0-9;]*m/, 'a colour under NO_COLOR');
    assert.match(r.out, /ingested v1 \(id 1\)/);
  });

  test('warden diff shows its steps on a terminal and nothing on a pipe', () => {
    const db = path.join(dir, 'diff.db');
    const other = path.join(REPO_ROOT, 'testdata', 'warden', 'fixtures', 'app-Oz.wasm');
    for (const wasm of [other, FIXTURE]) assert.equal(run(WARDEN, ['ingest', wasm, '--db', db]).code, 0);
    const piped = run(WARDEN, ['diff', 'v1', 'v2', '--carry', '--db', db], { NO_COLOR: '1' });
    assert.equal(piped.code, 0, piped.stderr);
    assert.equal(piped.stderr, '', `warden diff wrote to a piped stderr: ${JSON.stringify(piped.stderr)}`);
    const r = onTerminal(WARDEN, ['diff', 'v1', 'v2', '--carry', '--db', db], { NO_COLOR: '1' });
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /\r\x1b\[K\[[#.]+\] +\d+% carrying names/, 'no progress bar on a terminal');
    assert.doesNotMatch(r.out, /\x1b\[[0-9;]*m/, 'a colour under NO_COLOR');
    assert.match(r.out, /# v1 → v2/);
  });
});
