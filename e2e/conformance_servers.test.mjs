// The official conformance suite (@modelcontextprotocol/conformance 0.1.16, server mode,
// --suite all) against each production server over Streamable HTTP: `warden mcp`, `kodo-mcp`
// and `librarian mcp`. Many scenarios call the fixture server's own tools, resources and prompts
// (test_simple_text, test://static-text, test_simple_prompt, ...), which a production server does
// not have; e2e/conformance-baselines/<server>.txt lists those. A test fails when a scenario not
// in its baseline fails, and when a listed scenario passes (the baseline is then stale). The
// three servers run at once; the fixture server itself is held to no baseline at all in
// conformance.test.mjs.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CONFORMANCE_JS, NODE22, REPO_ROOT, node22Env } from './lib/env.mjs';
import { startHttpServer } from './lib/http.mjs';
import { KODO_MCP, LIBRARIAN, WARDEN } from './lib/servers.mjs';

const SCENARIOS_IN_SUITE_ALL = 32;
const BASELINES = path.join(REPO_ROOT, 'e2e', 'conformance-baselines');

// Scenario names of a baseline file: one a line, '#' starts a comment.
function readBaseline(name) {
  return readFileSync(path.join(BASELINES, `${name}.txt`), 'utf8').split('\n')
    .map((l) => l.replace(/#.*/, '').trim()).filter(Boolean);
}

function runSuite(url, outDir, expectedFailuresFile) {
  return new Promise((resolve) => {
    execFile(NODE22, [CONFORMANCE_JS, 'server', '--url', url, '--suite', 'all', '-o', outDir,
      '--expected-failures', expectedFailuresFile], {
      cwd: REPO_ROOT, env: node22Env(), timeout: 170000, maxBuffer: 64 * 1024 * 1024,
    }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, signal: error?.signal, stdout, stderr });
    });
  });
}

// scenario -> list of its FAILURE checks (empty: passed), from the suite's checks.json files.
function readResults(outDir) {
  const results = new Map();
  for (const dir of readdirSync(outDir)) {
    const file = path.join(outDir, dir, 'checks.json');
    if (!existsSync(file)) continue;
    const scenario = dir.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
    const checks = JSON.parse(readFileSync(file, 'utf8'));
    results.set(scenario, checks.filter((c) => c.status === 'FAILURE')
      .map((c) => `${c.id}: ${c.errorMessage ?? c.description ?? ''}`));
  }
  return results;
}

const scratch = mkdtempSync(path.join(tmpdir(), 'trove-conformance-servers-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

// How each server is started over HTTP (startHttpServer appends --http 0 after `command`).
const SERVERS = [
  ['warden', () => {
    // An empty KB, made as a user makes one: `warden init` in a project directory.
    const project = path.join(scratch, 'warden-project');
    mkdirSync(project, { recursive: true });
    execFileSync(WARDEN, ['init'], { cwd: project });
    return { bin: WARDEN, command: ['mcp', '--db', path.join(project, '.warden', 'warden.db')] };
  }],
  ['kodo', () => ({ bin: KODO_MCP, command: [] })],
  ['librarian', () => ({ bin: LIBRARIAN, command: ['mcp'] })],
];

describe('conformance 0.1.16 --suite all against the production servers', { concurrency: SERVERS.length }, () => {
  for (const [name, how] of SERVERS) {
    test(`${name}: failures are exactly e2e/conformance-baselines/${name}.txt`, { timeout: 200000 }, async (t) => {
      const baseline = readBaseline(name);
      assert.equal(new Set(baseline).size, baseline.length, `${name}.txt lists a scenario twice`);
      const { bin, command } = how();
      const srv = await startHttpServer([], { bin, command });
      const outDir = mkdtempSync(path.join(scratch, `${name}-`));
      const yaml = path.join(scratch, `${name}-expected.yaml`);
      writeFileSync(yaml, `server:\n${baseline.map((s) => `  - ${s}\n`).join('')}`);
      try {
        const run = await runSuite(srv.url, outDir, yaml);
        const results = readResults(outDir);
        const failing = [...results].filter(([, f]) => f.length > 0).map(([s]) => s);
        const unexpected = failing.filter((s) => !baseline.includes(s));
        const stale = baseline.filter((s) => results.has(s) && results.get(s).length === 0);
        const unknown = baseline.filter((s) => !results.has(s));
        t.diagnostic(`${results.size - failing.length} scenarios pass, ${failing.length} fail (baseline: ${baseline.length})`);
        for (const s of unexpected) t.diagnostic(`unexpected FAILURE ${s}: ${results.get(s).join('; ').slice(0, 500)}`);

        assert.equal(results.size, SCENARIOS_IN_SUITE_ALL, `only ${results.size} scenarios wrote checks.json`);
        assert.deepEqual(unexpected, [], `${name}: scenarios that fail but are not in the baseline:\n` +
          unexpected.map((s) => `  ${s}: ${results.get(s).join('; ').slice(0, 500)}`).join('\n'));
        assert.deepEqual(stale, [], `${name}: scenarios in the baseline that now pass (delete their lines)`);
        assert.deepEqual(unknown, [], `${name}: baseline scenarios the suite did not run`);
        // The suite's own verdict on the same baseline (--expected-failures) agrees.
        assert.equal(run.code, 0, `conformance exited ${run.code}${run.signal ? ` (${run.signal})` : ''}\n` +
          `${run.stdout.slice(-3000)}\n${run.stderr.slice(-1000)}`);
        assert.equal(srv.exit, null, `${name} died during the run: ${srv.stderr.slice(-1000)}`);
      } finally {
        await srv.stop();
      }
    });
  }
});
