// Inspector v2 CLI (@modelcontextprotocol/inspector 2.12.0, `--cli --format json -q`) against the
// fixture server over stdio (the binary as target) and Streamable HTTP (the URL as target),
// docs/mcp.md §6.5.
// Exit codes: 0 OK, 5 tool error (isError or unknown tool).

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { INSPECTOR_BIN, REPO_ROOT, SERVER_BIN, node22Env, requireServerBinary } from './lib/env.mjs';
import { describeRun, resultOf, runInspector } from './lib/inspector.mjs';
import { startHttpServer } from './lib/http.mjs';

const home = mkdtempSync(path.join(tmpdir(), 'trove-inspector-'));
process.on('exit', () => rmSync(home, { recursive: true, force: true }));

function inspector(target, args, { timeout = 30000 } = {}) {
  return runInspector(['--format', 'json', '-q', target, ...args], { home, timeout });
}

const expectOk = resultOf;

const targets = [['stdio', () => SERVER_BIN]];
let srv;
targets.push(['http', () => srv.url]);

for (const [mode, target] of targets) {
  describe(`Inspector CLI over ${mode}`, () => {
    before(async () => {
      requireServerBinary();
      if (mode === 'http') srv = await startHttpServer();
    });
    after(async () => {
      if (mode === 'http' && srv) await srv.stop();
    });

    test('tools/list', { timeout: 40000 }, async () => {
      const res = expectOk(await inspector(target(), ['--method', 'tools/list']));
      const names = res.tools.map((t) => t.name);
      for (const n of ['echo', 'slow', 'throw', 'schema_probe', 'test_simple_text', 'test_error_handling', 'json_schema_2020_12_tool']) {
        assert.ok(names.includes(n), `${n} missing`);
      }
      for (const t of res.tools) assert.ok(t.description, `${t.name} without description`);
      assert.equal(res.tools.find((t) => t.name === 'echo').outputSchema.type, 'object');
    });

    test('tools/list --strict finds no portability errors', { timeout: 40000 }, async () => {
      const r = await new Promise((resolve) => {
        execFile(INSPECTOR_BIN, ['--cli', '--strict', target(), '--method', 'tools/list'], {
          cwd: REPO_ROOT, env: node22Env({ HOME: home, MCP_CATALOG_PATH: path.join(home, 'mcp.json') }), timeout: 30000,
          maxBuffer: 16 * 1024 * 1024,
        }, (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr }));
      });
      assert.equal(r.code, 0, `exit ${r.code}; stderr: ${r.stderr.slice(0, 1000)}`);
    });

    test('tools/call echo with --tool-args-json', { timeout: 40000 }, async () => {
      const res = expectOk(await inspector(target(), ['--method', 'tools/call', '--tool-name', 'echo', '--tool-args-json', '{"text":"5"}']));
      assert.notEqual(res.isError, true);
      assert.deepEqual(res.structuredContent, { text: '5' });
      assert.equal(res.content[0].type, 'text');
      assert.equal(res.content[0].text, '{"text":"5"}');
    });

    test('tools/call schema_probe with valid arguments', { timeout: 40000 }, async () => {
      const res = expectOk(await inspector(target(), ['--method', 'tools/call', '--tool-name', 'schema_probe',
        '--tool-args-json', '{"depth":"L2","limit":7,"include":["x"],"max files":0,"flag":true}']));
      assert.deepEqual(res.structuredContent, { ok: true });
    });

    test('tools/call with --tool-arg text=5 sends a number: validation isError, exit 5', { timeout: 40000 }, async () => {
      const r = await inspector(target(), ['--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', 'text=5']);
      assert.equal(r.code, 5, describeRun(r));
      assert.equal(r.json?.result?.isError, true, describeRun(r));
      assert.ok(r.json.result.content[0].text.startsWith("invalid arguments for tool 'echo':\narguments.text: expected string, got "),
        r.json.result.content[0].text);
    });

    test('test_error_handling exits 5 with an isError result', { timeout: 40000 }, async () => {
      const r = await inspector(target(), ['--method', 'tools/call', '--tool-name', 'test_error_handling']);
      assert.equal(r.code, 5, describeRun(r));
      assert.equal(r.json?.result?.isError, true, describeRun(r));
      assert.ok(r.json.result.content[0].text.length > 0);
    });

    test('throw exits 5 with a sanitized INTERNAL_ERROR', { timeout: 40000 }, async () => {
      const r = await inspector(target(), ['--method', 'tools/call', '--tool-name', 'throw']);
      assert.equal(r.code, 5, describeRun(r));
      assert.ok(r.json?.result?.content?.[0]?.text?.startsWith('INTERNAL_ERROR: internal error (ref '), describeRun(r));
      assert.ok(!r.stdout.includes('/secret/path'));
    });

    test('an unknown tool exits 5 with tool_not_found', { timeout: 40000 }, async () => {
      const r = await inspector(target(), ['--method', 'tools/call', '--tool-name', 'no_such_tool']);
      assert.equal(r.code, 5, describeRun(r));
      assert.equal(r.err?.error?.code, 'tool_not_found', describeRun(r));
    });

    test('resources/list, resources/templates/list and resources/read', { timeout: 40000 }, async () => {
      const list = expectOk(await inspector(target(), ['--method', 'resources/list']));
      const uris = list.resources.map((r) => r.uri);
      for (const u of ['test://static-text', 'test://static-binary', 'test://watched-resource', 'test://example-resource']) {
        assert.ok(uris.includes(u), `${u} missing`);
      }
      const tpl = expectOk(await inspector(target(), ['--method', 'resources/templates/list']));
      assert.ok(tpl.resourceTemplates.some((t) => t.uriTemplate === 'test://template/{id}/data'));
      const read = expectOk(await inspector(target(), ['--method', 'resources/read', '--uri', 'test://template/77/data']));
      assert.ok(read.contents[0].text.includes('77'));
    });

    test('prompts/list and prompts/get', { timeout: 40000 }, async () => {
      const list = expectOk(await inspector(target(), ['--method', 'prompts/list']));
      const names = list.prompts.map((p) => p.name);
      for (const n of ['test_simple_prompt', 'test_prompt_with_arguments', 'test_prompt_with_embedded_resource', 'test_prompt_with_image']) {
        assert.ok(names.includes(n), `${n} missing`);
      }
      const get = expectOk(await inspector(target(), ['--method', 'prompts/get', '--prompt-name', 'test_prompt_with_arguments',
        '--prompt-args', 'arg1=first-e2e', 'arg2=second-e2e']));
      const text = get.messages.map((m) => m.content.text ?? '').join('\n');
      assert.ok(text.includes('first-e2e') && text.includes('second-e2e'), text);
    });

    test('logging/setLevel', { timeout: 40000 }, async () => {
      const res = expectOk(await inspector(target(), ['--method', 'logging/setLevel', '--log-level', 'debug']));
      assert.deepEqual(res, {});
    });
  });
}
