// A scratch PostgreSQL server for end-to-end tests (scripts/pg_scratch): start one in a
// temporary directory in a `before` hook and stop it in `after`. The env file it writes gives
// the URLs (unix socket with trust; TCP with the password).

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from './env.mjs';

const PG_SCRATCH = path.join(REPO_ROOT, 'scripts', 'pg_scratch');

// Starts a server; returns { dir, url, tcpUrl, password, urlFor(db), stop() }.
export function startPgScratch(prefix = 'trove-pg-e2e-') {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  execFileSync(PG_SCRATCH, ['start', dir], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 180000 });
  const vars = {};
  for (const line of readFileSync(path.join(dir, 'env'), 'utf8').split('\n')) {
    const eq = line.indexOf('=');
    if (eq < 0) continue;
    let value = line.slice(eq + 1);
    if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) value = value.slice(1, -1);
    vars[line.slice(0, eq)] = value;
  }
  const host = vars.TROVE_PG_HOST;
  const port = vars.TROVE_PG_PORT;
  return {
    dir,
    url: vars.TROVE_PG_URL,
    tcpUrl: vars.TROVE_PG_TCP_URL,
    password: vars.TROVE_PG_PASSWORD,
    port,
    // The unix-socket URL of database `db` (create it first with createDb).
    urlFor: (db) => `postgresql://trove@/${db}?host=${host}&port=${port}&gssencmode=disable`,
    createDb: (db) => execFileSync('/usr/lib/postgresql/15/bin/psql',
      ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', host, '-p', port, '-U', 'trove', '-d', 'trove',
        '-c', `CREATE DATABASE "${db}" TEMPLATE template0`]),
    stop: () => {
      try { execFileSync(PG_SCRATCH, ['stop', dir], { stdio: 'ignore', timeout: 180000 }); } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
