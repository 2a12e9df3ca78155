// A kind's field table, `{ field: [schema, default] }`, the one place its API fields are written:
// every kind derives their schemas and their defaults from it the same way.
import type { TSchema } from 'typebox';

/** Each field's schema and default. */
export type FieldTable = Record<string, [TSchema, unknown]>;

/** The table's schemas, by field. */
export const schemasOf = <T extends FieldTable>(table: T) => Object.fromEntries(Object.entries(table).map(([k, [s]]) => [k, s])) as { [K in keyof T]: T[K][0] };

/** The table's defaults, by field: a fresh copy each time, so a default list or object is never shared between records. */
export const defaultsOf = <T extends FieldTable>(table: T) => Object.fromEntries(Object.entries(table).map(([k, [, d]]) => [k, structuredClone(d)])) as Record<keyof T, unknown>;
