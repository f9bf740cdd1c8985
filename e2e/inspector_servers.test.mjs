// Inspector v2 CLI (@modelcontextprotocol/inspector, `--cli --format json -q`) smoke run of every
// production server over stdio, started as a client configuration starts it: tools/list (with
// --strict: no portability errors), then a tools/call of every listed tool with minimal valid
// arguments from the table below; when the server advertises them (its initialize result, read
// once with the SDK client), resources/list and a resources/read of each listed resource and of
// each template (filled from the table), prompts/list and a prompts/get of each prompt. A tool,
// template or prompt without an entry in the table fails the test, so a new one gets its smoke
// call when it is added. The three servers run at once. Each Inspector run costs about a second
// of CPU (a Node start), so the lists a server does not advertise are not asked for.

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { REPO_ROOT } from './lib/env.mjs';
import { describeRun, resultOf, runInspector } from './lib/inspector.mjs';
import { KODO_MCP, LIBRARIAN, WARDEN } from './lib/servers.mjs';

const scratch = mkdtempSync(path.join(tmpdir(), 'trove-inspector-servers-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

// Runs the Inspector CLI against `command args...` over stdio; resolves {code, json, err, ...}.
function inspector(command, args, inspectorArgs, { extra = [] } = {}) {
  return runInspector([...extra, '--format', 'json', '-q', ...inspectorArgs, '--', command, ...args],
                      { home: scratch, timeout: 60000 });
}

const KODO_SOURCE = 'module smoke {\n    meta { purpose: "inspector smoke" }\n    fn half(n: Int) -> Int {\n        return n / 2\n    }\n    fn main() -> Int {\n        return half(4)\n    }\n}\n';

// Per server: how it is started (after setup()), and the smoke arguments of each tool (a function
// of the setup's context), each template's filled URI and each prompt's arguments. `mayFail`
// accepts an isError result whose text matches (a phase not implemented yet).
const SERVERS = {
  warden: {
    setup() {
      const db = path.join(scratch, 'warden.db');
      const fixtures = path.join(REPO_ROOT, 'testdata', 'warden', 'fixtures');
      execFileSync(WARDEN, ['--db', db, 'ingest', path.join(fixtures, 'app-Oz.wasm'), '--glue', path.join(fixtures, 'app-Oz.js')]);
      const funcs = JSON.parse(execFileSync(WARDEN, ['--db', db, 'funcs', '--json'], { encoding: 'utf8' }));
      const named = funcs.find((f) => f.name);
      const unnamed = funcs.find((f) => !f.name);
      // A second version, so that the diff tools have a pair to work on.
      execFileSync(WARDEN, ['--db', db, 'ingest', path.join(fixtures, 'app-O2.wasm'), '--glue', path.join(fixtures, 'app-O2.js')]);
      // An Oracle store where identify_runtime looks for it (the KB's project .warden/).
      execFileSync(WARDEN, ['oracle', 'build', path.join(fixtures, 'app-O2-named.wasm'), '--store', path.join(scratch, '.warden', 'oracle.db')]);
      return { command: WARDEN, args: ['mcp', '--db', db], named, unnamed };
    },
    tools: {
      list_versions: () => ({}),
      coverage: () => ({ version_id: 1 }),
      list_functions: () => ({ version_id: 1, limit: 5 }),
      get_function_facts: (c) => ({ version_id: 1, func_index: c.named.index }),
      get_symbol: (c) => ({ stable_id: c.named.stable_id }),
      propose_symbol: (c) => ({ stable_id: c.unnamed.stable_id, name: 'inspector_probe', confidence: 0.3 }),
      agent_backends: () => ({}),
      run_agent_pass: () => ({ version_id: 1, backend: 'offline' }),
      diff_versions: () => ({ from_version_id: 1, to_version_id: 2 }),
      carry_annotations: () => ({ from_version_id: 1, to_version_id: 2 }),
      identify_runtime: () => ({ version_id: 2 }),
    },
    templates: { 'warden://diffs/{from_version_id}/{to_version_id}/changelog': 'warden://diffs/1/2/changelog' },
    prompts: {},
  },
  kodo: {
    setup: () => ({ command: KODO_MCP, args: [] }),
    tools: {
      'kodo.check': () => ({ source: KODO_SOURCE, filename: 'smoke.ko' }),
      'kodo.describe': () => ({ source: KODO_SOURCE }),
      'kodo.explain': () => ({ code: 'E0201' }),
      'kodo.build': () => ({ source: KODO_SOURCE }),
      'kodo.fix': () => ({ source: KODO_SOURCE }),
      'kodo.annotate': () => ({ source: KODO_SOURCE }),
      'kodo.confidence_report': () => ({ source: KODO_SOURCE }),
    },
    templates: {},
    prompts: {},
  },
  librarian: {
    setup() {
      // Two small workspaces: one bootstrapped by the CLI and registered at start-up (the default
      // workspace of the resources), one for the bootstrap tool to index.
      const make = (dir) => {
        mkdirSync(path.join(dir, 'src'), { recursive: true });
        writeFileSync(path.join(dir, 'src', 'config.c'),
          '// Reads the settings file.\nint parse_config(const char* path) {\n  return path != 0;\n}\n');
        writeFileSync(path.join(dir, 'src', 'util.py'), 'def add_numbers(a, b):\n    """Return the sum."""\n    return a + b\n');
        return dir;
      };
      const ws = make(path.join(scratch, 'ws'));
      const fresh = make(path.join(scratch, 'ws-fresh'));
      execFileSync(LIBRARIAN, ['bootstrap', ws, '--quiet']);
      const answer = JSON.parse(execFileSync(LIBRARIAN, ['query', ws, 'parse the config file', '--json'], { encoding: 'utf8' }));
      const packId = answer.packs[0].packId;
      return {
        command: LIBRARIAN,
        args: ['mcp', '--workspace', ws, '--allow-root', scratch, '--consent', 'bootstrap', '--consent', 'export_index'],
        ws, fresh, packId,
      };
    },
    tools: {
      bootstrap: (c) => ({ workspace: c.fresh }),
      query: (c) => ({ workspace: c.ws, intent: 'parse the config file', includeEvidence: true }),
      verify_claim: (c) => ({ claimId: c.packId }),
      diff_runs: (c) => ({ workspace: c.ws, run1: 'latest', run2: 'latest' }),
      export_index: (c) => ({ workspace: c.ws, format: 'markdown' }),
      run_audit: (c) => ({ workspace: c.ws, type: 'full' }),
      get_context_pack_bundle: (c) => ({ workspace: c.ws, topic: 'parse the config file', bundleType: 'task' }),
    },
    templates: { 'librarian://{workspace}/{kind}': 'librarian://workspace/symbols?limit=5' },
    prompts: {},
  },
};

describe('Inspector CLI smoke run of every production server', { concurrency: Object.keys(SERVERS).length }, () => {
  for (const [name, spec] of Object.entries(SERVERS)) {
    test(name, { timeout: 300000 }, async (t) => {
      const ctx = spec.setup();
      const run = (inspectorArgs, opts) => inspector(ctx.command, ctx.args, inspectorArgs, opts);

      // What the server advertises, as any client learns it at initialize.
      const probe = new Client({ name: 'inspector-smoke-probe', version: '1.0.0' });
      await probe.connect(new StdioClientTransport({ command: ctx.command, args: ctx.args, stderr: 'ignore' }));
      const caps = probe.getServerCapabilities() ?? {};
      await probe.close();

      const listed = await run(['--method', 'tools/list'], { extra: ['--strict'] });
      assert.equal(listed.code, 0, `tools/list --strict (exit 6: a portability error): ${describeRun(listed)}`);
      const { tools } = resultOf(listed);
      assert.ok(tools.length > 0, 'no tools');
      const untabled = tools.map((x) => x.name).filter((n) => !spec.tools[n]);
      assert.deepEqual(untabled, [], `tools without smoke arguments in the table of ${name}`);

      for (const tool of tools) {
        await t.test(`tools/call ${tool.name}`, async () => {
          const args = spec.tools[tool.name](ctx);
          const r = await run(['--method', 'tools/call', '--tool-name', tool.name, '--tool-args-json', JSON.stringify(args)]);
          const allowed = spec.mayFail?.[tool.name];
          if (r.code === 5 && allowed && r.json?.result?.isError) {
            assert.match(r.json.result.content?.[0]?.text ?? '', allowed, describeRun(r));
            return;
          }
          const res = resultOf(r);
          assert.notEqual(res.isError, true, describeRun(r));
          assert.ok(res.content?.length > 0, `no content: ${describeRun(r)}`);
          if (tool.outputSchema) assert.equal(typeof res.structuredContent, 'object', `no structuredContent: ${describeRun(r)}`);
        });
      }

      await t.test('resources/list and resources/read of each', { skip: !caps.resources && 'no resources capability' }, async () => {
        const { resources } = resultOf(await run(['--method', 'resources/list']));
        for (const res of resources) {
          const read = resultOf(await run(['--method', 'resources/read', '--uri', res.uri]));
          assert.ok(read.contents?.length > 0, `${res.uri}: no contents`);
          assert.ok(read.contents.every((c) => typeof c.text === 'string' || typeof c.blob === 'string'), res.uri);
        }
      });

      await t.test('resources/templates/list and a read of each template', { skip: !caps.resources && 'no resources capability' }, async () => {
        const { resourceTemplates } = resultOf(await run(['--method', 'resources/templates/list']));
        const untabledTemplates = resourceTemplates.map((x) => x.uriTemplate).filter((u) => !spec.templates[u]);
        assert.deepEqual(untabledTemplates, [], 'templates without a URI in the table');
        for (const tpl of resourceTemplates) {
          const read = resultOf(await run(['--method', 'resources/read', '--uri', spec.templates[tpl.uriTemplate]]));
          assert.ok(read.contents?.length > 0, `${tpl.uriTemplate}: no contents`);
        }
      });

      await t.test('prompts/list and prompts/get of each', { skip: !caps.prompts && 'no prompts capability' }, async () => {
        const { prompts } = resultOf(await run(['--method', 'prompts/list']));
        const untabledPrompts = prompts.map((p) => p.name).filter((n) => !spec.prompts[n]);
        assert.deepEqual(untabledPrompts, [], 'prompts without arguments in the table');
        for (const p of prompts) {
          const pairs = Object.entries(spec.prompts[p.name]).map(([k, v]) => `${k}=${v}`);
          const got = resultOf(await run(['--method', 'prompts/get', '--prompt-name', p.name,
            ...(pairs.length ? ['--prompt-args', ...pairs] : [])]));
          assert.ok(got.messages?.length > 0, `${p.name}: no messages`);
        }
      });
    });
  }
});
