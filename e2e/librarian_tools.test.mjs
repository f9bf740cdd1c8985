// Librarian's verify_claim, diff_runs and export_index end to end (docs/librarian.md §3.6,
// §3.6; issue 23): `librarian mcp --allow-root <tmp>` driven by the official TypeScript SDK client
// over stdio, which validates every structuredContent against the tool's outputSchema. A
// workspace is bootstrapped, queried for a pack id, edited, verified, bootstrapped again,
// diffed and exported in the three formats; plus the CLI subcommands.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BUILD_DIR } from './lib/env.mjs';

const LIBRARIAN = path.join(BUILD_DIR, 'src', 'librarian', 'cli', 'librarian');

const GEOMETRY = `
def scale_vector(v, k):
    """Multiply every element by a factor."""
    return [x * k for x in v]


def add_numbers(a, b):
    """Return the sum of two numbers."""
    return a + b
`;

let dir;
let ws;
let client;

function write(rel, text) {
  mkdirSync(path.join(ws, path.dirname(rel)), { recursive: true });
  writeFileSync(path.join(ws, rel), text);
}

async function call(name, args) {
  const r = await client.callTool({ name, arguments: args });
  return r;
}

before(async () => {
  assert.ok(existsSync(LIBRARIAN), `librarian binary not found: ${LIBRARIAN}`);
  dir = mkdtempSync(path.join(os.tmpdir(), 'librarian-tools-e2e-'));
  ws = path.join(dir, 'ws');
  write('lib/geometry.py', GEOMETRY);
  write('lib/strings.py', 'def shout(s):\n    """Upper-case a string."""\n    return s.upper()\n');
  write('src/config.cc', '// Reads the settings file.\nint parse_config(const char* path) {\n  return 1;\n}\n');
  client = new Client({ name: 'librarian-tools-e2e', version: '1.0.0' });
  await client.connect(new StdioClientTransport({
    command: LIBRARIAN, args: ['mcp', '--allow-root', dir, '--consent', 'bootstrap', '--consent', 'export_index'], stderr: 'pipe',
  }));
});

after(async () => {
  if (client) await client.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('librarian mcp: verify_claim, diff_runs, export_index over stdio', () => {
  let run1;
  let packId;

  test('tools/list declares the three tools with schemas, annotations and scopes', async () => {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const name of ['verify_claim', 'diff_runs', 'export_index']) {
      assert.ok(byName[name], name);
      assert.ok(byName[name].outputSchema, name);
      assert.equal(byName[name].inputSchema.additionalProperties, false, name);
    }
    assert.deepEqual(byName.verify_claim.inputSchema.required, ['claimId']);
    assert.equal(byName.verify_claim.annotations.readOnlyHint, true);
    assert.equal(byName.diff_runs.annotations.readOnlyHint, true);
    assert.deepEqual(byName.diff_runs.inputSchema.required.sort(), ['run1', 'run2', 'workspace']);
    assert.equal(byName.export_index.annotations.readOnlyHint, false);
    assert.deepEqual(byName.export_index.inputSchema.properties.format.enum, ['json', 'sqlite', 'markdown']);
    assert.match(byName.export_index.description, /contain source code/);
    assert.match(byName.verify_claim.description, /not a probability/);
  });

  test('bootstrap, then query gives a pack id that verifies', async () => {
    const b = await call('bootstrap', { workspace: ws });
    assert.equal(b.isError, undefined, JSON.stringify(b));
    run1 = b.structuredContent.runId;
    const q = await call('query', { workspace: ws, intent: 'multiply every element by a factor' });
    const pack = q.structuredContent.packs.find((p) => p.targetId === 'fn:lib/geometry.py::scale_vector');
    assert.ok(pack, JSON.stringify(q.structuredContent.packs));
    packId = pack.packId;

    const v = await call('verify_claim', { claimId: packId });
    assert.equal(v.isError, undefined, JSON.stringify(v));
    const out = v.structuredContent;
    assert.equal(out.claimId, packId);
    assert.equal(out.verified, true);
    assert.equal(out.confidence, 0.9);
    assert.deepEqual(out.activeDefeaters, []);
    assert.deepEqual(out.defeaterResults.map((d) => d.type),
      ['code_change', 'file_deleted', 'symbol_removed', 'symbol_moved', 'contradiction', 'test_failure']);
    assert.deepEqual(out.claimConfidence.type, 'deterministic');
    assert.equal(out.claimConfidence.value, 1);
    assert.deepEqual([out.evidence.file, out.evidence.startLine, out.evidence.endLine],
      ['lib/geometry.py', 2, 4]);
    assert.ok(out.disclosures.some((d) => d.startsWith('confidence_uncalibrated:')));
    assert.deepEqual(JSON.parse(v.content[0].text), out);
  });

  test('a changed line defeats the claim; a repeat within 60 s is cached unless force', async () => {
    write('lib/geometry.py', GEOMETRY.replace('x * k', 'x * k * 2'));
    const v = await call('verify_claim', { claimId: packId });
    const out = v.structuredContent;
    assert.equal(out.verified, false);
    assert.equal(out.cached, false);
    const cc = out.activeDefeaters.find((d) => d.type === 'code_change');
    assert.equal(cc.severity, 'full');
    assert.equal(cc.class, 'undercutting');
    assert.match(cc.reason, /1 line removed, 1 added/);
    assert.equal(out.claimConfidence.value, 0);
    assert.ok(Math.abs(out.confidence - 0.4) < 1e-9);
    const again = await call('verify_claim', { claimId: packId });
    assert.equal(again.structuredContent.cached, true);
    const forced = await call('verify_claim', { claimId: packId, force: true });
    assert.equal(forced.structuredContent.cached, false);
  });

  test('a renamed function and a deleted file', async () => {
    write('lib/geometry.py', GEOMETRY.replace('x * k', 'x * k * 2').replace('def add_numbers', 'def sum_numbers'));
    const q = await call('query', { workspace: ws, intent: 'return the sum of two numbers', minConfidence: 0 });
    assert.ok(q.structuredContent.packs.length > 0);
    // The claim about add_numbers, by its id from the index (built as the spec defines it).
    const { createHash } = await import('node:crypto');
    const id = (t, target) => 'pk_' + createHash('sha256').update(`${t}\n${target}`).digest('hex').slice(0, 16);
    const renamed = (await call('verify_claim', { claimId: id('function_context', 'fn:lib/geometry.py::add_numbers') })).structuredContent;
    const removed = renamed.activeDefeaters.find((d) => d.type === 'symbol_removed');
    assert.ok(removed, JSON.stringify(renamed));
    assert.match(removed.reason, /renamed: the same body is now `sum_numbers`/);
    assert.deepEqual(removed.newLocation, { file: 'lib/geometry.py', startLine: 7, endLine: 9 });

    rmSync(path.join(ws, 'lib/strings.py'));
    const gone = (await call('verify_claim', { claimId: id('function_context', 'fn:lib/strings.py::shout') })).structuredContent;
    assert.equal(gone.verified, false);
    assert.equal(gone.activeDefeaters[0].type, 'file_deleted');

    const unknown = await call('verify_claim', { claimId: 'pk_0000000000000000' });
    assert.equal(unknown.isError, undefined);
    assert.equal(unknown.structuredContent.error, 'Claim not found');
    assert.equal(unknown.structuredContent.errorCode, 'RESOURCE_NOT_FOUND');
    const bad = await call('verify_claim', { claimId: '' });
    assert.equal(bad.isError, true);
  });

  test('diff_runs across two bootstraps', async () => {
    write('lib/extra.py', 'def extra():\n    return 1\n');
    const b = await call('bootstrap', { workspace: ws });
    const run2 = b.structuredContent.runId;
    const d = await call('diff_runs', { workspace: ws, run1, run2: 'latest' });
    assert.equal(d.isError, undefined, JSON.stringify(d));
    const out = d.structuredContent;
    assert.equal(out.run1.runId, run1);
    assert.equal(out.run2.runId, run2);
    assert.deepEqual(out.files.added, ['lib/extra.py']);
    assert.deepEqual(out.files.removed, ['lib/strings.py']);
    assert.deepEqual(out.files.modified, ['lib/geometry.py']);
    assert.equal(out.files.unchangedCount, 1);
    assert.deepEqual(out.symbols.added, ['fn:lib/extra.py::extra', 'fn:lib/geometry.py::sum_numbers']);
    assert.deepEqual(out.symbols.removed, ['fn:lib/geometry.py::add_numbers', 'fn:lib/strings.py::shout']);
    assert.deepEqual(out.symbols.changed, ['fn:lib/geometry.py::scale_vector']);
    assert.equal(out.stats.functions.delta, 0);
    assert.equal(out.error, undefined);

    const missing = (await call('diff_runs', { workspace: ws, run1: 'run_20000101T000000Z_0000', run2: 'latest' })).structuredContent;
    assert.equal(missing.errorCode, 'RESOURCE_NOT_FOUND');
    const outside = await call('diff_runs', { workspace: os.tmpdir(), run1: 'latest', run2: 'latest' });
    assert.equal(outside.isError, true);
  });

  test('export_index: json re-read, sqlite and markdown written, outside paths refused', async () => {
    const j = await call('export_index', { workspace: ws, format: 'json' });
    assert.equal(j.isError, undefined, JSON.stringify(j));
    const out = j.structuredContent;
    assert.equal(out.success, true);
    assert.match(out.outputPath, /^\.librarian\/exports\/index-run_\w+\.json$/);
    const data = JSON.parse(readFileSync(path.join(ws, out.outputPath), 'utf8'));
    assert.equal(data.files.length, out.counts.files);
    assert.equal(data.symbols.length, out.counts.symbols);
    assert.equal(data.packs.length, out.counts.packs);
    assert.deepEqual(data.files.map((f) => f.path), ['lib/extra.py', 'lib/geometry.py', 'src/config.cc']);
    assert.ok(data.packs.some((p) => p.targetId === 'fn:lib/geometry.py::scale_vector' && p.codeSnippets.length === 1));
    assert.equal(out.bytes, readFileSync(path.join(ws, out.outputPath)).length);

    const s = (await call('export_index', { workspace: ws, format: 'sqlite', outputPath: 'out/index.sqlite' })).structuredContent;
    assert.equal(s.success, true);
    assert.equal(readFileSync(path.join(ws, 'out/index.sqlite')).subarray(0, 15).toString(), 'SQLite format 3');

    const m = (await call('export_index', { workspace: ws, format: 'markdown', outputPath: 'INDEX.md' })).structuredContent;
    assert.equal(m.success, true);
    const md = readFileSync(path.join(ws, 'INDEX.md'), 'utf8');
    for (const h of ['# Librarian index: ws', '## Identity', '## Last run', '## Modules', '## Decisions', '## Latest audit']) {
      assert.ok(md.includes(h), h);
    }

    for (const outputPath of ['../escape.json', path.join(dir, 'abs.json'), 'a\\b.json']) {
      const r = await call('export_index', { workspace: ws, format: 'json', outputPath });
      assert.equal(r.isError, true, outputPath);
      assert.ok(!existsSync(path.join(dir, 'escape.json')));
    }
    const keep = await call('export_index', { workspace: ws, format: 'json', outputPath: 'src/config.cc' });
    assert.equal(keep.isError, true);
    assert.match(readFileSync(path.join(ws, 'src/config.cc'), 'utf8'), /parse_config/);
    const bad = await call('export_index', { workspace: ws, format: 'scip' });
    assert.equal(bad.isError, true);
  });
});

describe('librarian CLI: verify-claim, diff-runs, export', () => {
  function cli(args) {
    const r = spawnSync(LIBRARIAN, args, { encoding: 'utf8', timeout: 120000 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  test('subcommands run against the workspace the MCP suite indexed', () => {
    const h = cli(['--help']);
    for (const cmd of ['verify-claim', 'diff-runs', 'export']) assert.match(h.stdout, new RegExp(cmd));
    const exp = cli(['export', ws, '--format', 'json', '--output', 'cli.json', '--json']);
    assert.equal(exp.code, 0, exp.stderr);
    const data = JSON.parse(readFileSync(path.join(ws, 'cli.json'), 'utf8'));
    const pack = data.packs.find((p) => p.targetId === 'fn:lib/extra.py::extra');
    const v = cli(['verify-claim', ws, pack.packId, '--json']);
    assert.equal(v.code, 0, v.stderr);
    assert.equal(JSON.parse(v.stdout).verified, true);
    write('lib/extra.py', 'def extra():\n    return 2\n');
    const defeated = cli(['verify-claim', ws, pack.packId]);
    assert.equal(defeated.code, 1);
    assert.match(defeated.stdout, /ACTIVE code_change \[full\]/);
    const d = cli(['diff-runs', ws, 'latest', 'latest', '--json']);
    assert.equal(d.code, 0, d.stderr);
    assert.equal(JSON.parse(d.stdout).files.unchangedCount, 3);
    const notBoot = path.join(dir, 'empty');
    mkdirSync(notBoot);
    assert.equal(cli(['export', notBoot]).code, 3);
    assert.equal(cli(['export', ws, '--output', '../x.json']).code, 2);
  });
});
