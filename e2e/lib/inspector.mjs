// Runs the Inspector v2 CLI (@modelcontextprotocol/inspector, `--cli --format json -q`) for the
// e2e tests: one place that starts it with Node 22 and a scratch HOME, and reads its JSON.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { INSPECTOR_BIN, REPO_ROOT, node22Env } from './env.mjs';

// Runs `mcp-inspector --cli <cliArgs...>` with HOME set to `home`; resolves {code, signal,
// stdout, stderr, json (the last JSON line of stdout, parsed, or undefined), err (the same of
// stderr)}. Exit codes: 0 OK, 5 tool error (isError or unknown tool).
export function runInspector(cliArgs, { home, timeout = 30000 }) {
  return new Promise((resolve) => {
    execFile(INSPECTOR_BIN, ['--cli', ...cliArgs], {
      cwd: REPO_ROOT,
      env: node22Env({ HOME: home, MCP_CATALOG_PATH: path.join(home, 'mcp.json') }),
      timeout,
      maxBuffer: 16 * 1024 * 1024,
    }, (error, stdout, stderr) => {
      const parse = (s) => {
        const line = s.trim().split('\n').filter((l) => l.startsWith('{')).pop();
        if (!line) return undefined;
        try { return JSON.parse(line); } catch { return undefined; }
      };
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, signal: error?.signal, stdout, stderr, json: parse(stdout), err: parse(stderr) });
    });
  });
}

// Describes a run for an assertion message.
export const describeRun = (r) =>
  `exit ${r.code}${r.signal ? ` (${r.signal})` : ''}; stdout: ${r.stdout.slice(0, 600)}; stderr: ${r.stderr.slice(0, 600)}`;

// Returns the run's `result`, asserting that it exited 0 and printed {"result": ...}.
export function resultOf(r) {
  assert.equal(r.code, 0, describeRun(r));
  assert.ok(r.json && r.json.result, `no {"result": ...} on stdout: ${describeRun(r)}`);
  return r.json.result;
}
