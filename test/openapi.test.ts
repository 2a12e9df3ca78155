// The OpenAPI document: valid OpenAPI 3.1 (checked by a real validator), one operation per
// registered procedure, each with its operationId, tag, request and 200 response schema.
import t from 'tap';
import { request } from 'node:http';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestServer, signUpAdmin, Client } from '@berth/core/testing';
import { examplePlugin } from './helpers.ts';

/** GET with a Host header of our choosing (fetch will not send one), as a request through a proxy or a DNS name arrives. */
function documentVia(url: string, host: string, apiKey: string): Promise<any> {
  return new Promise((resolve, reject) => {
    request(url, { headers: { host, 'x-api-key': apiKey } }, res => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', chunk => (text += chunk));
      res.on('end', () => resolve(JSON.parse(text)));
    })
      .on('error', reject)
      .end();
  });
}

t.test('the document is valid OpenAPI 3.1 and lists every operation of the registry', async t => {
  const server = await startTestServer({ extraPlugins: [examplePlugin] });
  t.teardown(() => server.destroy());
  const { client, apiKey } = await signUpAdmin(server);
  const r = await client.get('settings.getOpenApiDocument');
  t.equal(r.status, 200);
  const doc = r.body;
  t.equal(doc.openapi, '3.1.0');
  t.equal(doc.info.version, '1.0.0');
  // The server address is the one the request came to, not a configured or hard-coded one.
  t.same(doc.servers, [{ url: `${server.url}/api` }], 'the server address the request was made to');
  t.same(
    (await documentVia(`${server.url}/api/settings.getOpenApiDocument`, 'berth.example.com:8443', apiKey)).servers,
    [{ url: 'http://berth.example.com:8443/api' }],
    'a request to another host name gets that name',
  );

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
  type Proc = (typeof registry)[number];
  /** One assertion per structural check: the operations of the document that break it, each with the reason. */
  const breaking = (check: (proc: Proc, entry: { method: string; op: any }) => string | undefined) =>
    registry.flatMap(proc => {
      const entry = ops.get(`/${proc.path}`);
      const why = entry && check(proc, entry);
      return why ? [`${proc.path}: ${why}`] : [];
    });
  t.same(
    registry.filter(proc => !ops.has(`/${proc.path}`)).map(proc => proc.path),
    [],
    'every operation of the registry is in the document',
  );
  t.same(
    breaking((proc, { method }) => {
      const want = proc.kind === 'query' ? 'get' : 'post';
      return method === want ? undefined : `${method}, not ${want}`;
    }),
    [],
    'queries are GET, mutations POST',
  );
  t.same(
    breaking((proc, { op }) => (op.operationId === `${proc.router}-${proc.name}` ? undefined : `operationId ${op.operationId}`)),
    [],
    'every operationId is <router>-<name>',
  );
  t.same(
    breaking((proc, { op }) => (JSON.stringify(op.tags) === JSON.stringify([proc.router]) ? undefined : `tags ${JSON.stringify(op.tags)}`)),
    [],
    'every operation is tagged with its router',
  );
  t.same(
    breaking((_proc, { op }) => {
      const ok = op.responses?.['200']?.content?.['application/json']?.schema;
      return ok && (ok.type || ok.anyOf || ok.allOf || ok.$ref) ? undefined : `200 schema ${JSON.stringify(ok)}`;
    }),
    [],
    'every operation has a real 200 schema',
  );
  t.same(
    breaking((_proc, { op }) => (op.responses?.['400'] && op.responses['500'] ? undefined : 'no 400 or no 500')),
    [],
    'every operation declares its errors',
  );
  t.same(
    breaking((proc, { op }) => (proc.scope === 'public' || (op.responses?.['401'] && op.responses['403']) ? undefined : 'no 401 or no 403')),
    [],
    'every operation behind a credential declares 401/403',
  );
  t.same(
    breaking((proc, { op }) => (proc.kind !== 'mutation' || op.requestBody ? undefined : 'no request body')),
    [],
    'every mutation has a request body schema',
  );
  // Besides the procedures, only the raw routes that answer their own status codes on purpose: the push hooks.
  t.same(
    [...ops.keys()].filter(p => !registry.some(proc => `/${proc.path}` === p)),
    ['/deploy/github', '/deploy/{refreshToken}', '/deploy/{hookPath}/{refreshToken}'],
    'nothing in the document that the registry lacks but the push hooks',
  );
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
