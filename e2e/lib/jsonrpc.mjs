// JSON-RPC 2.0 wire checks shared by the stdio and HTTP helpers.

import assert from 'node:assert/strict';
import { rawId } from './rawjson.mjs';

// Returns a list of problems with one outbound server message (empty when it is a well-formed
// JSON-RPC 2.0 request, notification or response). `text` is the raw JSON text.
export function messageProblems(text) {
  let msg;
  try {
    msg = JSON.parse(text);
  } catch (e) {
    return [`not JSON: ${e.message}`];
  }
  const problems = [];
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) {
    return [Array.isArray(msg) ? 'batch array on the wire' : 'not a JSON object'];
  }
  if (msg.jsonrpc !== '2.0') problems.push(`jsonrpc is ${JSON.stringify(msg.jsonrpc)}`);
  const hasId = Object.prototype.hasOwnProperty.call(msg, 'id');
  const hasResult = Object.prototype.hasOwnProperty.call(msg, 'result');
  const hasError = Object.prototype.hasOwnProperty.call(msg, 'error');
  if (typeof msg.method === 'string') {
    if (hasResult || hasError) problems.push('request/notification carries result or error');
    if (hasId && (typeof msg.id !== 'number' || !Number.isInteger(msg.id)) && typeof msg.id !== 'string') {
      problems.push(`server request id is ${JSON.stringify(msg.id)}`);
    }
    if (msg.params !== undefined && (msg.params === null || typeof msg.params !== 'object' ||
                                     Array.isArray(msg.params))) {
      problems.push('params is not an object');
    }
  } else if (msg.method !== undefined) {
    problems.push('method is not a string');
  } else {
    if (!hasId) problems.push('response without id');
    if (hasResult === hasError) problems.push('response must carry exactly one of result and error');
    if (hasError) {
      const e = msg.error;
      if (!e || typeof e !== 'object') problems.push('error is not an object');
      else {
        if (!Number.isInteger(e.code)) problems.push('error.code is not an integer');
        if (typeof e.message !== 'string') problems.push('error.message is not a string');
      }
    } else if (hasResult && (msg.result === null || typeof msg.result !== 'object' ||
                             Array.isArray(msg.result))) {
      problems.push('result is not an object');
    }
    if (hasId && msg.id === null && !hasError) problems.push('result with id null');
    const rid = rawId(text);
    if (hasId && msg.id !== null && typeof msg.id !== 'string' && !/^-?[0-9]+$/.test(rid ?? '')) {
      problems.push(`response id ${rid} is neither string, integer nor null`);
    }
  }
  return problems;
}

// Asserts that a parsed response is a JSON-RPC error with `code` (and `message` when given:
// a string for equality or a RegExp).
export function assertError(msg, code, message) {
  assert.ok(msg, 'no response');
  assert.ok(msg.error, `expected error ${code}, got ${JSON.stringify(msg).slice(0, 500)}`);
  assert.equal(msg.result, undefined, 'error response also carries result');
  assert.equal(msg.error.code, code, `error code: ${JSON.stringify(msg.error)}`);
  if (typeof message === 'string') assert.equal(msg.error.message, message);
  else if (message instanceof RegExp) assert.match(msg.error.message, message);
}

export function assertResult(msg) {
  assert.ok(msg, 'no response');
  assert.equal(msg.error, undefined, `expected result, got error ${JSON.stringify(msg.error)}`);
  assert.ok(msg.result && typeof msg.result === 'object', `no result object: ${JSON.stringify(msg)}`);
  return msg.result;
}

// The text of a tool result's first content item, asserting it is a text item.
export function firstText(result) {
  assert.ok(Array.isArray(result.content), `no content array: ${JSON.stringify(result)}`);
  assert.ok(result.content.length >= 1, 'empty content');
  assert.equal(result.content[0].type, 'text', `content[0]: ${JSON.stringify(result.content[0])}`);
  assert.equal(typeof result.content[0].text, 'string');
  return result.content[0].text;
}

// The `invalid arguments for tool '<name>':` text expected for the given failure lines.
export function validationText(tool, lines) {
  return [`invalid arguments for tool '${tool}':`, ...lines].join('\n');
}

export const INIT_PARAMS = (protocolVersion = '2025-11-25', capabilities = {}) => ({
  protocolVersion,
  capabilities,
  clientInfo: { name: 'trove-e2e', version: '0.0.0' },
});

// A message nested `depth` levels deep in total (the top-level object counts as level 1, params as
// level 2, then depth - 2 arrays), as a ping request with the given raw id.
export function nestedPing(depth, id = 1) {
  const inner = depth - 2;
  return `{"jsonrpc":"2.0","id":${id},"method":"ping","params":{"x":${'['.repeat(inner)}${']'.repeat(inner)}}}`;
}
