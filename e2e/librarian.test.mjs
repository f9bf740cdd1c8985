// Librarian end to end: the `librarian` CLI (bootstrap, query, exit codes, --json) and
// `librarian mcp` driven by the official TypeScript SDK client over stdio and Streamable HTTP:
// tools/list, bootstrap with progress, query (cache hit), paged resources, and each bad input
// (docs/librarian.md §3.1, §3.3-3.4, §4.2-4.6, §3.5, §8.6; issue 6).

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BUILD_DIR } from './lib/env.mjs';
import { startHttpServer } from './lib/http.mjs';
import { StdioServer } from './lib/stdio.mjs';

const LIBRARIAN = path.join(BUILD_DIR, 'src', 'librarian', 'cli', 'librarian');
// bootstrap needs consent (these clients cannot be asked by elicitation), and the tests call
// faster than librarian's default 100/min, burst 20; the policy e2e tests cover both.
const MCP_ARGS = ['mcp', '--consent', 'bootstrap', '--rate-limit', '60000/min', '--burst', '1000'];

const FILES = {
  'src/config.cc': `#include "config.h"

// Reads the settings file and fills the table of options.
int parse_config(const char* path) {
  return read_options(path);
}

int read_options(const char* path) {
  return 1;
}
`,
  'src/server.cc': `#include "config.h"

// Starts listening after the configuration was loaded.
void start_server() {
  parse_config("a.conf");
  parse_config("b.conf");
}
`,
  'lib/geometry.py': `
def scale_vector(v, k):
    """Multiply every element by a factor."""
    return [x * k for x in v]


def add_numbers(a, b):
    """Return the sum of two numbers."""
    return a + b
`,
  'web/app.js': `
/** Formats a greeting for the given visitor. */
function greetVisitor(name) {
  return 'hello ' + name;
}
`,
};

let dir;
let ws;
let wsHttp;

function writeWorkspace(root) {
  for (const [rel, text] of Object.entries(FILES)) {
    mkdirSync(path.join(root, path.dirname(rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  }
}

function cli(args) {
  const r = spawnSync(LIBRARIAN, args, { encoding: 'utf8', timeout: 120000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

before(() => {
  assert.ok(existsSync(LIBRARIAN), `librarian binary not found: ${LIBRARIAN}`);
  dir = mkdtempSync(path.join(os.tmpdir(), 'librarian-e2e-'));
  ws = path.join(dir, 'ws');
  wsHttp = path.join(dir, 'ws-http');
  writeWorkspace(ws);
  writeWorkspace(wsHttp);
  mkdirSync(path.join(dir, 'outside'));
  writeFileSync(path.join(dir, 'outside', 'secret.cc'), 'int leaked_secret_value() { return 42; }\n');
  symlinkSync(path.join(dir, 'outside'), path.join(ws, 'escape'));
  symlinkSync(path.join(dir, 'outside'), path.join(wsHttp, 'escape'));
  writeFileSync(path.join(dir, 'plain.txt'), 'a file, not a directory\n');
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

describe('librarian CLI', () => {
  test('--version and --help', () => {
    const v = cli(['--version']);
    assert.equal(v.code, 0);
    assert.match(v.stdout, /^librarian \(trove\) /);
    const h = cli(['--help']);
    assert.equal(h.code, 0);
    for (const cmd of ['bootstrap', 'query', 'mcp']) assert.match(h.stdout, new RegExp(cmd));
    assert.equal(cli([]).code, 2);
  });

  test('query before bootstrap exits 3', () => {
    const cliWs = path.join(dir, 'cli-ws');
    writeWorkspace(cliWs);
    const r = cli(['query', cliWs, 'parse config']);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /bootstrap/);
  });

  test('bootstrap then query, text and --json', () => {
    const cliWs = path.join(dir, 'cli-ws');
    const b = cli(['bootstrap', cliWs, '--json', '--quiet']);
    assert.equal(b.code, 0, b.stderr);
    const report = JSON.parse(b.stdout);
    assert.equal(report.success, true);
    assert.equal(report.stats.filesDiscovered, 4);
    assert.ok(report.stats.functionsIndexed >= 6);
    const again = JSON.parse(cli(['bootstrap', cliWs, '--json', '--quiet']).stdout);
    assert.equal(again.stats.mode, 'noop');

    const q = cli(['query', cliWs, 'parse_config', '--json', '--evidence']);
    assert.equal(q.code, 0, q.stderr);
    const out = JSON.parse(q.stdout);
    assert.equal(out.packs[0].targetId, 'fn:src/config.cc::parse_config');
    assert.deepEqual(Object.keys(out.packs[0]).sort(),
      ['confidence', 'keyFacts', 'packId', 'packType', 'relatedFiles', 'summary', 'targetId']);
    assert.equal(out.files[0].path, 'src/config.cc');
    assert.equal(out.evidenceByPack[0].evidence[0].startLine, 4);
    assert.equal(out.evidenceByPack[0].evidence[0].endLine, 6);

    const text = cli(['query', cliWs, 'scale vector', '--depth', 'L0']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /\[1\] function_context fn:lib\/geometry\.py::scale_vector/);
    assert.match(text.stdout, /uncalibrated ranking signals/);
    assert.match(text.stdout, /^files: lib\/geometry\.py \(/m);
  });

  test('bad input exits 2 naming the field', () => {
    const cliWs = path.join(dir, 'cli-ws');
    const cases = [
      [['query', cliWs, '   '], /intent/],
      [['query', cliWs, 'x', '--depth', 'L7'], /--depth/],
      [['query', cliWs, 'x', '--affected', '../outside/secret.cc'], /--affected\[0\]/],
      [['bootstrap', cliWs, '--exclude', '[a'], /exclude\[0\]/],
      [['bootstrap', path.join(dir, 'plain.txt')], /workspace/],
    ];
    for (const [args, re] of cases) {
      const r = cli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, re, args.join(' '));
    }
  });
});

// The MCP suite, run once per transport.
function mcpSuite(name, connect, rootOf) {
  describe(`librarian mcp over ${name}`, () => {
    let client;
    let close;
    let root;
    before(async () => { root = rootOf(); ({ client, close } = await connect()); });
    after(async () => { if (close) await close(); });

    test('tools/list: bootstrap and query with schemas and annotations', async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(),
        ['bootstrap', 'diff_runs', 'export_index', 'get_context_pack_bundle', 'query', 'run_audit', 'verify_claim']);
      const query = tools.find((t) => t.name === 'query');
      assert.equal(query.annotations.readOnlyHint, true);
      assert.ok(query.outputSchema);
      assert.deepEqual(query.inputSchema.required, ['intent']);
      assert.match(query.description, /not probabilities/);
      const boot = tools.find((t) => t.name === 'bootstrap');
      assert.equal(boot.annotations.readOnlyHint, false);
      assert.equal(boot.annotations.openWorldHint, true);
    });

    test('query before bootstrap: bootstrap_required, no packs', async () => {
      const r = await client.callTool({ name: 'query', arguments: { workspace: root, intent: 'parse config' } });
      assert.equal(r.isError, undefined);
      assert.deepEqual(r.structuredContent.packs, []);
      assert.equal(r.structuredContent.errorCode, 'RESOURCE_NOT_FOUND');
      assert.ok(r.structuredContent.disclosures.some((d) => d.startsWith('bootstrap_required:')));
    });

    test('bootstrap reports progress and succeeds', async () => {
      const progress = [];
      const r = await client.callTool({ name: 'bootstrap', arguments: { workspace: root } }, undefined,
        { onprogress: (p) => progress.push(p) });
      assert.equal(r.isError, undefined, JSON.stringify(r));
      const out = r.structuredContent;
      assert.equal(out.success, true);
      assert.equal(out.stats.filesDiscovered, 4);
      assert.match(out.runId, /^run_\d{8}T\d{6}Z_[0-9a-f]{4}$/);
      // The SDK client forgets a request's progress handler as soon as its response is read, so
      // notifications that reach it in the same read as the response are dropped on its side:
      // which of them it shows depends on timing. What it shows must still be consistent; the
      // full sequence on the wire is checked below with a raw stdio client.
      for (const p of progress) {
        assert.equal(p.total, 4);
        assert.ok(p.progress >= 0 && p.progress <= 4, JSON.stringify(p));
      }
      for (let i = 1; i < progress.length; ++i) assert.ok(progress[i].progress > progress[i - 1].progress);
    });

    test('query: ranked packs, disclosures, evidence, then a cache hit', async () => {
      const args = { workspace: root, intent: 'parse_config', includeEvidence: true };
      const first = (await client.callTool({ name: 'query', arguments: args })).structuredContent;
      assert.equal(first.packs[0].targetId, 'fn:src/config.cc::parse_config');
      assert.equal(first.packs[0].packType, 'function_context');
      assert.equal(first.cacheHit, false);
      assert.ok(first.disclosures.some((d) => d.startsWith('confidence_uncalibrated:')));
      assert.ok(first.stages.some((s) => s.name === 'retrieval' && s.engine.startsWith('lexical_bm25')));
      assert.equal(first.ranking[0].signals.symbol, 1);
      // The ranked file list: the top pack's file first, each file once, at most 10.
      assert.equal(first.files[0].path, 'src/config.cc');
      assert.equal(first.files[0].bestTarget, 'fn:src/config.cc::parse_config');
      assert.ok(first.files[0].matches >= 1 && first.files[0].why.includes('name'));
      assert.ok(first.files.length <= 10);
      assert.equal(new Set(first.files.map((f) => f.path)).size, first.files.length);
      const noFiles = (await client.callTool({ name: 'query', arguments: { ...args, maxFiles: 0 } })).structuredContent;
      assert.deepEqual(noFiles.files, []);
      const ev = first.evidenceByPack[0].evidence[0];
      assert.deepEqual([ev.file, ev.startLine, ev.endLine], ['src/config.cc', 4, 6]);
      assert.match(ev.snippet, /^int parse_config/);
      const second = (await client.callTool({ name: 'query', arguments: args })).structuredContent;
      assert.equal(second.cacheHit, true);
      assert.deepEqual(second.packs, first.packs);

      const scoped = (await client.callTool({ name: 'query', arguments: {
        workspace: root, intent: 'greeting for a visitor', affectedFiles: ['web/app.js'], depth: 'L2' } })).structuredContent;
      assert.equal(scoped.packs[0].relatedFiles[0], 'web/app.js');
      assert.ok(typeof scoped.synthesis === 'string' && scoped.synthesis.includes('[1]'));
    });

    test('resources: file-tree and symbols, paginated', async () => {
      const { resources } = await client.listResources();
      const uris = resources.map((r) => r.uri);
      assert.ok(uris.includes('librarian://workspace/file-tree'));
      assert.ok(uris.includes('librarian://workspace/symbols'));
      const read = async (uri) => JSON.parse((await client.readResource({ uri })).contents[0].text);

      const files = [];
      let uri = 'librarian://workspace/file-tree?limit=1';
      for (let pages = 0; pages < 10; ++pages) {
        const page = await read(uri);
        assert.equal(page.counts.files, 4);
        const walk = (n) => { if (n.type === 'file') files.push(n.path); (n.children || []).forEach(walk); };
        walk(page.root);
        if (!page.nextCursor) break;
        uri = `librarian://workspace/file-tree?cursor=${page.nextCursor}&limit=1`;
      }
      assert.deepEqual(files, ['lib/geometry.py', 'src/config.cc', 'src/server.cc', 'web/app.js']);

      const tree = await read('librarian://workspace/file-tree');
      const ids = new Set();
      uri = `librarian://${tree.workspaceId}/symbols?limit=2`;
      let pages = 0;
      for (; pages < 20; ++pages) {
        const page = await read(uri);
        assert.ok(page.symbols.length <= 2);
        for (const s of page.symbols) { assert.ok(!ids.has(s.id)); ids.add(s.id); }
        if (!page.nextCursor) break;
        uri = `librarian://${tree.workspaceId}/symbols?limit=2&cursor=${page.nextCursor}`;
      }
      assert.ok(pages >= 2);
      assert.ok(ids.has('fn:src/config.cc::parse_config'));
      assert.ok(ids.has('fn:web/app.js::greetVisitor'));
      await assert.rejects(client.readResource({ uri: 'librarian://workspace/nothing' }), /-32002|not found/i);
      await assert.rejects(client.readResource({ uri: 'librarian://workspace/symbols?cursor=bogus' }));
    });

    test('bootstrap is cancellable; the workspace stays usable', async () => {
      const big = mkdtempSync(path.join(dir, 'big-'));
      for (let i = 0; i < 600; ++i) {
        writeFileSync(path.join(big, `f${String(i).padStart(4, '0')}.py`),
          Array.from({ length: 20 }, (_, j) => `def fn_${i}_${j}(x):\n    return x + ${j}\n`).join('\n'));
      }
      const controller = new AbortController();
      const progress = [];
      const call = client.callTool({ name: 'bootstrap', arguments: { workspace: big } }, undefined, {
        signal: controller.signal,
        onprogress: (p) => { progress.push(p); if (progress.length === 1) controller.abort('test cancels'); },
      });
      await assert.rejects(call);
      // The cancelled run stops after its current file and releases the workspace; until then a
      // second run is refused as "bootstrap already running" (retryable). Then a new run
      // completes and serves queries.
      let again;
      for (let attempt = 0; attempt < 300; ++attempt) {
        again = await client.callTool({ name: 'bootstrap', arguments: { workspace: big } });
        if (!(again.isError && /already running/.test(again.content[0].text))) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(again.isError, undefined, JSON.stringify(again));
      assert.equal(again.structuredContent.success, true);
      assert.equal(again.structuredContent.stats.filesDiscovered, 600);
      const q = (await client.callTool({ name: 'query', arguments: { workspace: big, intent: 'fn_17_3' } })).structuredContent;
      assert.equal(q.packs[0].targetId, 'fn:f0017.py::fn_17_3');
    });

    test('bad input: an isError result naming the field, nothing read outside', async () => {
      const expectError = async (tool, args, field) => {
        const r = await client.callTool({ name: tool, arguments: args });
        assert.equal(r.isError, true, `${tool} ${JSON.stringify(args)} -> ${JSON.stringify(r)}`);
        assert.ok(r.content[0].text.includes(field), `${r.content[0].text} should name ${field}`);
      };
      await expectError('bootstrap', { workspace: 'relative/dir' }, 'workspace');
      await expectError('bootstrap', { workspace: path.join(dir, 'missing') }, 'workspace');
      await expectError('bootstrap', { workspace: path.join(dir, 'plain.txt') }, 'workspace');
      await expectError('bootstrap', { workspace: root, include: ['src/**', '[z'] }, 'include[1]');
      await expectError('bootstrap', { workspace: root, unknownOption: true }, 'unknownOption');
      await expectError('query', { workspace: path.join(dir, 'missing'), intent: 'x' }, 'workspace');
      await expectError('query', { workspace: path.join(dir, 'plain.txt'), intent: 'x' }, 'workspace');
      await expectError('query', { workspace: root, intent: '' }, 'intent');
      await expectError('query', { workspace: root, intent: ' \n\t ' }, 'intent');
      await expectError('query', { workspace: root, intent: 'x'.repeat(2001) }, 'intent');
      await expectError('query', { workspace: root, intent: 'x', affectedFiles: ['../outside/secret.cc'] }, 'affectedFiles[0]');
      await expectError('query', { workspace: root, intent: 'x', affectedFiles: ['src/config.cc', path.join(dir, 'outside', 'secret.cc')] }, 'affectedFiles[1]');
      await expectError('query', { workspace: root, intent: 'x', affectedFiles: ['escape/secret.cc'] }, 'affectedFiles[0]');
      // FTS5 syntax in an intent is plain text, not an error.
      const fts = await client.callTool({ name: 'query', arguments: { workspace: root, intent: '"parse* NEAR(x) OR config:' } });
      assert.equal(fts.isError, undefined);
      // The symlinked directory leads outside: never followed, never indexed.
      const leak = (await client.callTool({ name: 'query', arguments: { workspace: root, intent: 'leaked_secret_value', minConfidence: 0 } })).structuredContent;
      assert.ok(leak.packs.every((p) => !p.targetId.includes('leaked_secret_value')));
    });
  });
}

describe('librarian mcp progress on the wire (raw stdio client)', () => {
  test('bootstrap sends progress 0..4 of 4 for its token, every notification before the result', { timeout: 60000 }, async () => {
    const root = path.join(dir, 'ws-progress');
    writeWorkspace(root);
    const s = await StdioServer.start([...MCP_ARGS, '--allow-root', dir], { bin: LIBRARIAN });
    try {
      await s.initialize();
      const from = s.lines.length;
      const r = await s.request('tools/call', { name: 'bootstrap', arguments: { workspace: root },
        _meta: { progressToken: 'boot-wire' } }, { timeout: 30000 });
      assert.equal(r.result.isError, undefined, JSON.stringify(r));
      assert.equal(r.result.structuredContent.stats.filesDiscovered, 4);
      const after = s.lines.slice(from);
      const progress = after.filter((l) => l.msg?.method === 'notifications/progress');
      assert.deepEqual(progress.map((l) => [l.msg.params.progressToken, l.msg.params.progress, l.msg.params.total]),
        [['boot-wire', 0, 4], ['boot-wire', 1, 4], ['boot-wire', 2, 4], ['boot-wire', 3, 4], ['boot-wire', 4, 4]]);
      const result = after.findIndex((l) => l.msg?.id !== undefined && l.msg?.method === undefined);
      assert.ok(after.indexOf(progress.at(-1)) < result, 'progress after the result');
    } finally {
      s.proc.kill('SIGTERM');
    }
  });
});

mcpSuite('stdio', async () => {
  const client = new Client({ name: 'librarian-e2e', version: '0.0.0' });
  await client.connect(new StdioClientTransport({ command: LIBRARIAN, args: [...MCP_ARGS, '--allow-root', dir], stderr: 'pipe' }));
  return { client, close: () => client.close() };
}, () => ws);

mcpSuite('Streamable HTTP', async () => {
  const srv = await startHttpServer(['--allow-root', dir], { bin: LIBRARIAN, command: MCP_ARGS, timeout: 20000 });
  const client = new Client({ name: 'librarian-e2e-http', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(srv.url)));
  return {
    client,
    close: async () => {
      await client.close();
      await srv.stop();
    },
  };
}, () => wsHttp);
