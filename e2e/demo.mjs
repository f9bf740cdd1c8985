// The demo: the official MCP TypeScript SDK client drives the Trove MCP core (the conformance
// fixture server) over stdio, then over Streamable HTTP, and prints what it sees.
//   node e2e/demo.mjs build/e2e/conformance_server
import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const binary = process.argv[2] ?? 'build/e2e/conformance_server';

async function tour(client, label) {
  const t0 = performance.now();
  const info = client.getServerVersion();
  console.log(`\n== ${label}: connected to ${info.name} ${info.version}`);
  const { tools } = await client.listTools();
  console.log(`tools (${tools.length}): ${tools.map((t) => t.name).join(', ')}`);

  const echo = await client.callTool({ name: 'echo', arguments: { text: 'hello from the demo' } });
  console.log(`echo -> structuredContent ${JSON.stringify(echo.structuredContent)}`);

  const bad = await client.callTool({ name: 'schema_probe', arguments: { depth: 'L9', limit: 0 } });
  console.log(`schema_probe with bad arguments -> isError=${bad.isError}:\n  ${bad.content[0].text.replace(/\n/g, '\n  ')}`);

  const progress = [];
  await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
    onprogress: (p) => progress.push(`${p.progress}/${p.total}`),
  });
  console.log(`test_tool_with_progress -> progress ${progress.join(', ')}`);

  const res = await client.readResource({ uri: 'test://template/42/data' });
  console.log(`resources/read test://template/42/data -> ${res.contents[0].text}`);

  try {
    await client.callTool({ name: 'no_such_tool', arguments: {} });
  } catch (e) {
    console.log(`unknown tool -> JSON-RPC error ${e.code}: ${e.message}`);
  }
  console.log(`${label}: done in ${(performance.now() - t0).toFixed(1)} ms`);
}

async function main() {
  const stdio = new Client({ name: 'trove-demo', version: '0.1.0' });
  await stdio.connect(new StdioClientTransport({ command: binary, args: [], stderr: 'inherit' }));
  await tour(stdio, 'stdio');
  await stdio.close();

  const server = spawn(binary, ['--http', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await new Promise((resolve, reject) => {
    let buf = '';
    server.stderr.on('data', (d) => {
      buf += d;
      const m = buf.match(/listening on (http:\/\/\S+)/);
      if (m) resolve(m[1]);
    });
    server.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  const http = new Client({ name: 'trove-demo', version: '0.1.0' });
  await http.connect(new StreamableHTTPClientTransport(new URL(url)));
  await tour(http, `Streamable HTTP at ${url}`);
  await http.close();
  server.kill('SIGTERM');
}

main().catch((e) => {
  console.error(`demo failed: ${e.stack ?? e}`);
  process.exit(1);
});
