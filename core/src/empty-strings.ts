// One rule for "" in the fields the peer types `string | null` with no minimum length (its forms
// send "" for an empty field, and it stores "" as sent): Berth accepts "" there whatever its own
// schema says of non-empty values, stores and answers it as sent, and every consumer (proxy files,
// labels, deploys) takes it as "not set". The fields are the generated list
// core/src/empty-string-fields.json (scripts/empty-string-fields.ts, from the peer's OpenAPI
// document). Elsewhere "" is left to each schema: a value where it allows one, a 400 where it gives
// a minimum length.
import list from './empty-string-fields.json' with { type: 'json' };

/** A field's path inside an input: property names, `*` for every item of an array. */
export type FieldPath = readonly string[];

const byOperation = new Map<string, FieldPath[]>(Object.entries(list.fields as Record<string, string[]>).map(([op, fields]) => [op, fields.map(f => f.split('.'))]));

/** The fields of an operation (`router.procedure`) where "" means "not set". */
export function emptyStringFields(operation: string): readonly FieldPath[] {
  return byOperation.get(operation) ?? [];
}

/** Every place in `value` a path reaches that holds "", as the object and key that hold it. */
function blanks(value: unknown, path: FieldPath, out: { holder: Record<string | number, unknown>; key: string | number }[]): void {
  if (!path.length || value === null || typeof value !== 'object') return;
  const [head, ...rest] = path;
  const keys: (string | number)[] = head === '*' ? (Array.isArray(value) ? value.map((_, i) => i) : []) : [head!];
  for (const key of keys) {
    const holder = value as Record<string | number, unknown>;
    if (!Object.hasOwn(holder, key)) continue;
    if (rest.length) blanks(holder[key], rest, out);
    else if (holder[key] === '') out.push({ holder, key });
  }
}

/**
 * Runs `check` on the input with "" in those fields taken as null (not set), then puts "" back:
 * the schema's constraints apply to real values only, and the handler gets the input as sent.
 */
export function checkingEmptyAsUnset<T>(value: T, fields: readonly FieldPath[], check: (value: T) => void): T {
  if (!fields.length) {
    check(value);
    return value;
  }
  const found: { holder: Record<string | number, unknown>; key: string | number }[] = [];
  for (const path of fields) blanks(value, path, found);
  for (const { holder, key } of found) holder[key] = null;
  try {
    check(value);
  } finally {
    for (const { holder, key } of found) holder[key] = '';
  }
  return value;
}

/** A stored value of such a field as its consumers read it: "" (or absent) is "not set". */
export const setOrNull = <T extends string>(value: T | null | undefined): T | null => (value ? value : null);
