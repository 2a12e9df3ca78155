// berth db copy, the backups plugin's operator command beside berth restore: copies Berth's records
// from one PostgreSQL database into its own (new, empty) one, whose schema Berth has just created:
// how data moves from an earlier embedded engine, or between the embedded database and an
// external one. Values travel as PostgreSQL's own text forms, so every type round-trips
// exactly (no JavaScript dates or numbers in between); one transaction on the target, so a
// failed copy leaves it as it was.
import { parseArgs } from 'node:util';
import pg, { type PoolConfig } from 'pg';
import type { CommandContext, Kernel, PluginCommand } from '@berth/core';

const usage = 'berth db copy --from <postgresql://…>';

async function dbCopy(args: string[], context: CommandContext): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'copy') throw new Error(`unknown subcommand ${sub ?? '(none)'}\nusage: ${usage}`);
  const { values } = parseArgs({ args: rest, options: { from: { type: 'string' } } });
  if (!values.from || !/^postgres(ql)?:\/\//.test(values.from)) throw new Error(`--from takes the URL of the PostgreSQL database to copy from\nusage: ${usage}`);
  let kernel: Kernel | undefined;
  try {
    // Opening the kernel creates (or migrates) the schema the records are copied into.
    kernel = await context.openKernel();
    const copied = await copyDatabase(values.from, kernel.database.pool);
    for (const { table, rows } of copied) context.out(`${table}\t${rows}\n`);
  } finally {
    await kernel?.stop();
  }
}

export const dbCommand: PluginCommand = { name: 'db', usage, run: dbCopy };

/** Rows per INSERT, under PostgreSQL's 65,535 parameters per statement. */
const batchOf = (columns: number) => Math.max(1, Math.min(500, Math.floor(60_000 / columns)));
/** The target's own: its migrations are the ones that built its schema; its jobs are recreated at start. */
const MIGRATIONS = 'berth_migrations';
const JOBS = 'berth_jobs';

interface CopiedTable {
  table: string;
  rows: number;
}

async function copyDatabase(fromUrl: string, to: PoolConfig): Promise<CopiedTable[]> {
  // Every value as text, exactly as the server prints it.
  // cast: pg's types want its full type-parser set; every column read as text needs only getTypeParser.
  const source = new pg.Client({ connectionString: fromUrl, types: { getTypeParser: () => (value: string) => value } as never });
  const target = new pg.Client(to);
  await source.connect();
  try {
    await target.connect();
    try {
      return await copy(source, target);
    } finally {
      await target.end();
    }
  } finally {
    await source.end();
  }
}

async function copy(source: pg.Client, target: pg.Client): Promise<CopiedTable[]> {
  const sourceMigrations = await source.query<{ name: string }>(`select name from ${MIGRATIONS}`).catch(() => {
    throw new Error(`the source database has no ${MIGRATIONS} table: it is not a Berth database`);
  });
  const targetMigrations = new Set((await target.query<{ name: string }>(`select name from ${MIGRATIONS}`)).rows.map(r => r.name));
  const newer = sourceMigrations.rows.map(r => r.name).filter(n => !targetMigrations.has(n));
  if (newer.length) throw new Error(`the source database was written by a newer Berth or by plugins not enabled here (migrations ${newer.join(', ')}): copy with that Berth and those plugins`);

  const sourceColumns = await columns(source);
  const targetColumns = await columns(target);
  const tables = ordered(await foreignKeys(target), [...targetColumns.keys()]).filter(t => t !== MIGRATIONS && sourceColumns.has(t));
  for (const table of tables) {
    if (table === JOBS) continue;
    const { rows } = await target.query(`select 1 from ${ident(table)} limit 1`);
    if (rows.length) throw new Error(`the target database already holds records (table ${table}): copy only into a new, empty one`);
  }

  const copied: CopiedTable[] = [];
  await source.query('begin isolation level repeatable read read only');
  await target.query('begin');
  try {
    if (targetColumns.has(JOBS)) await target.query(`delete from ${ident(JOBS)}`);
    for (const table of tables) {
      const have = new Set(sourceColumns.get(table));
      const cols = targetColumns.get(table)!.filter(c => have.has(c));
      const list = cols.map(ident).join(', ');
      await source.query(`declare rows_of no scroll cursor for select ${list} from ${ident(table)}`);
      let count = 0;
      for (;;) {
        const { rows } = await source.query({ text: `fetch ${batchOf(cols.length)} from rows_of`, rowMode: 'array' });
        if (!rows.length) break;
        const params: unknown[] = [];
        const tuples = rows.map((row: unknown[]) => `(${row.map(v => `$${params.push(v)}`).join(', ')})`);
        await target.query(`insert into ${ident(table)} (${list}) values ${tuples.join(', ')}`, params);
        count += rows.length;
      }
      await source.query('close rows_of');
      copied.push({ table, rows: count });
    }
    // Sequences continue after the copied keys.
    const { rows: sequences } = await target.query<{ table_name: string; column_name: string; seq: string }>(
      `select table_name, column_name, pg_get_serial_sequence(quote_ident(table_name), column_name) as seq
         from information_schema.columns where table_schema = 'public' and pg_get_serial_sequence(quote_ident(table_name), column_name) is not null`,
    );
    for (const s of sequences) {
      await target.query(`select setval($1, coalesce(max(${ident(s.column_name)}), 1), max(${ident(s.column_name)}) is not null) from ${ident(s.table_name)}`, [s.seq]);
    }
    await target.query('commit');
  } catch (e) {
    await target.query('rollback').catch(() => {});
    throw e;
  } finally {
    await source.query('rollback').catch(() => {});
  }
  return copied;
}

async function columns(c: pg.Client): Promise<Map<string, string[]>> {
  const { rows } = await c.query<{ table_name: string; column_name: string }>(
    `select c.table_name, c.column_name from information_schema.columns c
       join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
      where c.table_schema = 'public' and c.is_generated = 'NEVER'
      order by c.table_name, c.ordinal_position`,
  );
  const map = new Map<string, string[]>();
  for (const r of rows) map.set(r.table_name, [...(map.get(r.table_name) ?? []), r.column_name]);
  return map;
}

/** Each table and the tables its foreign keys point at. */
async function foreignKeys(c: pg.Client): Promise<Map<string, string[]>> {
  const { rows } = await c.query<{ child: string; parent: string }>(
    `select cl.relname as child, pcl.relname as parent from pg_constraint k
       join pg_class cl on cl.oid = k.conrelid join pg_class pcl on pcl.oid = k.confrelid
       join pg_namespace n on n.oid = cl.relnamespace
      where k.contype = 'f' and n.nspname = 'public'`,
  );
  const map = new Map<string, string[]>();
  for (const r of rows) if (r.child !== r.parent) map.set(r.child, [...(map.get(r.child) ?? []), r.parent]);
  return map;
}

/** Parents before children, so every foreign key finds its row. */
function ordered(parents: Map<string, string[]>, tables: string[]): string[] {
  const done = new Set<string>();
  const out: string[] = [];
  const visit = (t: string, path: string[]) => {
    if (done.has(t)) return;
    if (path.includes(t)) throw new Error(`tables ${[...path, t].join(' → ')} refer to each other in a cycle; this copy cannot order them`);
    for (const p of parents.get(t) ?? []) visit(p, [...path, t]);
    done.add(t);
    out.push(t);
  };
  for (const t of [...tables].sort()) visit(t, []);
  return out;
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
