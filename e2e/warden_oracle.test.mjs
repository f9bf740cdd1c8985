// The WARDEN Oracle end to end (docs/warden.md §2.2, §3.2, §8): `warden oracle build` on a named
// fixture, `warden oracle identify` (dry run, --json) on its stripped twin, then the MCP tool
// identify_runtime through the official SDK client — a dry run by default, writing on request —
// and get_function_facts reporting the match behind an Oracle name.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BUILD_DIR, REPO_ROOT } from './lib/env.mjs';

const WARDEN = path.join(BUILD_DIR, 'src', 'warden', 'cli', 'warden');
const FIXTURES = path.join(REPO_ROOT, 'testdata', 'warden', 'fixtures');

function warden(args) {
  const r = spawnSync(WARDEN, args, { encoding: 'utf8', timeout: 60000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

let dir;
let db;
let store;

before(() => {
  assert.ok(existsSync(WARDEN), `warden binary not found: ${WARDEN}`);
  dir = mkdtempSync(path.join(os.tmpdir(), 'warden-oracle-e2e-'));
  db = path.join(dir, 'kb.db');
  // Where `warden mcp --db kb.db` looks for the store: the KB's project .warden/.
  store = path.join(dir, '.warden', 'oracle.db');
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

test('oracle build, identify --dry-run and identify through the CLI', () => {
  let r = warden(['oracle', 'build', path.join(FIXTURES, 'app-O2-named.wasm'), '--store', store,
    '--library', 'app', '--emscripten-version', '3.1.6', '--opt-level', 'O2']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^added [1-9][\d,]* signatures \(\d+ unnamed skipped, \d+ below minimum size, 0 duplicates\)\n$/);
  // Again: every signature is a duplicate, nothing is added.
  r = warden(['oracle', 'build', path.join(FIXTURES, 'app-O2-named.wasm'), '--store', store,
    '--library', 'app', '--emscripten-version', '3.1.6', '--opt-level', 'O2']);
  assert.match(r.stdout, /^added 0 signatures \(\d+ unnamed skipped, \d+ below minimum size, [1-9]\d* duplicates\)\n$/);
  // A malformed module is exit 4 with the offset.
  r = warden(['oracle', 'build', path.join(FIXTURES, 'MANIFEST'), '--store', store]);
  assert.equal(r.code, 4, r.stderr);
  assert.match(r.stderr, /malformed wasm/);

  r = warden(['ingest', path.join(FIXTURES, 'app-O2.wasm'), '--glue', path.join(FIXTURES, 'app-O2.js'), '--db', db]);
  assert.equal(r.code, 0, r.stderr);
  r = warden(['oracle', 'identify', '--db', db, '--store', store, '--dry-run', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const dry = JSON.parse(r.stdout);
  assert.equal(dry.dry_run, true);
  assert.equal(dry.written, 0);
  assert.ok(dry.matched > 0, JSON.stringify(dry));
  assert.equal(dry.emscripten, true);
  // The 3.1.6 glue states no version, so the vote over exact and norm hits decides.
  assert.equal(dry.emscripten_version.source, 'oracle-vote');
  assert.equal(dry.emscripten_version.version, '3.1.6');
  assert.equal(dry.emscripten_version.stored, false, 'a dry run stored the version');
  const cov = JSON.parse(warden(['coverage', '--db', db, '--json']).stdout);
  assert.equal(cov.oracle_named, 0, 'a dry run wrote names');

  // A missing store is exit 3 and says how to build one.
  r = warden(['oracle', 'identify', '--db', db, '--store', path.join(dir, 'none.db')]);
  assert.equal(r.code, 3);
  assert.match(r.stderr, /no Oracle store at .*warden oracle build/);
  assert.ok(!existsSync(path.join(dir, 'none.db')), 'identify created a store');
  // An unknown version is exit 6.
  assert.equal(warden(['oracle', 'identify', 'v9', '--db', db, '--store', store]).code, 6);
});

test('identify_runtime over MCP: dry run by default, then written, and get_function_facts shows the match', async () => {
  const client = new Client({ name: 'warden-e2e-oracle-tool', version: '0.0.0' });
  await client.connect(new StdioClientTransport({ command: WARDEN, args: ['mcp', '--db', db], stderr: 'pipe' }));
  try {
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === 'identify_runtime');
    assert.ok(tool, 'identify_runtime is listed');
    assert.equal(tool.annotations.readOnlyHint, false);

    const dry = (await client.callTool({ name: 'identify_runtime', arguments: { version_id: 1 } }));
    assert.notEqual(dry.isError, true, JSON.stringify(dry));
    assert.equal(dry.structuredContent.dry_run, true);
    assert.equal(dry.structuredContent.written, 0);
    const before = (await client.callTool({ name: 'coverage', arguments: { version_id: 1 } })).structuredContent;
    assert.equal(before.oracle_named, 0);

    const wrote = await client.callTool({ name: 'identify_runtime', arguments: { version_id: 1, dry_run: false } });
    assert.notEqual(wrote.isError, true, JSON.stringify(wrote));
    const out = wrote.structuredContent;
    assert.equal(out.dry_run, false);
    assert.ok(out.written > 0, JSON.stringify(out));
    assert.equal(out.written + out.rejected + out.unchanged, out.matched);
    const after = (await client.callTool({ name: 'coverage', arguments: { version_id: 1 } })).structuredContent;
    assert.equal(after.oracle_named, out.written);

    const m = out.matches.find((x) => x.written);
    const facts = (await client.callTool({ name: 'get_function_facts', arguments: { version_id: 1, func_index: m.func_index } })).structuredContent.facts;
    assert.equal(facts.oracle.name, m.name);
    assert.equal(facts.oracle.pass, m.pass);
    assert.equal(facts.oracle.score, m.score);
    assert.equal(facts.oracle.library, 'app');
    const sym = (await client.callTool({ name: 'get_symbol', arguments: { stable_id: m.stable_id } })).structuredContent.symbol;
    assert.equal(sym.provenance, 'oracle');
    assert.equal(sym.evidence.at(-1).actor, `oracle:${m.pass}`);
    // A name the module itself carries (export provenance) is never replaced.
    const refused = out.matches.filter((x) => !x.written);
    for (const x of refused) assert.match(x.reason, /^(rejected|unchanged)/);
  } finally {
    await client.close();
  }
});
