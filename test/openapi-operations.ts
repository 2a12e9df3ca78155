// The operations of Berth's OpenAPI document as the document-wide suites walk them
// (test/bad-input.test.ts, test/cross-organization.test.ts): each with its path, method and input
// schema, and one plain good value of a schema with real records behind its id fields.
import type { Client, Reply } from '@berth/core/testing';
import { zipOf } from '@berth/provider-source-drop/testing';

export interface Operation {
  /** namespace.name, as /api/<path> serves it */
  path: string;
  method: string;
  /** the JSON body's schema (an upload's form), or an object schema of the query parameters */
  schema: any;
  /** an upload's file field: the operation takes multipart/form-data (sendUpload sends it so) */
  upload?: string;
}

/** Every operation of the document (BERTH_FUZZ_ONLY=<regex> keeps only the matching paths, to chase a finding). */
export async function documentOperations(c: Client): Promise<Operation[]> {
  const doc = (await c.get('settings.getOpenApiDocument')).body;
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(methods)) {
      const form = op.requestBody?.content?.['multipart/form-data']?.schema;
      let schema: any = op.requestBody?.content?.['application/json']?.schema ?? form;
      if (!schema && op.parameters) {
        schema = { type: 'object', properties: {}, required: [] as string[] };
        for (const p of op.parameters) {
          if (p.in !== 'query') continue;
          schema.properties[p.name] = p.schema;
          if (p.required) schema.required.push(p.name);
        }
      }
      if (process.env.BERTH_FUZZ_ONLY && !new RegExp(process.env.BERTH_FUZZ_ONLY).test(path)) continue;
      const upload = Object.keys(form?.properties ?? {}).find(k => form.properties[k].format === 'binary');
      operations.push({ path: path.replace(/^\//, ''), method, schema: schema ?? { type: 'object', properties: {} }, ...(upload ? { upload } : {}) });
    }
  }
  return operations;
}

/** Plain values goodValue cannot guess from a schema, by field name (so an input's other fields pass the services' checks too). */
export const GOOD: Record<string, string> = {
  schedule: '0 3 * * *',
  cronExpression: '0 3 * * *',
  // a host of the run's own for forward auth's sign-in page (forwardAuth.setAuthDomain): nothing routes it
  authDomain: 'auth.fuzz.example.com',
  // a closed port: a connection test fails at once
  endpoint: 'http://127.0.0.1:9',
  mountPath: '/data/fuzz',
  // a role every organization has (organization.updateMemberRole takes a custom role's name too)
  role: 'admin',
  password: 'a long password',
  pin: '123456',
  dockerCompose: 'services:\n  web:\n    image: berth-test/busybox:1\n',
  composeFile: 'services:\n  web:\n    image: berth-test/busybox:1\n',
  // an application's own Traefik file is checked (it routes only its own domains): an empty one passes
  traefikConfig: 'http: {}\n',
  // a compose template as the peer's import takes it: base64 of {"compose": <compose file>, "config": <template.toml>}
  base64: Buffer.from(JSON.stringify({ compose: 'services:\n  web:\n    image: berth-test/busybox:1\n', config: '[variables]\n' })).toString('base64'),
  // what to suggest: a word of the language model stand-in's script (plugins/ai/test/llm-stand-in.ts) that answers one suggestion
  input: 'a web page scenario:good',
  // where an upload goes in a container (docker.uploadFileToContainer): a directory every image has
  destinationPath: '/tmp/berth-upload.txt',
  // the archive application.dropDeployment deploys: a page, one character a byte (as sendUpload sends a file's content)
  zip: (await zipOf({ 'index.html': '<h1>fuzz</h1>' })).toString('latin1'),
};

/**
 * An upload operation's input sent as the peer's clients send it: multipart/form-data, a string in
 * the file field as the file's content, one character a byte (latin1: a binary file such as GOOD's
 * zip survives the suites' JSON round trips; any other value of it as a text field, so no file),
 * every other field as text; the tRPC form with `trpc`.
 */
export function sendUpload(c: Client, op: Operation, input: Record<string, unknown>, trpc = false): Promise<Reply> {
  const { [op.upload!]: file, ...fields } = input;
  if (typeof file === 'string') return c.upload(op.path, fields, { field: op.upload!, name: 'upload.txt', content: Buffer.from(file, 'latin1') }, { trpc });
  return c.upload(op.path, { ...fields, [op.upload!]: file }, null, { trpc });
}

/**
 * One plain value a property of this schema accepts (best effort): a record's id where `ids` has
 * one for the property's name, else GOOD's value for the name, else one the schema describes.
 */
export function goodValue(name: string, schema: any, ids: Record<string, string>): unknown {
  if (!schema || typeof schema !== 'object') return 'x';
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return goodValue(name, branches.find((b: any) => b.type !== 'null') ?? branches[0], ids);
  const type = Array.isArray(schema.type) ? schema.type.find((x: string) => x !== 'null') : schema.type;
  if (ids[name] && type === 'string') return ids[name];
  if (GOOD[name] && type === 'string') return GOOD[name];
  switch (type) {
    case 'string':
      if (schema.format === 'email') return 'fuzz@example.com';
      if (schema.format === 'date-time') return new Date().toISOString();
      if (schema.format === 'uri') return 'https://example.com/x';
      if (/appName/i.test(name)) return 'fuzz-app';
      if (/port/i.test(name)) return '8080';
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    case 'array':
      // As few items as the schema takes (network.import's names: one).
      return Array.from({ length: schema.minItems ?? 0 }, () => goodValue(name, schema.items, ids));
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const req of schema.required ?? []) out[req] = goodValue(req, schema.properties?.[req], ids);
      return out;
    }
    default:
      return 'x';
  }
}

/** The id fields of the document's inputs (top-level properties named id or …Id). */
export const idFieldsOf = (operations: Operation[]): Set<string> => new Set(operations.flatMap(op => Object.keys(op.schema.properties ?? {}).filter(f => /Id$|^id$/.test(f))));

/**
 * Requests a document-wide suite keeps in flight at once where they are independent of each other
 * (one at a time leaves the server and PostgreSQL each half idle; BERTH_FUZZ_AT_ONCE=1 sends them
 * one by one, to chase a finding).
 */
export const AT_ONCE = Math.max(1, Number(process.env.BERTH_FUZZ_AT_ONCE ?? 6) || 1);

/** The kernel's pool (the suites import it from here beside AT_ONCE). */
export { inPool } from '@berth/core';
