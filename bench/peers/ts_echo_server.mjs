// Benchmark peer (docs/mcp.md §7.1): the official MCP TypeScript SDK's McpServer over
// StdioServerTransport with one tool, `echo`, whose input and output schemas are both {text:
// string}. It returns the input as structuredContent plus one text item holding the same object as
// JSON.
//
// Only the stdio entry points are imported (server/mcp.js, server/stdio.js); loading the HTTP stack
// would add about 9 MiB of idle RSS (docs/mcp.md §7.1). zod comes from the SDK's own dependency;
// SDK 1.32 uses the zod v4 API internally and its examples import `zod/v4`.
//
// serverInfo.version is the installed SDK version, so the harness records the exact peer version.
//
// Run: node bench/peers/ts_echo_server.mjs   (stdio; no arguments)

import { readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import * as z from 'zod/v4';

function sdkVersion() {
  try {
    // .../node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.js -> .../sdk/package.json
    const url = new URL('../../../package.json', import.meta.resolve('@modelcontextprotocol/sdk/server/mcp.js'));
    return JSON.parse(readFileSync(url, 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

const server = new McpServer({ name: 'ts-sdk-echo', version: sdkVersion() });

server.registerTool(
  'echo',
  {
    description: 'Echo the input text back.',
    inputSchema: { text: z.string() },
    outputSchema: { text: z.string() },
  },
  async ({ text }) => {
    const structuredContent = { text };
    return {
      content: [{ type: 'text', text: JSON.stringify(structuredContent) }],
      structuredContent,
    };
  },
);

await server.connect(new StdioServerTransport());
