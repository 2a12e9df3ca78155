// compose.* records and file operations through the real kernel and PostgreSQL: both variants,
// bad input naming the field, randomize and isolated deployment, the converted file with a
// domain, the report of ignored keys, organizations kept apart, and templates: the catalog, a
// base64 template previewed and imported, and a catalog template deployed on the real engine.
import t from 'tap';
import { mkdtemp, mkdir, writeFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { parse } from 'yaml';
import { startTestServer, signUpAdmin, deploymentIdOf, otherOrganization, deploymentFinished, freePort, waitFor, TEST_BASE_IMAGE } from '@berth/core/testing';

t.setTimeout(600_000);
const docker = new Docker();
const issuePaths = (body: { issues?: { path: (string | number)[] }[] }) => (body.issues ?? []).map(i => i.path.join('.'));

const FILE = `# keep me
services:
  web:
    image: ${TEST_BASE_IMAGE}
    build: ./web
    depends_on:
      - db
    x-custom: kept
    volumes:
      - data:/data
  db:
    image: ${TEST_BASE_IMAGE}
    container_name: the-db
volumes:
  data: {}
`;

/** A catalog in the peer's template layout: meta.json and blueprints/<id>/{docker-compose.yml,template.toml}. */
async function catalog(port: number): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'berth-test-templates-'));
  await writeFile(
    path.join(dir, 'meta.json'),
    JSON.stringify([{ id: 'hello', name: 'Hello', description: 'a web page from a file mount', version: '1.0', logo: 'hello.svg', links: { github: 'https://example.com' }, tags: ['web', 'demo'] }]),
  );
  const bp = path.join(dir, 'blueprints', 'hello');
  await mkdir(bp, { recursive: true });
  await writeFile(
    path.join(bp, 'docker-compose.yml'),
    `services:
  web:
    image: ${TEST_BASE_IMAGE}
    init: true
    stop_grace_period: 1s
    command: ["sh", "-c", "exec httpd -f -p 8080 -h /www"]
    environment:
      - SECRET=\${SECRET}
    ports:
      - target: 8080
        published: ${port}
        mode: host
    volumes:
      - ../files/index.html:/www/index.html:ro
`,
  );
  await writeFile(
    path.join(bp, 'template.toml'),
    `[variables]
main_domain = "\${domain}"
secret = "\${password:24}"

[config]
[[config.domains]]
serviceName = "web"
port = 8080
host = "\${main_domain}"

[config.env]
SECRET = "\${secret}"

[[config.mounts]]
filePath = "index.html"
content = "hello from a template"
`,
  );
  return dir;
}

t.test('compose records and files', async t => {
  const port = await freePort();
  const templates = await catalog(port);
  const server = await startTestServer({ proxy: 'none', templatesSource: templates, deploySettleSeconds: 1 });
  t.teardown(async () => {
    await server.destroy();
    await rm(templates, { recursive: true, force: true });
  });
  const { client, token, userId } = await signUpAdmin(server);
  const {
    body: { project, environment },
  } = await client.post('project.create', { name: 'Files' });

  const created = await client.post('compose.create', { name: 'files', environmentId: environment.environmentId, composeType: 'stack', composeFile: FILE });
  t.equal(created.status, 200);
  const { composeId, appName } = created.body;
  t.match(created.body, { composeType: 'stack', sourceType: 'raw', composeStatus: 'idle', suffix: '', randomize: false, isolatedDeployment: false });

  t.test('older variant: projectId with a bearer token lands in the default environment', async t => {
    const res = await client.post('compose.create', { name: 'older', projectId: project.projectId, appName: 'older-stack' }, { apiKey: undefined, token });
    t.equal(res.status, 200);
    t.match(res.body, { appName: 'older-stack', environmentId: environment.environmentId, sourceType: 'github', composeType: 'docker-compose' });
    t.equal((await client.post('compose.create', { name: 'again', environmentId: environment.environmentId, appName: 'older-stack' })).status, 409, 'appName is unique per host');
    const listed = (await client.get('environment.one', { environmentId: environment.environmentId })).body;
    t.ok(
      listed.compose.some((c: { composeId: string }) => c.composeId === res.body.composeId),
      'environment.one lists the stack under compose',
    );
    t.equal((await client.post('compose.delete', { composeId: res.body.composeId, deleteVolumes: false })).status, 200);
  });

  t.test('bad input names the field', async t => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['compose.create', { environmentId: environment.environmentId }, 'name'],
      ['compose.create', { name: 'x', environmentId: environment.environmentId, composeType: 'swarm' }, 'composeType'],
      ['compose.create', { name: 'x', environmentId: environment.environmentId, appName: 'a b' }, 'appName'],
      ['compose.update', { composeId, composePath: '' }, 'composePath'],
      ['compose.update', { composeId, composeFile: 'services: [unclosed' }, 'composeFile'],
      ['compose.update', { composeId, command: 'docker-compose up -d && curl evil' }, 'command'],
      ['compose.delete', { composeId }, 'deleteVolumes'],
      ['compose.randomizeCompose', { composeId, suffix: 'a b' }, 'suffix'],
      ['compose.randomizeCompose', { composeId, suffix: '_x' }, 'suffix'],
      ['compose.import', { composeId, base64: Buffer.from('not json').toString('base64') }, 'base64'],
    ];
    for (const [op, input, field] of cases) {
      const res = await client.post(op, input);
      t.equal(res.status, 400, `${op} ${JSON.stringify(input).slice(0, 80)}`);
      t.ok(issuePaths(res.body).includes(field), `names ${field}: ${JSON.stringify(res.body.issues)}`);
    }
  });

  t.test('randomize and isolated deployment answer the transformed file', async t => {
    const randomized = (await client.post('compose.randomizeCompose', { composeId, suffix: 'abc' })).body as string;
    const services = (parse(randomized) as { services: Record<string, { depends_on?: string[] }> }).services;
    t.same(Object.keys(services).sort(), ['db-abc', 'web-abc'], 'services get the suffix');
    t.same(services['web-abc']?.depends_on, ['db-abc'], 'and their references');
    t.match(randomized, /# keep me/, 'comments survive');
    t.match(randomized, /x-custom: kept/, 'unknown keys survive');
    // Found by the bad-input fuzz: a generated suffix began with - or _ (base64url) about one time in 32, a 500.
    const generated = await Promise.all(Array.from({ length: 200 }, () => client.post('compose.randomizeCompose', { composeId })));
    t.same([...new Set(generated.map(r => r.status))], [200], 'without a suffix, a generated one works every time (200 tries)');
    t.ok(
      generated.every(r => /web-[0-9a-f]{8}:/.test(r.body)),
      'eight hex characters, as the peer',
    );
    const isolated = (await client.post('compose.isolatedDeployment', { composeId })).body as string;
    t.match(isolated, new RegExp(`networks:[\\s\\S]*${appName.toLowerCase()}`), 'the stack gets a network of its own');
    t.equal((await client.get('compose.one', { composeId })).body.composeFile, FILE, 'neither is saved');
  });

  t.test('the converted file (no proxy: no routing added); the ignored keys are reported', async t => {
    const domain = await client.post('domain.create', { host: 'files.example.com', port: 8080, composeId, serviceName: 'web', domainType: 'compose' });
    t.equal(domain.status, 200, JSON.stringify(domain.body));
    const converted = (await client.get('compose.getConvertedCompose', { composeId })).body as string;
    t.notMatch(converted, /berth-network/, 'with proxy none, no service joins the platform network (the live proxy test covers Caddy)');
    t.match(converted, /x-custom: kept/, 'unknown keys survive');
    t.match(converted, /# keep me/, 'comments survive');
    const ignored = (await client.get('compose.getIgnoredKeys', { composeId })).body as { service: string; key: string }[];
    for (const key of ['build', 'depends_on', 'container_name'])
      t.ok(
        ignored.some(i => i.key === key),
        `a stack ignores ${key}`,
      );
    t.same((await client.get('compose.loadServices', { composeId })).body, ['web', 'db']);
    t.match((await client.get('compose.getDefaultCommand', { composeId })).body, /^docker stack deploy/);
  });

  t.test('another organization sees none of it', async t => {
    const other = await otherOrganization(server, userId);
    t.equal((await other.client.get('compose.one', { composeId })).status, 404);
    t.equal((await other.client.post('compose.deploy', { composeId })).status, 404);
    t.equal((await other.client.get('compose.search', { q: 'files' })).body.total, 0);
    t.equal((await client.get('compose.search', { q: 'files' })).body.total, 1);
  });

  t.test('templates: the catalog, a base64 template previewed and imported', async t => {
    const list = (await client.get('compose.templates', {})).body;
    t.match(list, [{ id: 'hello', name: 'Hello', tags: ['web', 'demo'] }]);
    t.same((await client.get('compose.getTags', {})).body, ['web', 'demo']);
    const base64 = Buffer.from(
      JSON.stringify({
        compose: FILE,
        config: '[variables]\nmain_domain = "${domain}"\n\n[config]\n[[config.domains]]\nserviceName = "web"\nport = 80\nhost = "${main_domain}"\n\n[config.env]\nA = "b"\n',
      }),
    ).toString('base64');
    const preview = await client.post('compose.previewTemplate', { base64, appName: 'preview-app' });
    t.equal(preview.status, 200, JSON.stringify(preview.body));
    t.match(preview.body, { compose: FILE, template: { envs: ['A=b'], domains: [{ serviceName: 'web', port: 80 }] } });
    const imported = await client.post('compose.import', { composeId, base64 });
    t.match(imported.body, { success: true });
    const one = (await client.get('compose.one', { composeId })).body;
    t.match(one, { env: 'A=b', sourceType: 'raw' });
    const domains = (await client.get('domain.byComposeId', { composeId })).body;
    t.same(
      (domains as { host: string; serviceName: string; port: number }[]).map(d => ({ serviceName: d.serviceName, port: d.port, former: d.host === 'files.example.com' })),
      [{ serviceName: 'web', port: 80, former: false }],
      "the template's domain replaces the former one (files.example.com is gone, one domain left)",
    );
  });

  t.test('deployTemplate makes a stack with its env, file mount and domain, which deploys', async t => {
    const res = await client.post('compose.deployTemplate', { environmentId: environment.environmentId, id: 'hello' });
    t.equal(res.status, 200, JSON.stringify(res.body));
    const stack = res.body;
    t.teardown(() => client.post('compose.delete', { composeId: stack.composeId, deleteVolumes: true }));
    t.match(stack, { name: 'hello', sourceType: 'raw', icon: 'hello.svg' });
    const one = (await client.get('compose.one', { composeId: stack.composeId })).body;
    t.match(one.env, /^SECRET=\S{16,}$/, 'a generated secret in the env');
    t.match(one.mounts, [{ type: 'file', filePath: 'index.html', content: 'hello from a template' }]);
    t.match(
      (await client.get('domain.byComposeId', { composeId: stack.composeId })).body,
      [{ serviceName: 'web', port: 8080, composeId: stack.composeId, applicationId: null, compose: { composeId: stack.composeId, appName: stack.appName, name: stack.name } }],
      'each domain with its stack joined, as the peer answers',
    );
    const queued = await client.post('compose.deploy', { composeId: stack.composeId });
    const done = await deploymentFinished(client, deploymentIdOf(queued));
    t.equal(done.status, 'done', done.errorMessage ?? 'deployed');
    const body = await waitFor(
      "the template's page",
      async () => {
        const r = await fetch(`http://127.0.0.1:${port}/`).catch(() => null);
        return r?.status === 200 ? r.text() : undefined;
      },
      { timeout: 30_000 },
    );
    t.equal(body.trim(), 'hello from a template', 'the file mount is served');
    const containers = await docker.listContainers({ filters: { label: [`com.docker.compose.project=${stack.appName}`] } });
    t.equal(containers.length, 1);
  });

  t.test("a bind mount outside the stack's directory is refused by the host access policy", async t => {
    const file = `services:\n  spy:\n    image: ${TEST_BASE_IMAGE}\n    command: ["sleep", "60"]\n    volumes:\n      - /etc:/host-etc:ro\n`;
    const { body: stack } = await client.post('compose.create', { name: 'spy', environmentId: environment.environmentId, composeFile: file });
    t.teardown(() => client.post('compose.delete', { composeId: stack.composeId, deleteVolumes: true }));
    const done = await deploymentFinished(client, deploymentIdOf(await client.post('compose.deploy', { composeId: stack.composeId })));
    t.equal(done.status, 'error');
    t.match(done.errorMessage, /host access policy.*bind mounts are off/);
    t.same(await docker.listContainers({ all: true, filters: { label: [`com.docker.compose.project=${stack.appName}`] } }), [], 'nothing ran');
  });
});
