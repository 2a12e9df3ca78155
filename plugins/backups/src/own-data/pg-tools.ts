// libpq's tools (pg_dump, psql) run on Berth's own database: argument arrays, and the connection
// (password included) passed through PG* environment variables, never on a command line.
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { PoolConfig } from 'pg';

/** The PG* variables of a node-postgres connection (a URL, or host/port/user/password/database; the embedded server's host is its socket directory). */
export function libpqEnv(pool: PoolConfig): Record<string, string> {
  if (pool.connectionString) {
    const url = new URL(pool.connectionString);
    const env: Record<string, string> = {
      PGHOST: url.searchParams.get('host') ?? url.hostname,
      PGPORT: url.port || '5432',
      PGUSER: decodeURIComponent(url.username),
      PGPASSWORD: decodeURIComponent(url.password),
    };
    // Without a database in the URL, libpq's default (the user's name) applies, as for node-postgres.
    if (url.pathname.length > 1) env.PGDATABASE = decodeURIComponent(url.pathname.slice(1));
    const sslmode = url.searchParams.get('sslmode');
    if (sslmode) env.PGSSLMODE = sslmode;
    return env;
  }
  return { PGHOST: String(pool.host), PGPORT: String(pool.port ?? 5432), PGUSER: String(pool.user), PGPASSWORD: String(pool.password ?? ''), PGDATABASE: String(pool.database) };
}

/** Runs a libpq tool found on PATH; stdin/stdout are streamed; rejects with its last error lines. */
export function runPgTool(tool: 'pg_dump' | 'psql', args: string[], pool: PoolConfig, io: { stdin?: Readable; stdout?: Writable }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool, args, { stdio: [io.stdin ? 'pipe' : 'ignore', io.stdout ? 'pipe' : 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...libpqEnv(pool) } });
    let errors = '';
    child.stderr!.setEncoding('utf8').on('data', (s: string) => {
      errors = (errors + s).slice(-2000);
    });
    if (io.stdin) io.stdin.pipe(child.stdin!);
    if (io.stdout) child.stdout!.pipe(io.stdout, { end: false });
    child.once('error', e => reject(new Error(`${tool} could not be started (${e.message}); install PostgreSQL's client tools (Debian: postgresql-client)`)));
    child.once('close', code => (code === 0 ? resolve() : reject(new Error(`${tool} failed (exit ${code}): ${errors.trim()}`))));
  });
}
