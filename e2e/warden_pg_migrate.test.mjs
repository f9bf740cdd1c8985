// `warden kb migrate` both ways and `config set kb.url` (docs/warden.md §2.1, §2.2, decision
// 0091): a KB with every provenance (seeds, human and agent names, a diff with carried names)
// copied SQLite -> PostgreSQL -> SQLite gives the same exports in every format and the same
// --json views, byte for byte, at each step; a target that is not empty is refused (exit 2)
// and left as it was; kb.url in the global or project config makes the CLI and `warden mcp` use
// the PostgreSQL KB without --db, and `config get kb.url` never prints the password.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BUILD_DIR, REPO_ROOT } from './lib/env.mjs';
import { startPgScratch } from './lib/pg.mjs';

const WARDEN = path.join(BUILD_DIR, 'src', 'warden', 'cli', 'warden');
const FIXTURES = path.join(REPO_ROOT, 'testdata', 'warden', 'fixtures');

let dir;
let xdg;
let pg;

// Every run gets a private global config (XDG_CONFIG_HOME) so that kb.url set here is the only
// one in play.
function warden(args, { cwd } = {}) {
  const r = spawnSync(WARDEN, args, {
    encoding: 'utf8', timeout: 120000, cwd: cwd ?? dir,
    env: { ...process.env, XDG_CONFIG_HOME: xdg, HOME: xdg },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function ok(args, opts) {
  const r = warden(args, opts);
  assert.equal(r.code, 0, `warden ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

// What a KB shows: every export format of every version and the --json views.
function views(db) {
  const out = {};
  const versions = JSON.parse(ok(['versions', '--json', '--db', db]));
  out.versions = ok(['versions', '--json', '--db', db]);
  for (const v of versions.versions ?? versions) {
    const label = v.label;
    for (const format of ['headers', 'pseudo', 'kb-text', 'ghidra']) {
      out[`export ${label} ${format}`] = ok(['export', label, '--format', format, '--db', db]);
    }
    out[`coverage ${label}`] = ok(['coverage', label, '--json', '--db', db]);
    const funcs = ok(['funcs', label, '--imports', '--json', '--db', db]);
    out[`funcs ${label}`] = funcs;
    const rows = JSON.parse(funcs);
    // `show` of every function would cost a process each (minutes): every written symbol
    // (human, agent, diff-carry) and every eighth function besides.
    const all = rows.functions ?? rows;
    const shown = all.filter((f, i) => i % 8 === 0 || ['human', 'agent', 'diff-carry'].includes(f.provenance));
    for (const f of shown) {
      out[`show ${label} ${f.index}`] = ok(['show', String(f.index), '--version', label, '--json', '--db', db]);
    }
  }
  return out;
}

before(() => {
  assert.ok(existsSync(WARDEN), `warden binary not found: ${WARDEN}`);
  dir = mkdtempSync(path.join(os.tmpdir(), 'warden-pg-migrate-e2e-'));
  xdg = path.join(dir, 'xdg');
  mkdirSync(xdg, { recursive: true });
  pg = startPgScratch();
  for (const db of ['mid', 'busy', 'cfg']) pg.createDb(db);
});
after(() => {
  if (pg) pg.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('SQLite -> PostgreSQL -> SQLite keeps every export and view byte for byte', () => {
  const a = path.join(dir, 'a.db');
  ok(['ingest', path.join(FIXTURES, 'app-O2.wasm'), '--glue', path.join(FIXTURES, 'app-O2.js'), '--label', 'v1', '--db', a]);
  ok(['ingest', path.join(FIXTURES, 'app-O0.wasm'), '--label', 'v2', '--db', a]);
  // Human names (set-name) and agent names (the offline backend), then a diff with carry-over.
  const funcs = JSON.parse(ok(['funcs', 'v1', '--json', '--db', a]));
  const rows = funcs.functions ?? funcs;
  assert.ok(rows.length >= 3, JSON.stringify(rows));
  ok(['set-name', String(rows[0].index), 'human_named_one', '--version', 'v1', '--summary', 'set by a human', '--db', a]);
  ok(['set-name', String(rows[1].index), 'to_be_cleared', '--version', 'v1', '--db', a]);
  ok(['set-name', String(rows[1].index), '--clear', '--version', 'v1', '--db', a]);
  ok(['agent', 'v1', '--backend', 'offline', '--db', a]);
  ok(['diff', 'v1', 'v2', '--carry', '--db', a]);
  const before = views(a);
  assert.ok(Object.keys(before).length > 10);
  assert.match(before['export v1 kb-text'], /human_named_one/);

  // Into PostgreSQL.
  const mid = pg.urlFor('mid');
  const toPg = JSON.parse(ok(['kb', 'migrate', '--to', mid, '--json', '--db', a]));
  assert.equal(toPg.counts_match, true);
  for (const t of ['meta', 'module_versions', 'functions', 'symbols', 'evidence', 'diffs']) {
    assert.ok(toPg.tables[t], t);
    assert.equal(toPg.tables[t].source, toPg.tables[t].target, t);
  }
  assert.ok(toPg.tables.diffs.target >= 1);
  assert.ok(toPg.tables.evidence.target > 3);
  const onPg = views(mid);
  for (const [k, v] of Object.entries(before)) assert.equal(onPg[k], v, `on PostgreSQL: ${k}`);

  // Back into a new SQLite file: written beside it, renamed into place.
  const b = path.join(dir, 'back', 'b.db');
  mkdirSync(path.dirname(b));
  const text = ok(['kb', 'migrate', '--to', b, '--db', mid]);
  assert.match(text, /row counts match/);
  assert.match(text, /^migrated .* to .*b\.db in one transaction$/m);
  assert.deepEqual(readdirSync(path.dirname(b)), ['b.db']);  // no temporary file left
  const after = views(b);
  for (const [k, v] of Object.entries(before)) assert.equal(after[k], v, `after the round trip: ${k}`);
  assert.deepEqual(Object.keys(after).sort(), Object.keys(before).sort());
});

test('a target that is not empty is refused and left as it was', () => {
  const a = path.join(dir, 'busy-src.db');
  ok(['ingest', path.join(FIXTURES, 'app-Oz.wasm'), '--db', a]);
  const busy = pg.urlFor('busy');
  ok(['ingest', path.join(FIXTURES, 'app-O2.wasm'), '--db', busy]);
  const beforePg = views(busy);
  let r = warden(['kb', 'migrate', '--to', busy, '--db', a]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^warden: error: kb migrate .* -> postgresql:\/\/.*: the target KB is not empty \(it holds 1 version, /);
  assert.deepEqual(views(busy), beforePg);

  // The same for a SQLite file; a file that is not a WARDEN KB is exit 3 and untouched.
  const other = path.join(dir, 'other.db');
  ok(['ingest', path.join(FIXTURES, 'app-O0.wasm'), '--db', other]);
  const size = statSync(other).size;
  r = warden(['kb', 'migrate', '--to', other, '--db', a]);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(statSync(other).size, size);
  const junk = path.join(dir, 'junk.db');
  spawnSync('sh', ['-c', `printf 'not a database' > '${junk}'`]);
  r = warden(['kb', 'migrate', '--to', junk, '--db', a]);
  assert.equal(r.code, 3, r.stderr);
  assert.equal(statSync(junk).size, 'not a database'.length);
  // Into itself: a usage error.
  r = warden(['kb', 'migrate', '--to', a, '--db', a]);
  assert.equal(r.code, 2, r.stderr);
});

test('init --db URL: a project whose config names the team database', () => {
  const url = pg.urlFor('team');
  pg.createDb('team');
  const project = mkdtempSync(path.join(dir, 'team-'));
  const first = warden(['init', '--project', 'team', '--db', url], { cwd: project });
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /^initialized WARDEN project 'team' in \.warden\/ \(KB at postgresql:/);
  assert.ok(!existsSync(path.join(project, '.warden', 'warden.db')));
  assert.equal(ok(['config', 'get', 'kb.url', '--project'], { cwd: project }).trim(), url);
  assert.equal(warden(['init', '--db', url], { cwd: project }).stdout, 'already initialized\n');
  // Commands in the project use the database without --db.
  ok(['ingest', path.join(FIXTURES, 'app-O0.wasm'), '--label', 'teamv1'], { cwd: project });
  const versions = JSON.parse(ok(['versions', '--json', '--db', url]));
  assert.equal((versions.versions ?? versions)[0].label, 'teamv1');
  // A file is not what init --db takes.
  const other = mkdtempSync(path.join(dir, 'file-'));
  assert.equal(warden(['init', '--db', path.join(other, 'x.db')], { cwd: other }).code, 2);
  assert.ok(!existsSync(path.join(other, '.warden')));
});

test('config set kb.url: the CLI and warden mcp use the PostgreSQL KB without --db', async () => {
  const url = pg.urlFor('cfg');
  const src = path.join(dir, 'cfg-src.db');
  ok(['ingest', path.join(FIXTURES, 'app-O2.wasm'), '--label', 'shared', '--db', src]);
  ok(['kb', 'migrate', '--to', url, '--db', src]);
  const work = mkdtempSync(path.join(dir, 'work-'));
  assert.equal(warden(['versions'], { cwd: work }).code, 3);  // nothing found yet

  // A non-URL value is a usage error; the global config then names the KB.
  assert.equal(warden(['config', 'set', 'kb.url', '/tmp/kb.db']).code, 2);
  ok(['config', 'set', 'kb.url', url]);
  assert.equal(ok(['config', 'get', 'kb.url']).trim(), url);
  const versions = JSON.parse(ok(['versions', '--json'], { cwd: work }));
  assert.equal((versions.versions ?? versions)[0].label, 'shared');
  const cfgFuncs = JSON.parse(ok(['funcs', '--json'], { cwd: work }));
  const first = (cfgFuncs.functions ?? cfgFuncs)[0];
  ok(['set-name', String(first.index), 'named_via_config'], { cwd: work });
  assert.match(ok(['export', 'shared', '--format', 'kb-text', '--db', url]), /named_via_config/);

  // `warden mcp` finds it too.
  const client = new Client({ name: 'warden-e2e-pg-migrate', version: '0.0.0' });
  await client.connect(new StdioClientTransport({
    command: WARDEN, args: ['mcp'], cwd: work, stderr: 'pipe',
    env: { ...process.env, XDG_CONFIG_HOME: xdg, HOME: xdg },
  }));
  try {
    const listed = await client.callTool({ name: 'list_versions', arguments: {} });
    assert.notEqual(listed.isError, true, JSON.stringify(listed));
    assert.match(JSON.stringify(listed.structuredContent), /"label":"shared"/);
  } finally {
    await client.close();
  }

  // A project's kb.url wins over the global one; its password is never printed.
  const project = mkdtempSync(path.join(dir, 'proj-'));
  mkdirSync(path.join(project, '.warden'));
  const withPassword = pg.tcpUrl.replace('trove@', `trove:${encodeURIComponent(pg.password)}@`)
    .replace('/trove?', '/busy?');
  ok(['config', 'set', 'kb.url', withPassword, '--project'], { cwd: project });
  const shown = ok(['config', 'get', 'kb.url', '--project'], { cwd: project });
  assert.ok(!shown.includes(pg.password), shown);
  assert.match(shown, /^postgresql:\/\/trove:\*\*\*@127\.0\.0\.1:/);
  const inProject = JSON.parse(ok(['versions', '--json'], { cwd: project }));
  assert.notEqual((inProject.versions ?? inProject)[0].label, 'shared');
  // --db still wins over both.
  const flagged = JSON.parse(ok(['versions', '--json', '--db', src], { cwd: project }));
  assert.equal((flagged.versions ?? flagged)[0].label, 'shared');
});
