// The client configuration in README.md works as written: the ```json block holding
// "mcpServers" is read, its placeholders are filled in (/path/to/trove/build: this build tree;
// /path/to/warden.db: a KB made here with `warden init`), and every server is started exactly as
// an MCP client starts it (the SDK's StdioClientTransport with the entry's command, args and env)
// and lists its tools.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BUILD_DIR } from './lib/env.mjs';
import { WARDEN, readmeMcpServers } from './lib/servers.mjs';

const scratch = mkdtempSync(path.join(tmpdir(), 'trove-readme-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

// A KB as a user makes one: `warden init` in a project directory.
function makeKb() {
  const project = path.join(scratch, 'project');
  mkdirSync(project);
  execFileSync(WARDEN, ['init'], { cwd: project, stdio: 'ignore' });
  const db = path.join(project, '.warden', 'warden.db');
  assert.ok(existsSync(db), `warden init made no ${db}`);
  return db;
}

test('README mcpServers: every server starts as configured and lists its tools', { timeout: 120000 }, async (t) => {
  const servers = readmeMcpServers();
  const db = makeKb();
  const fill = (s) => s.replaceAll('/path/to/trove/build', BUILD_DIR).replaceAll('/path/to/warden.db', db);

  // Each production server has an entry.
  const binaries = Object.values(servers).map((s) => path.basename(s.command ?? ''));
  for (const bin of ['warden', 'kodo-mcp', 'librarian']) {
    assert.ok(binaries.includes(bin), `README mcpServers has no entry running ${bin}: ${binaries.join(', ')}`);
  }

  for (const [name, entry] of Object.entries(servers)) {
    const command = fill(entry.command);
    const args = (entry.args ?? []).map(fill);
    for (const s of [command, ...args]) assert.ok(!s.includes('/path/to/'), `${name}: unknown placeholder in ${s}`);
    assert.ok(existsSync(command), `${name}: ${command} does not exist`);
    const client = new Client({ name: 'readme-config-e2e', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command, args, cwd: scratch, env: { ...getDefaultEnvironment(), ...(entry.env ?? {}) }, stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (d) => { stderr += d; });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      assert.ok(tools.length > 0, `${name}: no tools`);
      t.diagnostic(`${name}: ${path.basename(command)} ${args.join(' ')} -> ${tools.length} tools`);
    } catch (e) {
      assert.fail(`${name}: ${command} ${args.join(' ')}: ${e.message}\nstderr: ${stderr.slice(-1000)}`);
    } finally {
      await client.close();
    }
  }
});
