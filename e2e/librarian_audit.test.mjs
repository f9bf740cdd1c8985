// Librarian's run_audit, get_context_pack_bundle and the evidence ledger end to end
// (docs/librarian.md §5.2, §5.7, §5.8; decision 0063; issue 23): `librarian mcp --allow-root
// <tmp>` driven by the official TypeScript SDK client over stdio and Streamable HTTP, which
// validates every structuredContent against the tool's outputSchema. Each transport gets its own
// workspace: bootstrapped, audited, edited and audited again, bundled, a claim verified and the
// ledger read back through the CLI (entries, the claim's chain, PROV-JSON).

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BUILD_DIR } from './lib/env.mjs';
import { startHttpServer } from './lib/http.mjs';

const LIBRARIAN = path.join(BUILD_DIR, 'src', 'librarian', 'cli', 'librarian');

const FILES = {
  'lib/config.py': `
def parse_config(text):
    """Parse key=value lines into a dict."""
    return dict(line.split('=', 1) for line in text.splitlines() if line)


def load_config(path):
    """Read and parse a config file."""
    return parse_config(open(path).read())
`,
  'lib/server.py': 'def serve(port):\n    """Start serving on a port."""\n    return port + 1\n',
  'README.md': '# demo\n',
};

let dir;

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
  dir = mkdtempSync(path.join(os.tmpdir(), 'librarian-audit-e2e-'));
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

const MCP_ARGS = ['mcp', '--consent', 'bootstrap'];

function suite(name, connect) {
  describe(`run_audit, get_context_pack_bundle and the ledger over ${name}`, () => {
    let client;
    let close;
    let ws;
    const call = async (tool, args) => client.callTool({ name: tool, arguments: args });
    before(async () => {
      ws = path.join(dir, name.replace(/\W+/g, '-'));
      writeWorkspace(ws);
      ({ client, close } = await connect());
    });
    after(async () => { if (close) await close(); });

    test('tools/list declares both tools with the seed shapes and scopes', async () => {
      const { tools } = await client.listTools();
      const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
      const audit = byName.run_audit;
      assert.ok(audit);
      assert.deepEqual(audit.inputSchema.required.sort(), ['type', 'workspace']);
      assert.deepEqual(audit.inputSchema.properties.type.enum,
        ['completeness', 'freshness', 'confidence', 'coverage', 'full']);
      assert.deepEqual(Object.keys(audit.outputSchema.properties).sort(),
        ['audit_type', 'findings', 'summary', 'timestamp']);
      assert.deepEqual(Object.keys(audit.outputSchema.properties.summary.properties).sort(),
        ['critical', 'info', 'total_findings', 'warnings']);
      assert.equal(audit.annotations.readOnlyHint, false);
      const bundle = byName.get_context_pack_bundle;
      assert.ok(bundle);
      assert.deepEqual(bundle.inputSchema.required.sort(), ['bundleType', 'topic', 'workspace']);
      assert.deepEqual(bundle.inputSchema.properties.bundleType.enum, ['task', 'review', 'debug', 'comprehensive']);
      assert.equal(bundle.annotations.readOnlyHint, true);
      for (const f of ['bundleId', 'workspace', 'topic', 'bundleType', 'packs', 'estimatedTokens', 'truncated', 'omittedCount', 'disclosures']) {
        assert.ok(bundle.outputSchema.properties[f], f);
      }
      assert.match(bundle.description, /not a probability/);
    });

    test('run_audit before bootstrap: one critical finding', async () => {
      const r = await call('run_audit', { workspace: ws, type: 'full' });
      assert.equal(r.isError, undefined, JSON.stringify(r));
      const out = r.structuredContent;
      assert.equal(out.audit_type, 'full');
      assert.equal(out.summary.critical, 1);
      assert.match(out.findings[0].message, /never been bootstrapped/);
      assert.match(out.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    });

    test('bootstrap; a clean audit; an edit is found by freshness and confidence', async () => {
      const b = await call('bootstrap', { workspace: ws });
      assert.equal(b.structuredContent.success, true, JSON.stringify(b));
      const clean = (await call('run_audit', { workspace: ws, type: 'full' })).structuredContent;
      assert.equal(clean.summary.critical, 0, JSON.stringify(clean));
      assert.equal(clean.summary.warnings, 0, JSON.stringify(clean));
      assert.equal(clean.summary.total_findings, clean.findings.length);
      assert.ok(clean.findings.some((f) => f.category === 'confidence' && /uncalibrated/.test(f.message)));
      writeFileSync(path.join(ws, 'lib/server.py'), 'def serve(port):\n    return port + 2\n');
      writeFileSync(path.join(ws, 'lib/extra.py'), 'def extra():\n    return 1\n');
      const fresh = (await call('run_audit', { workspace: ws, type: 'freshness' })).structuredContent;
      const changed = fresh.findings.find((f) => /changed since indexing/.test(f.message));
      assert.ok(changed, JSON.stringify(fresh));
      assert.equal(changed.severity, 'warning');
      assert.match(changed.message, /lib\/server\.py/);
      assert.ok(changed.recommendation);
      assert.ok(fresh.findings.some((f) => f.severity === 'info' && /lib\/extra\.py/.test(f.message)));
      assert.equal(fresh.findings[0].severity, 'warning');  // most severe first
      const conf = (await call('run_audit', { workspace: ws, type: 'confidence' })).structuredContent;
      assert.ok(conf.findings.some((f) => /changed invalidation triggers/.test(f.message)), JSON.stringify(conf));
      const bad = await call('run_audit', { workspace: ws, type: 'speed' });
      assert.equal(bad.isError, true);
      assert.match(bad.content[0].text, /type/);
    });

    test('get_context_pack_bundle: self-contained packs within the budget', async () => {
      const r = await call('get_context_pack_bundle', { workspace: ws, topic: 'parse config lines', bundleType: 'task' });
      assert.equal(r.isError, undefined, JSON.stringify(r));
      const b = r.structuredContent;
      assert.match(b.bundleId, /^bd_[0-9a-f]{16}$/);
      assert.equal(b.bundleType, 'task');
      assert.ok(b.packs.length > 0);
      const fn = b.packs.find((p) => p.targetId === 'fn:lib/config.py::parse_config');
      assert.ok(fn, JSON.stringify(b.packs.map((p) => p.targetId)));
      assert.deepEqual(Object.keys(fn).sort(),
        ['codeSnippets', 'confidence', 'keyFacts', 'packId', 'packType', 'relatedFiles', 'summary', 'targetId']);
      assert.match(fn.codeSnippets[0].content, /def parse_config/);
      assert.ok(b.disclosures.some((d) => d.startsWith('confidence_uncalibrated:')));
      const small = (await call('get_context_pack_bundle', {
        workspace: ws, topic: 'parse config lines', bundleType: 'comprehensive', maxTokens: 100,
      })).structuredContent;
      assert.ok(small.estimatedTokens <= 100);
      assert.equal(small.truncated, true);
      assert.ok(small.omittedCount > 0);
      const bad = await call('get_context_pack_bundle', { workspace: ws, topic: 'x', bundleType: 'task', maxTokens: 5 });
      assert.equal(bad.isError, true);
      assert.match(bad.content[0].text, /maxTokens/);
    });

    test('resources: all six listed; knowledge-maps as JSON, DOT and SVG; method-packs paged', async () => {
      const { resources } = await client.listResources();
      const uris = resources.map((r) => r.uri);
      for (const kind of ['file-tree', 'symbols', 'knowledge-maps', 'method-packs', 'provenance', 'identity']) {
        assert.ok(uris.includes(`librarian://workspace/${kind}`), kind);
      }
      const maps = (await client.readResource({ uri: 'librarian://workspace/knowledge-maps' })).contents;
      const json = JSON.parse(maps.find((c) => c.mimeType === 'application/json').text);
      assert.equal(json.totals.functions, 3);
      assert.ok(json.topSymbols.length > 0);
      assert.equal(json.confidenceSemantics, 'ranking_signal_uncalibrated');
      const dot = maps.find((c) => c.mimeType === 'text/vnd.graphviz');
      assert.match(dot.text, /^digraph librarian \{/);
      const svg = maps.find((c) => c.mimeType === 'image/svg+xml');
      assert.ok(svg, `no SVG: ${json.svgUnavailable}`);
      assert.match(svg.text, /<svg/);
      const read = async (uri) => JSON.parse((await client.readResource({ uri })).contents[0].text);
      const ids = [];
      let uri = 'librarian://workspace/method-packs?limit=2';
      for (let pages = 0; pages < 5; ++pages) {
        const page = await read(uri);
        for (const p of page.packs) {
          assert.equal(p.packType, 'function_context');
          ids.push(p.targetId);
        }
        if (!page.nextCursor) break;
        uri = `librarian://workspace/method-packs?cursor=${page.nextCursor}&limit=2`;
      }
      assert.deepEqual(ids.sort(), ['fn:lib/config.py::load_config', 'fn:lib/config.py::parse_config', 'fn:lib/server.py::serve']);
      // load_config calls parse_config: the callee ranks first.
      assert.equal((await read('librarian://workspace/method-packs')).packs[0].targetId, 'fn:lib/config.py::parse_config');
      const prov = await read('librarian://workspace/provenance');
      assert.ok(prov.runs.length >= 1);
      assert.match(prov.runs[0].runId, /^run_/);
      assert.ok(prov.audits.length >= 1);
      assert.ok(prov.ledger.tool_call >= 1);
      assert.ok(prov.toolVersions.sqlite);
      const id = await read('librarian://workspace/identity');
      assert.match(id.workspaceId, /^ws_[0-9a-f]{16}$/);
      assert.equal(id.state, 'ready');
      assert.equal(id.schemaVersion, 6);
      assert.equal(id.confidenceSemantics, 'ranking_signal_uncalibrated');
      assert.equal(id.server.name, 'librarian');
      // The same through the template with the workspace id.
      const byId = await read(`librarian://${id.workspaceId}/identity`);
      assert.equal(byId.workspaceId, id.workspaceId);
    });

    test('verify_claim appends to the ledger; the CLI reads entries, the chain and PROV-JSON', async () => {
      // lib/server.py was edited above, so its stale pack is filtered out of bundles; its id is
      // the pack-id formula's.
      const serve = { packId: `pk_${createHash('sha256').update('function_context\nfn:lib/server.py::serve').digest('hex').slice(0, 16)}` };
      const v = (await call('verify_claim', { claimId: serve.packId, force: true })).structuredContent;
      assert.equal(v.verified, false);  // lib/server.py was edited above
      assert.ok(!v.disclosures.some((d) => /not recorded/.test(d)), JSON.stringify(v.disclosures));
      const entries = cli(['ledger', ws, '--kind', 'verification']);
      assert.equal(entries.code, 0, entries.stderr);
      const lines = entries.stdout.trim().split('\n').map((l) => JSON.parse(l));
      const mine = lines.filter((e) => e.claimId === serve.packId);
      assert.equal(mine.length, 1);
      assert.equal(mine[0].payload.verified, false);
      assert.equal(mine[0].payload.evidence.file, 'lib/server.py');
      const audits = cli(['ledger', ws, '--kind', 'tool_call']);
      assert.ok(audits.stdout.trim().split('\n').length >= 3, audits.stdout);  // the audits above
      const chain = cli(['ledger', ws, '--claim', serve.packId]);
      assert.equal(chain.code, 0, chain.stderr);
      assert.ok(chain.stdout.trim().length > 0);
      const prov = JSON.parse(cli(['ledger', ws, '--claim', serve.packId, '--prov']).stdout);
      assert.equal(prov.prefix.prov, 'http://www.w3.org/ns/prov#');
      assert.ok(prov.entity[`lib:claim/${serve.packId}`]);
      assert.ok(Object.keys(prov.entity).some((k) => k.startsWith('lib:evidence/lib/server.py@')));
      assert.equal(Object.keys(prov.wasGeneratedBy).length, 1);
    });
  });
}

suite('stdio', async () => {
  const client = new Client({ name: 'librarian-audit-e2e', version: '0.0.0' });
  await client.connect(new StdioClientTransport({ command: LIBRARIAN, args: [...MCP_ARGS, '--allow-root', dir], stderr: 'pipe' }));
  return { client, close: () => client.close() };
});

suite('Streamable HTTP', async () => {
  const srv = await startHttpServer(['--allow-root', dir], { bin: LIBRARIAN, command: MCP_ARGS, timeout: 20000 });
  const client = new Client({ name: 'librarian-audit-e2e-http', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(srv.url)));
  return {
    client,
    close: async () => {
      await client.close();
      await srv.stop();
    },
  };
});

describe('librarian CLI: run-audit and bundle', () => {
  test('run-audit exits 1 on a critical finding, bundle prints the tool JSON', () => {
    const ws = path.join(dir, 'cli');
    writeWorkspace(ws);
    assert.equal(cli(['run-audit', ws]).code, 3);  // not bootstrapped
    assert.equal(cli(['bootstrap', ws, '--quiet']).code, 0);
    const a = cli(['run-audit', ws, '--type', 'coverage', '--json']);
    assert.equal(a.code, 0, a.stderr);
    const report = JSON.parse(a.stdout);
    assert.equal(report.audit_type, 'coverage');
    assert.ok(report.findings.some((f) => /documented/.test(f.message)));
    assert.equal(cli(['run-audit', ws, '--type', 'speed']).code, 2);
    const b = cli(['bundle', ws, 'parse config', '--type', 'review', '--json']);
    assert.equal(b.code, 0, b.stderr);
    const bundle = JSON.parse(b.stdout);
    assert.equal(bundle.bundleType, 'review');
    assert.ok(bundle.packs.length > 0);
  });
});
