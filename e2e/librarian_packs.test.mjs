// Librarian's six pack types, verification plans, episodes and per-workspace resources end to
// end (spec §1.3, §3.2.5, §4; decision 0069; issue 23): `librarian mcp` driven by the official
// TypeScript SDK client over stdio, which validates every structuredContent against the tool's
// outputSchema. The fixture has a compile_commands.json (its -I is the only way to resolve the
// include), an ADR under docs/decisions/, a test file, and a shape shared by three functions.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BUILD_DIR } from './lib/env.mjs';

const LIBRARIAN = path.join(BUILD_DIR, 'src', 'librarian', 'cli', 'librarian');

function files(root) {
  return {
    'compile_commands.json': JSON.stringify([
      { directory: root, command: 'c++ -Iinclude -c src/config.cc', file: 'src/config.cc' },
    ]),
    'include/settings.h': '// Settings table shared by the server.\nint settings_size(int n);\n',
    'src/config.cc': `#include "settings.h"

// Reads the settings file and fills the table of options.
int parse_config(int fd) {
  return read_option(fd) + 1;
}

int read_option(int fd) { return fd; }
`,
    'src/server.cc': `// Starts the server after the configuration was parsed.
int start_server(int port) { return parse_config(port) + port; }
int read_port(int p) { return p; }
`,
    'src/client.cc': 'int read_reply(int r) { return parse_config(r); }\n',
    'tests/config_test.cc': 'int check_parse() { return parse_config(3) == 4; }\n',
    'docs/decisions/0001-settings-header.md': `# Keep every setting in one header

Status: Accepted
Date: 2026-01-02

## Decision

All settings live in \`include/settings.h\` and are parsed by \`src/config.cc\`. Nothing else reads them.
`,
  };
}

let dir;
let client;
let ws;
const call = async (tool, args) => (await client.callTool({ name: tool, arguments: args })).structuredContent;

before(async () => {
  assert.ok(existsSync(LIBRARIAN), `librarian binary not found: ${LIBRARIAN}`);
  dir = mkdtempSync(path.join(os.tmpdir(), 'librarian-packs-e2e-'));
  ws = path.join(dir, 'ws');
  for (const [rel, text] of Object.entries(files(ws))) {
    mkdirSync(path.join(ws, path.dirname(rel)), { recursive: true });
    writeFileSync(path.join(ws, rel), text);
  }
  client = new Client({ name: 'librarian-packs-e2e', version: '0.0.0' });
  await client.connect(new StdioClientTransport({
    command: LIBRARIAN, args: ['mcp', '--consent', 'bootstrap', '--allow-root', dir], stderr: 'pipe' }));
});
after(async () => {
  if (client) await client.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('librarian packs over stdio', () => {
  test('bootstrap, then the first query discloses that no episodes exist', async () => {
    const b = await call('bootstrap', { workspace: ws });
    assert.equal(b.success, true, JSON.stringify(b));
    const r = await call('query', { workspace: ws, intent: 'where are settings parsed', depth: 'L2' });
    assert.ok(r.disclosures.some((d) => d.startsWith('similar_tasks_unavailable:')), JSON.stringify(r.disclosures));
    assert.ok(!r.packs.some((p) => p.packType === 'similar_tasks'));
  });

  test('decision_context: the ADR found under docs/decisions/ with its status and named files', async () => {
    const r = await call('query', { workspace: ws, intent: 'decision about the settings header', depth: 'L3' });
    const adr = r.packs.find((p) => p.packType === 'decision_context');
    assert.ok(adr, JSON.stringify(r.packs.map((p) => [p.packType, p.targetId])));
    assert.equal(adr.targetId, 'adr:docs/decisions/0001-settings-header.md');
    assert.equal(adr.confidence, 0.7);
    assert.ok(adr.keyFacts.includes('status: accepted'));
    assert.deepEqual(adr.relatedFiles, ['docs/decisions/0001-settings-header.md', 'include/settings.h', 'src/config.cc']);
  });

  test('pattern_context: three read_* functions with one parameter in three files', async () => {
    const r = await call('query', { workspace: ws, intent: 'read pattern shared by functions', depth: 'L3' });
    const pat = r.packs.find((p) => p.packType === 'pattern_context');
    assert.ok(pat, JSON.stringify(r.packs.map((p) => [p.packType, p.targetId])));
    assert.match(pat.summary, /^3 functions in 3 files share this shape/);
    assert.match(pat.targetId, /^pat:[0-9a-f]{16}$/);
  });

  test('change_impact and verificationPlan for an impact intent', async () => {
    const r = await call('query', { workspace: ws, intent: 'who calls parse_config', intentType: 'impact', depth: 'L2' });
    const impact = r.packs.find((p) => p.packType === 'change_impact' && p.targetId === 'fn:src/config.cc::parse_config');
    assert.ok(impact, JSON.stringify(r.packs.map((p) => [p.packType, p.targetId])));
    assert.ok(impact.keyFacts.some((f) => f.startsWith('direct dependents (1 hop):') && f.includes('src/server.cc')));
    assert.ok(impact.keyFacts.some((f) => f.includes('tests/config_test.cc')));
    // With includeEvidence it cites the calling functions, the test first (decision 0077).
    const ev = await call('query', { workspace: ws, intent: 'who calls parse_config', intentType: 'impact', depth: 'L2', includeEvidence: true });
    const sites = ev.evidenceByPack.find((e) => e.packId === impact.packId).evidence;
    assert.deepEqual(sites.map((e) => [e.file, e.startLine, e.endLine]),
      [['tests/config_test.cc', 1, 1], ['src/client.cc', 1, 1], ['src/server.cc', 2, 2]], JSON.stringify(sites));
    for (const e of sites) assert.match(e.contentHash, /^[0-9a-f]{64}$/);
    const plan = r.verificationPlan;
    assert.ok(plan, 'no verificationPlan');
    assert.match(plan.id, /^vp_[0-9a-f]{16}$/);
    for (const f of ['id', 'target', 'methods', 'expectedObservations', 'createdAt', 'updatedAt']) assert.ok(f in plan, f);
    const test = plan.methods.find((m) => m.type === 'automated_test');
    assert.ok(test && test.description.includes('tests/config_test.cc'), JSON.stringify(plan.methods));
    assert.equal(test.command, undefined);
    assert.ok(plan.methods.some((m) => m.type === 'code_review'));
    assert.ok(plan.methods.some((m) => m.type === 'other' && /verify_claim/.test(m.description)));
    assert.ok(r.stages.some((s) => s.name === 'method_guidance' && s.status === 'ran'));
    // An understand intent gets no plan.
    const u = await call('query', { workspace: ws, intent: 'explain the server start', depth: 'L1' });
    assert.equal(u.verificationPlan, undefined);
  });

  test('change_impact of a header: the include resolved through compile_commands.json', async () => {
    const r = await call('query', {
      workspace: ws, intent: 'settings size table', intentType: 'impact', depth: 'L2', affectedFiles: ['include/settings.h'] });
    const impact = r.packs.find((p) => p.packType === 'change_impact' && p.targetId === 'mod:include/settings.h');
    assert.ok(impact, JSON.stringify(r.packs.map((p) => [p.packType, p.targetId])));
    assert.ok(impact.keyFacts.some((f) => f.startsWith('direct dependents (1 hop): src/config.cc')), JSON.stringify(impact.keyFacts));
  });

  test('similar_tasks: an earlier query with shared words comes back as an episode', async () => {
    const r = await call('query', { workspace: ws, intent: 'who else calls parse_config here', depth: 'L3', includeEvidence: true });
    const task = r.packs.find((p) => p.packType === 'similar_tasks');
    assert.ok(task, JSON.stringify(r.packs.map((p) => [p.packType, p.targetId])));
    assert.match(task.targetId, /^task:\d+$/);
    assert.match(task.summary, /who calls parse_config/);
    assert.ok(!r.disclosures.some((d) => d.startsWith('similar_tasks_unavailable:')));
    // It cites the spans its earlier answer cited (decision 0077), parse_config's among them.
    const cited = r.evidenceByPack.find((e) => e.packId === task.packId).evidence;
    assert.ok(cited.some((e) => e.file === 'src/config.cc' && e.startLine <= 4 && e.endLine >= 6 && /^[0-9a-f]{64}$/.test(e.contentHash)), JSON.stringify(cited));
    // The same intent again is not its own similar task: the answer repeats.
    const again = await call('query', { workspace: ws, intent: 'who calls parse_config', intentType: 'impact', depth: 'L2' });
    assert.ok(!again.packs.some((p) => p.packType === 'similar_tasks' && /who calls parse_config$/.test(p.summary)));
  });

  test('resources/list: six kinds per indexed workspace, paged with nextCursor', async () => {
    const other = path.join(dir, 'other');
    mkdirSync(other, { recursive: true });
    writeFileSync(path.join(other, 'a.py'), 'def alpha():\n    return 1\n');
    assert.equal((await call('bootstrap', { workspace: other })).success, true);
    const uris = [];
    let cursor;
    for (let pages = 0; pages < 50; ++pages) {
      const page = await client.listResources(cursor ? { cursor } : {});
      uris.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    assert.equal(new Set(uris).size, uris.length, 'a resource listed twice');
    const ids = new Set(uris.map((u) => u.match(/^librarian:\/\/(ws_[0-9a-f]{16})\//)?.[1]).filter(Boolean));
    assert.equal(ids.size, 2, JSON.stringify(uris));
    for (const id of ids) {
      for (const kind of ['file-tree', 'symbols', 'knowledge-maps', 'method-packs', 'provenance', 'identity']) {
        assert.ok(uris.includes(`librarian://${id}/${kind}`), `${id}/${kind}`);
      }
      const identity = JSON.parse((await client.readResource({ uri: `librarian://${id}/identity` })).contents[0].text);
      assert.equal(identity.workspaceId, id);
    }
  });
});
