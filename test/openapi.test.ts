// The OpenAPI document: valid OpenAPI 3.1 (checked by a real validator), one operation per
// registered procedure, each with its operationId, tag, request and 200 response schema.
import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestServer, signUpAdmin, Client } from '@berth/core/testing';
import { examplePlugin } from './helpers.ts';

t.test('the document is valid OpenAPI 3.1 and lists every operation of the registry', async t => {
  const server = await startTestServer({ extraPlugins: [examplePlugin] });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const r = await client.get('settings.getOpenApiDocument');
  t.equal(r.status, 200);
  const doc = r.body;
  t.equal(doc.openapi, '3.1.0');
  t.equal(doc.info.version, '1.0.0');
  t.same(doc.servers, [{ url: `${server.url.replace('127.0.0.1', '127.0.0.1')}/api` }]);

  const validator = new Validator();
  const result = await validator.validate(structuredClone(doc));
  t.ok(result.valid, `valid OpenAPI: ${JSON.stringify(result.errors ?? []).slice(0, 2000)}`);
  t.equal(validator.version, '3.1');

  const registry = server.kernel.container.cradle.registry.all();
  t.ok(registry.length > 40, 'a non-trivial registry');
  const ops = new Map<string, { method: string; op: any }>();
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(methods)) ops.set(path, { method, op });
  }
  for (const proc of registry) {
    const entry = ops.get(`/${proc.path}`);
    t.ok(entry, `${proc.path} is in the document`);
    if (!entry) continue;
    t.equal(entry.method, proc.kind === 'query' ? 'get' : 'post', `${proc.path} method`);
    t.equal(entry.op.operationId, `${proc.router}-${proc.name}`);
    t.same(entry.op.tags, [proc.router]);
    const ok = entry.op.responses?.['200']?.content?.['application/json']?.schema;
    t.ok(ok && (ok.type || ok.anyOf || ok.allOf || ok.$ref), `${proc.path} has a real 200 schema`);
    t.ok(entry.op.responses['400'] && entry.op.responses['500'], `${proc.path} declares its errors`);
    if (proc.access !== 'public') t.ok(entry.op.responses['401'] && entry.op.responses['403'], `${proc.path} declares 401/403`);
    if (proc.kind === 'mutation') t.ok(entry.op.requestBody, `${proc.path} has a request body schema`);
  }
  t.equal(ops.size, registry.length, 'nothing in the document that the registry lacks');
  t.ok(doc.components.schemas['error.BAD_REQUEST'], 'error schemas');
  t.ok(doc.components.securitySchemes.apiKey && doc.components.securitySchemes.Authorization, 'both credentials');

  // Swagger UI serves the same operations.
  const ui = await new Client(server.url).raw('/swagger/json');
  t.equal(ui.status, 200);
  t.equal(Object.keys(ui.body.paths).length, ops.size);
  const html = await fetch(`${server.url}/swagger/static/index.html`);
  t.equal(html.status, 200);
});

t.test('a disabled plugin is absent from the document', async t => {
  const server = await startTestServer({ plugins: ['auth', 'user', 'organization'] });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const doc = (await client.get('settings.getOpenApiDocument')).body;
  t.ok(doc.paths['/auth.login']);
  t.notOk(doc.paths['/project.all']);
  t.notOk(Object.keys(doc.paths).some(p => p.startsWith('/environment.')));
});
