// The production binaries under $TROVE_BUILD_DIR, and the client configuration the README shows.
//
// SERVERS names each MCP server as a client starts it: `command` and `args` for stdio, and the
// same with `--http 0` appended for Streamable HTTP (startHttpServer in http.mjs).

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BUILD_DIR, REPO_ROOT } from './env.mjs';

export const WARDEN = path.join(BUILD_DIR, 'src', 'warden', 'cli', 'warden');
export const WARDEN_NET = path.join(BUILD_DIR, 'src', 'warden', 'cli', 'warden-net');
export const KODOC = path.join(BUILD_DIR, 'src', 'kodo', 'cli', 'kodoc');
export const KODO = path.join(BUILD_DIR, 'src', 'kodo', 'cli', 'kodo');
export const KODO_MCP = path.join(BUILD_DIR, 'src', 'kodo', 'cli', 'kodo-mcp');
export const LIBRARIAN = path.join(BUILD_DIR, 'src', 'librarian', 'cli', 'librarian');

// One entry per production MCP server. `args(db)` gives the arguments for stdio; WARDEN needs a
// KB (`warden init` or an ingest creates one), the others need nothing.
export const SERVERS = {
  warden: { bin: WARDEN, args: (db) => ['mcp', '--db', db] },
  kodo: { bin: KODO_MCP, args: () => [] },
  librarian: { bin: LIBRARIAN, args: () => ['mcp'] },
};

// Returns the `mcpServers` object of the first ```json block in README.md that contains the key
// "mcpServers" (the README's client configuration). Throws when there is none.
export function readmeMcpServers(readme = path.join(REPO_ROOT, 'README.md')) {
  const text = readFileSync(readme, 'utf8');
  const blocks = [...text.matchAll(/^```json[^\n]*\n([\s\S]*?)^```/gm)].map((m) => m[1]);
  const block = blocks.find((b) => b.includes('"mcpServers"'));
  if (!block) throw new Error(`${readme}: no \`\`\`json block with "mcpServers"`);
  const parsed = JSON.parse(block);
  if (!parsed.mcpServers || typeof parsed.mcpServers !== 'object') {
    throw new Error(`${readme}: the json block has no mcpServers object`);
  }
  return parsed.mcpServers;
}
