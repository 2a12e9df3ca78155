// Compares an answer of Berth — its declared output schema (JSON Schema from the OpenAPI
// document) or a real JSON reply — with the peer's shape, field by field.
import type { Shape } from './shape.ts';

/**
 * A declared JSON Schema as a shape: types, nullability, required fields. A schema that refers
 * to itself (a tree, e.g. settings.readDirectories) is expanded once; its inner repeat is `any`.
 */
export function shapeOfSchema(schema: any, defs: Record<string, any> = {}, expanding: ReadonlySet<string> = new Set()): Shape {
  if (!schema || typeof schema !== 'object') return { t: 'any' };
  if (schema.$ref) {
    const name: string = schema.$ref.split('/').pop();
    if (expanding.has(name)) return { t: 'any' };
    return shapeOfSchema(defs[name], defs, new Set([...expanding, name]));
  }
  if (schema.allOf) {
    const parts = (schema.allOf as any[]).map(p => shapeOfSchema(p, defs, expanding));
    return { t: 'object', fields: Object.assign({}, ...parts.map(p => p.fields ?? {})) };
  }
  const variants: any[] | undefined = schema.anyOf ?? schema.oneOf;
  if (variants) {
    if (variants.every(v => typeof v.const === 'string' || v.type === 'string')) return { t: 'string' };
    const nonNull = variants.filter(v => v.type !== 'null');
    const nullable = nonNull.length < variants.length;
    const base: Shape = nonNull.length === 1 ? shapeOfSchema(nonNull[0], defs, expanding) : { t: 'any' };
    return nullable ? { ...base, null: true } : base;
  }
  if (Array.isArray(schema.type)) {
    const nonNull = schema.type.filter((t: string) => t !== 'null');
    const base = nonNull.length === 1 ? shapeOfSchema({ ...schema, type: nonNull[0] }, defs, expanding) : { t: 'any' as const };
    return nonNull.length < schema.type.length ? { ...base, null: true } : base;
  }
  if (schema.const === null || schema.type === 'null') return { t: 'any', null: true };
  if (!schema.type && Array.isArray(schema.enum) && schema.enum.every((e: unknown) => typeof e === 'string')) return { t: 'string' };
  if (!schema.type && typeof schema.const === 'string') return { t: 'string' };
  switch (schema.type) {
    case 'string':
      return { t: 'string' };
    case 'number':
    case 'integer':
      return { t: 'number' };
    case 'boolean':
      return { t: 'boolean' };
    case 'array':
      return { t: 'array', items: shapeOfSchema(schema.items, defs, expanding) };
    case 'object': {
      if (!schema.properties || !Object.keys(schema.properties).length) return { t: 'object' };
      const required = new Set<string>(schema.required ?? []);
      return {
        t: 'object',
        fields: Object.fromEntries(
          Object.entries(schema.properties).map(([k, v]) => {
            const s = shapeOfSchema(v, defs, expanding);
            return [k, required.has(k) ? s : { ...s, opt: true }];
          }),
        ),
      };
    }
    default:
      return { t: 'any' };
  }
}

/** A real reply as a shape (every value present, null where it is null). */
export function shapeOfValue(v: unknown): Shape {
  if (v === null) return { t: 'any', null: true };
  if (Array.isArray(v)) return { t: 'array', items: v.length ? mergeItems(v.map(shapeOfValue)) : undefined };
  switch (typeof v) {
    case 'string':
      return { t: 'string' };
    case 'number':
      return { t: 'number' };
    case 'boolean':
      return { t: 'boolean' };
    case 'object':
      return { t: 'object', fields: Object.fromEntries(Object.entries(v as object).map(([k, x]) => [k, shapeOfValue(x)])) };
    default:
      return { t: 'any' };
  }
}

/** The items of a real array, checked one by one: the first non-null item stands for them; a
 * field absent from some item is marked optional so that the comparison reports it. */
function mergeItems(items: Shape[]): Shape {
  const objects = items.filter(i => i.t === 'object' && i.fields);
  if (!objects.length) return items.find(i => !i.null) ?? items[0]!;
  const fields: Record<string, Shape> = {};
  for (const o of objects) for (const [k, s] of Object.entries(o.fields!)) if (!fields[k] || fields[k]!.null) fields[k] = s;
  for (const k of Object.keys(fields)) if (objects.some(o => !(k in o.fields!))) fields[k] = { ...fields[k]!, opt: true };
  return { t: 'object', fields };
}

export interface CompareOptions {
  /** fields Berth may answer beyond the peer's: a field name, or `path` from the answer's root (`environment.isDefault`) */
  allowedExtra: (path: string, name: string) => boolean;
  /** relations Berth declares as always empty or always null (namespaces it does not serve yet) */
  allowedOpaque: (path: string) => boolean;
  /** a real reply: a null value stands for any type (the reference's nullability is checked) */
  real?: boolean;
}

/** Every difference between the peer's shape and Berth's, one line each, with its path. */
export function compareShapes(ref: Shape, berth: Shape, opts: CompareOptions, path = ''): string[] {
  const at = path || '(answer)';
  if (ref.t === 'any') {
    return berth.null && !ref.null ? [`${at}: may be null, the peer's never is`] : [];
  }
  if (berth.null && !ref.null) return [`${at}: may be null, the peer's never is`];
  if (opts.real && berth.t === 'any' && berth.null) return [];
  // Declared as always null: a relation of a namespace Berth does not serve yet.
  if (berth.t === 'any' && berth.null && opts.allowedOpaque(path)) return [];
  if (berth.t === 'any') return [`${at}: declared without a type, the peer's is ${ref.t}`];
  if (berth.t !== ref.t) return [`${at}: ${berth.t}, the peer's is ${ref.t}`];
  if (ref.t === 'array') {
    if (!ref.items || !berth.items) return [];
    return compareShapes(ref.items, berth.items, opts, `${path}[]`);
  }
  if (ref.t !== 'object' || !ref.fields) return [];
  if (!berth.fields) return opts.allowedOpaque(path) ? [] : [`${at}: an open record, the peer's has ${Object.keys(ref.fields).length} fields`];
  const problems: string[] = [];
  for (const [name, want] of Object.entries(ref.fields)) {
    const got = berth.fields[name];
    const p = path ? `${path}.${name}` : name;
    if (!got) {
      if (!want.opt) problems.push(`${p}: missing`);
    } else if (got.opt && !want.opt) problems.push(`${p}: optional, the peer always answers it`);
    else problems.push(...compareShapes(want, got, opts, p));
  }
  for (const name of Object.keys(berth.fields)) {
    if (!(name in ref.fields) && !opts.allowedExtra(path, name)) problems.push(`${path ? `${path}.` : ''}${name}: not in the peer's answer`);
  }
  return problems;
}
