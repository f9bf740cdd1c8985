// Non-Emscripten modules end to end (docs/warden.md §3.1, §8.3, §10.4), opt-in: the Rust module
// of @resvg/resvg-wasm 2.6.2 and the Go module of esbuild-wasm 0.28.2 (npm devDependencies; each
// case skips when its module is absent from node_modules/). Each is ingested without glue; its
// producers section is shown by `versions`, `show`, `coverage --json` and by the MCP tools
// list_versions and coverage; `oracle identify` says plainly that the module is not Emscripten
// and what it still tried.

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

// docs/warden.md §10.4's table.
const MODULES = [
  { name: '@resvg/resvg-wasm 2.6.2 (Rust)', wasm: path.join(REPO_ROOT, 'node_modules', '@resvg', 'resvg-wasm', 'index_bg.wasm'),
    imported: 18, defined: 1433, language: 'Rust', producers: ['rustc 1.76.0-nightly', 'walrus 0.20.3', 'wasm-bindgen 0.2.92'],
    foreign: /the producers section names (Rust|rustc|walrus|wasm-bindgen)/ },
  { name: 'esbuild-wasm 0.28.2 (Go)', wasm: path.join(REPO_ROOT, 'node_modules', 'esbuild-wasm', 'esbuild.wasm'),
    imported: 22, defined: 5307, language: 'Go', producers: ['Go go1.26.5'], foreign: /the producers section names Go/ },
];

function warden(args) {
  const r = spawnSync(WARDEN, args, { encoding: 'utf8', timeout: 300000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
function wardenJson(args) {
  const r = warden([...args, '--json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

let dir;
let store;
before(() => {
  assert.ok(existsSync(WARDEN), `warden binary not found: ${WARDEN}`);
  dir = mkdtempSync(path.join(os.tmpdir(), 'warden-toolchains-e2e-'));
  // A small Emscripten store, so that identify has something to try against.
  store = path.join(dir, 'oracle.db');
  const r = warden(['oracle', 'build', path.join(FIXTURES, 'app-O2-named.wasm'), '--store', store, '--library', 'app']);
  assert.equal(r.code, 0, r.stderr);
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

// Every [name, version] of a producers object as "name version".
const producerItems = (p) => Object.values(p).flat().map(([n, v]) => (v ? `${n} ${v}` : n));

for (const [i, m] of MODULES.entries()) {
  test(`${m.name}: ingest, producers in versions/show/coverage and over MCP, oracle identify says not Emscripten`,
    { timeout: 600000 }, async (t) => {
      if (!existsSync(m.wasm)) { t.skip(`${m.wasm} is absent (npm ci installs the devDependencies)`); return; }
      const db = path.join(dir, `kb${i}.db`);
      let r = warden(['ingest', m.wasm, '--db', db]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`\\(${m.imported} imported, ${m.defined.toLocaleString('en-US')} defined\\)`));

      // versions: text ends with the producers, --json holds the section.
      r = warden(['versions', '--db', db]);
      assert.equal(r.code, 0, r.stderr);
      for (const item of m.producers) assert.ok(r.stdout.includes(item), `versions lacks ${item}: ${r.stdout}`);
      const [v] = wardenJson(['versions', '--db', db]);
      assert.equal(v.emscripten_version, null);
      for (const item of m.producers) assert.ok(producerItems(v.producers).some((p) => p.startsWith(item)), JSON.stringify(v.producers));
      assert.ok(Array.isArray(v.target_features));

      // coverage --json and show.
      const cov = wardenJson(['coverage', '--db', db]);
      assert.deepEqual([cov.producers, cov.target_features], [v.producers, v.target_features]);
      const first = wardenJson(['funcs', '--db', db, '--limit', '1'])[0];
      r = warden(['show', String(first.index), '--db', db]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /module {8}producers .*; target features /);
      for (const item of m.producers) assert.ok(r.stdout.includes(item), `show lacks ${item}: ${r.stdout}`);

      // The MCP tools list_versions and coverage show the same sections.
      const client = new Client({ name: 'warden-e2e-toolchains', version: '0.0.0' });
      await client.connect(new StdioClientTransport({ command: WARDEN, args: ['mcp', '--db', db], stderr: 'pipe' }));
      try {
        const listed = (await client.callTool({ name: 'list_versions', arguments: {} })).structuredContent.versions;
        assert.equal(listed.length, 1);
        assert.deepEqual([listed[0].producers, listed[0].target_features], [v.producers, v.target_features]);
        const c = (await client.callTool({ name: 'coverage', arguments: { version_id: listed[0].id } })).structuredContent;
        assert.deepEqual([c.producers, c.target_features], [v.producers, v.target_features]);
      } finally {
        await client.close();
      }

      // oracle identify: plainly not Emscripten, and what it still tried.
      r = warden(['oracle', 'identify', '--db', db, '--store', store, '--dry-run']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^note: .* is not an Emscripten module: /m);
      assert.match(r.stdout, m.foreign);
      assert.match(r.stdout, /Still tried: all four passes against the store, with confidences capped at \d\.\d\d/);
      assert.match(r.stdout, /emscripten version: not inferred: not an Emscripten module/);
      const j = wardenJson(['oracle', 'identify', '--db', db, '--store', store, '--dry-run']);
      assert.equal(j.emscripten, false);
      assert.match(j.toolchain_reason, m.foreign);
      assert.equal(j.emscripten_version.version, null);
    });
}
