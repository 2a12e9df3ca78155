// The workloads of some environments as environment and project reads list them, for every kind
// at once in one SQL query (issue 17: a read used to run one ORM query per registered kind, and
// those queries were most of project.one's time). A kind takes part when it names its
// `listSource` and every field of its listItem (but `server`) is a property of that entity of the
// same name (its id field the primary key) or a key of the JSON property it names; the query
// reads just those values as text (timestamps as ISO strings in UTC, as the API writes them). Any
// other kind is listed through its own `list` by the registry.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TSchema } from 'typebox';

/** What of a workload kind (registry.ts's WorkloadKind) the query reads. */
export interface SummaryKind {
  readonly idField: string;
  readonly listItem: unknown;
  readonly listSource?: { entity: unknown; json?: string };
}

type Property = { fieldNames?: string[]; runtimeType?: string; type?: string };
type Metadata = { tableName: string; schema?: string; primaryKeys: string[]; properties: Record<string, Property> };

/** How one kind's summaries are read: its table, environment and order columns, and the column (SQL) of each field. */
interface Source<K extends SummaryKind> {
  kind: K;
  table: string;
  environment: string;
  createdAt: string;
  key: string;
  fields: [field: string, sql: string][];
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
const column = (p: Property | undefined) => (p?.fieldNames?.length === 1 ? quote(p.fieldNames[0]!) : null);
const isDate = (p: Property) => p.runtimeType === 'Date' || /date|time/i.test(String(p.type ?? ''));
/** A timestamp as the API writes it (toISOString: milliseconds, UTC, Z). */
const isoSql = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The kind's source, or null when it cannot be read this way (no listSource, or a field that is neither a column nor in its JSON). */
export function summarySource<K extends SummaryKind>(kind: K, em: EntityManager): Source<K> | null {
  if (!kind.listSource) return null;
  // cast: a kind's entity is known only at run time (its plugin registers it).
  const meta = em.getMetadata().find(kind.listSource.entity as never) as Metadata | undefined;
  if (!meta || meta.primaryKeys.length !== 1) return null;
  const key = column(meta.properties[meta.primaryKeys[0]!]);
  const environment = column(meta.properties.environmentId);
  const createdAt = column(meta.properties.createdAt);
  if (!key || !environment || !createdAt) return null;
  const json = kind.listSource.json ? column(meta.properties[kind.listSource.json]) : null;
  const fields: [string, string][] = [];
  for (const field of Object.keys((kind.listItem as TSchema & { properties: Record<string, TSchema> }).properties)) {
    if (field === 'server') continue; // the remote server: null until servers are served
    const prop = meta.properties[field === kind.idField ? meta.primaryKeys[0]! : field];
    const col = column(prop);
    if (prop && col) fields.push([field, isDate(prop) ? isoSql(col) : `${col}::text`]);
    else if (json && /^[A-Za-z0-9_]+$/.test(field)) fields.push([field, `(${json} ->> '${field}')`]);
    else return null;
  }
  return { kind, table: meta.schema ? `${quote(meta.schema)}.${quote(meta.tableName)}` : quote(meta.tableName), environment, createdAt, key, fields };
}

/** Every source's workloads in the environments, by kind and then environment, in each kind's order (oldest first). */
export async function readSummaries<K extends SummaryKind>(sources: Source<K>[], environmentIds: string[], em: EntityManager): Promise<Map<K, Map<string, Record<string, unknown>[]>>> {
  const out = new Map<K, Map<string, Record<string, unknown>[]>>(sources.map(s => [s.kind, new Map()]));
  if (!sources.length || !environmentIds.length) return out;
  const parts = sources.map(
    (s, i) =>
      `select ${i} as k, ${s.environment} as e, ${s.createdAt} as c, ${s.key}::text as p, json_build_array(${s.fields.map(f => f[1]).join(', ')}) as v from ${s.table} where ${s.environment} in (?)`,
  );
  const rows = await em.execute<{ k: number; e: string; v: (string | null)[] }[]>(
    `${parts.join(' union all ')} order by k, c, p`,
    sources.map(() => environmentIds),
  );
  for (const row of rows) {
    const source = sources[row.k]!;
    const item: Record<string, unknown> = Object.fromEntries(source.fields.map(([field], i) => [field, row.v[i] ?? null]));
    if ('server' in (source.kind.listItem as TSchema & { properties: object }).properties) item.server = null;
    const byEnvironment = out.get(source.kind)!;
    if (!byEnvironment.has(row.e)) byEnvironment.set(row.e, []);
    byEnvironment.get(row.e)!.push(item);
  }
  return out;
}
