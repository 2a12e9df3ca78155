#!/usr/bin/env node
// Where Berth's memory goes: the idle RSS of a ladder of smaller processes, each a fresh
// `node` that loads one more part of Berth's stack and then sits idle. Read it next to
// bench/api.ts, which measures the real server.
//
//   node bench/baseline.ts [--idle S] [--node-arg=--flag ...] [--env KEY=VALUE ...]
//
// Needs PostgreSQL on 127.0.0.1 (BERTH_BENCH_PG) for the "pg" rung only; everything else is
// local. Every child is bounded in time and killed at the end; temporary data is removed.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, readdirSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const coreDir = path.join(root, 'core');
const { values: opt } = parseArgs({
  options: { idle: { type: 'string', default: '5' }, 'node-arg': { type: 'string', multiple: true, default: [] }, env: { type: 'string', multiple: true, default: [] } },
});
const idleMs = Number(opt.idle) * 1000;
const extraEnv = Object.fromEntries(opt.env.map(kv => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
const adminUrl = process.env.BERTH_BENCH_PG ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
if (new URL(adminUrl).hostname !== '127.0.0.1') throw new Error('BERTH_BENCH_PG must point at 127.0.0.1');
const MB = 1024 * 1024;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'berth-baseline-'));
const url = (p: string) => JSON.stringify(pathToFileURL(path.join(root, p)).href);
const plugins = readdirSync(path.join(root, 'plugins')).filter(d => existsSync(path.join(root, 'plugins', d, 'src/index.ts')));

/** Each rung: a module body run with cwd core/ (so Berth's dependencies resolve); it prints READY when done. */
const rungs: [string, string][] = [
  ['node, nothing loaded', ''],
  ['+ type stripping (one .ts file loaded: Node loads its TypeScript stripper)', `await import(${url('core/src/errors.ts')});`],
  ['fastify, one route, listening', `const F = (await import('fastify')).default; const a = F(); a.get('/', async () => ({})); await a.listen({ port: 0, host: '127.0.0.1' });`],
  ['typebox + typebox/value', `await import('typebox'); await import('typebox/value');`],
  ['pg, one query', `const pg = (await import('pg')).default; const c = new pg.Client({ connectionString: ${JSON.stringify(adminUrl)} }); await c.connect(); await c.query('select 1');`],
  ['@mikro-orm/postgresql + migrations (imported)', `await import('@mikro-orm/postgresql'); await import('@mikro-orm/migrations');`],
  ['agenda + postgres backend (imported)', `await import('agenda'); await import('@agendajs/postgres-backend');`],
  ['@fastify/swagger + swagger-ui (imported)', `await import('@fastify/swagger'); await import('@fastify/swagger-ui');`],
  ['Berth kernel and every plugin (imported, not started)', `await import(${url('core/src/kernel.ts')}); ${plugins.map(p => `await import(${url(`plugins/${p}/src/index.ts`)});`).join(' ')}`],
];

function mem(pid: number) {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (f: string) => Number(new RegExp(`^${f}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM'), anon: kb('RssAnon'), file: kb('RssFile') };
}

async function measure(name: string, body: string) {
  const args = [
    ...opt['node-arg'],
    ...(name.includes('--expose-gc') ? ['--expose-gc'] : []),
    '--input-type=module',
    '-e',
    `${body}\nprocess.stdout.write('READY\\n'); setInterval(() => {}, 1 << 30);`,
  ];
  const child = spawn(process.execPath, args, { cwd: coreDir, env: { ...process.env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', d => {
    out += d;
  });
  child.stderr.on('data', d => {
    out += d;
  });
  const exited = new Promise(r => child.once('exit', r));
  try {
    const until = Date.now() + 120_000;
    while (!out.includes('READY')) {
      if (child.exitCode !== null) throw new Error(`exited: ${out.slice(-500)}`);
      if (Date.now() > until) throw new Error('not ready within 120 s');
      await sleep(50);
    }
    await sleep(idleMs);
    return mem(child.pid!);
  } finally {
    child.kill('SIGKILL');
    await Promise.race([exited, sleep(5000)]);
  }
}

const lines = [`| process (idle ${idleMs / 1000} s) | RSS (MB) | private / file-backed (MB) | peak (MB) |`, '|---|---|---|---|'];
try {
  for (const [name, body] of rungs) {
    try {
      const m = await measure(name, body);
      lines.push(`| ${name} | ${(m.rss / MB).toFixed(1)} | ${(m.anon / MB).toFixed(1)} / ${(m.file / MB).toFixed(1)} | ${(m.hwm / MB).toFixed(1)} |`);
    } catch (e) {
      lines.push(`| ${name} | failed: ${(e as Error).message.split('\n')[0]} | | |`);
    }
    process.stderr.write(`${lines.at(-1)}\n`);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
const flags = [...opt['node-arg'], ...opt.env];
process.stdout.write(`\nnode ${process.version}${flags.length ? `, with ${flags.join(' ')}` : ''}\n\n${lines.join('\n')}\n`);
