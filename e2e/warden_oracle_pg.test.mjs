// The WARDEN Oracle store on PostgreSQL end to end (docs/warden.md §8.1, decision 0083): a
// scratch server (scripts/pg_scratch), `warden oracle build --store postgresql://...`, then
// `oracle identify` against it giving the same matches as against a SQLite store built from the
// same fixture; identify_runtime over MCP with `oracle.store` set to the URL in the project
// config; a password URL never printed; a server that is down is exit 3.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BUILD_DIR, REPO_ROOT } from './lib/env.mjs';
import { startPgScratch } from './lib/pg.mjs';

const WARDEN = path.join(BUILD_DIR, 'src', 'warden', 'cli', 'warden');
const FIXTURES = path.join(REPO_ROOT, 'testdata', 'warden', 'fixtures');

function warden(args) {
  const r = spawnSync(WARDEN, args, { encoding: 'utf8', timeout: 120000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

let dir;
let pg;

before(() => {
  assert.ok(existsSync(WARDEN), `warden binary not found: ${WARDEN}`);
  dir = mkdtempSync(path.join(os.tmpdir(), 'warden-oracle-pg-e2e-'));
  pg = startPgScratch();
  pg.createDb('oracle');
});
after(() => {
  if (pg) pg.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('oracle build into PostgreSQL, then identify matches as a SQLite store does', () => {
  const url = pg.urlFor('oracle');
  const sqlite = path.join(dir, 'oracle.db');
  const buildArgs = [path.join(FIXTURES, 'app-O2-named.wasm'), '--library', 'app',
    '--emscripten-version', '3.1.6', '--opt-level', 'O2'];
  let r = warden(['oracle', 'build', ...buildArgs, '--store', url, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const built = JSON.parse(r.stdout);
  assert.ok(built.added > 0, r.stdout);
  r = warden(['oracle', 'build', ...buildArgs, '--store', sqlite, '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).added, built.added);
  // Again into PostgreSQL: every signature is a duplicate.
  r = warden(['oracle', 'build', ...buildArgs, '--store', url, '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).added, 0);
  assert.equal(JSON.parse(r.stdout).duplicates, built.added);

  const db = path.join(dir, 'kb.db');
  r = warden(['ingest', path.join(FIXTURES, 'app-O2.wasm'), '--db', db]);
  assert.equal(r.code, 0, r.stderr);
  const fromPg = warden(['oracle', 'identify', '--db', db, '--store', url, '--dry-run', '--json']);
  assert.equal(fromPg.code, 0, fromPg.stderr);
  const fromSqlite = warden(['oracle', 'identify', '--db', db, '--store', sqlite, '--dry-run', '--json']);
  assert.equal(fromSqlite.code, 0, fromSqlite.stderr);
  const a = JSON.parse(fromPg.stdout);
  const b = JSON.parse(fromSqlite.stdout);
  assert.ok(a.matched > 0, fromPg.stdout);
  assert.deepEqual(a.matches, b.matches);
  assert.equal(a.store.signatures, b.store.signatures);
  assert.equal(a.store.path, url);

  // Written through the gate from the PostgreSQL store.
  r = warden(['oracle', 'identify', '--db', db, '--store', url, '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(JSON.parse(r.stdout).written > 0, r.stdout);
});

test('a password in the URL is never printed, and a server that is down is exit 3', () => {
  // TCP with the password in the URL: it works, and no output shows it.
  const withPassword = pg.tcpUrl.replace('trove@', `trove:${encodeURIComponent(pg.password)}@`)
    .replace('/trove?', '/oracle?');
  let r = warden(['oracle', 'build', path.join(FIXTURES, 'app-Oz-named.wasm'), '--store', withPassword, '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!r.stdout.includes(pg.password) && !r.stderr.includes(pg.password), r.stdout);
  assert.match(JSON.parse(r.stdout).store, /^postgresql:\/\/trove:\*\*\*@127\.0\.0\.1:/);

  // No server on port 1: a clear error, exit 3, no password.
  const down = 'postgresql://trove:hunter2-secret@127.0.0.1:1/oracle?connect_timeout=2';
  r = warden(['oracle', 'build', path.join(FIXTURES, 'app-Oz-named.wasm'), '--store', down]);
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.stderr, /cannot connect/);
  assert.ok(!r.stderr.includes('hunter2-secret'), r.stderr);
  // The same for a KB on that server, through the CLI and `warden mcp`.
  const downKb = down.replace('/oracle?', '/kb?');
  r = warden(['--db', downKb, 'versions']);
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.stderr, /cannot connect/);
  assert.ok(!r.stderr.includes('hunter2-secret'), r.stderr);
  r = warden(['mcp', '--db', downKb]);
  assert.equal(r.code, 3, r.stderr);
  assert.ok(!r.stderr.includes('hunter2-secret'), r.stderr);
  const db = path.join(dir, 'kb.db');
  r = warden(['oracle', 'identify', '--db', db, '--store', down]);
  assert.equal(r.code, 3, r.stderr);
  assert.ok(!r.stderr.includes('hunter2-secret'), r.stderr);
});

test('identify_runtime over MCP reads the PostgreSQL store named by oracle.store', async () => {
  const project = mkdtempSync(path.join(dir, 'mcp-'));
  const db = path.join(project, 'kb.db');
  let r = warden(['ingest', path.join(FIXTURES, 'app-O2.wasm'), '--db', db]);
  assert.equal(r.code, 0, r.stderr);
  const url = pg.urlFor('oracle');
  mkdirSync(path.join(project, '.warden'), { recursive: true });
  writeFileSync(path.join(project, '.warden', 'config.json'), JSON.stringify({ 'oracle.store': url }));
  const client = new Client({ name: 'warden-e2e-oracle-pg', version: '0.0.0' });
  await client.connect(new StdioClientTransport({ command: WARDEN, args: ['mcp', '--db', db], stderr: 'pipe' }));
  try {
    const dry = await client.callTool({ name: 'identify_runtime', arguments: { version_id: 1 } });
    assert.notEqual(dry.isError, true, JSON.stringify(dry));
    assert.equal(dry.structuredContent.store.path, url);
    assert.ok(dry.structuredContent.matched > 0, JSON.stringify(dry.structuredContent));
  } finally {
    await client.close();
  }
});
