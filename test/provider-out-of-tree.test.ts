// Issue 12: providers written outside the repository, as a third party writes them — a database
// kind, a builder and a source, each two files (package.json + index.js) in a temporary directory
// outside Berth's tree, importing @berth/* from the running Berth — loaded from one config line
// each, with no Berth file edited. The source and the builder deploy an application on the real
// engine; the postgres-compatible kind (the built-in driver extended in a few lines) deploys and
// answers with the real client.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import Docker from 'dockerode';
import pg from 'pg';
import { createKernel } from '@berth/core';
import { startTestServer, signUpAdmin, waitFor, freePort, removeServiceAndVolume, TEST_BASE_IMAGE, TEST_POSTGRES_IMAGE, runFinished } from '@berth/core/testing';

t.setTimeout(600_000);
const docker = new Docker();

// Outside the repository: nothing there resolves @berth/* but Berth's own resolution hook.
const outside = mkdtempSync(path.join(os.tmpdir(), 'berth-third-party-'));
t.teardown(() => rmSync(outside, { recursive: true, force: true }));

/** A provider package: package.json + index.js, nothing else. */
function providerPackage(name: string, index: string): string {
  const dir = path.join(outside, name);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', type: 'module', main: 'index.js', peerDependencies: { '@berth/core': '*' } }, null, 2));
  writeFileSync(path.join(dir, 'index.js'), index);
  return dir;
}

const pgcompat = providerPackage(
  'berth-provider-database-pgcompat',
  `
import { defineProvider, Type } from '@berth/core';
import { PostgresDriver } from '@berth/provider-database-postgres';

class PgcompatDriver extends PostgresDriver {
  kind = 'pgcompat';
  label = 'PG-compatible';
}

export default defineProvider({ contract: 'database', id: 'pgcompat', options: Type.Object({}), create: () => new PgcompatDriver() });
`,
);

const copyBuilder = providerPackage(
  'berth-provider-builder-copy',
  `
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { defineProvider, Type } from '@berth/core';
import { appDirOf, buildContext } from '@berth/provider-builder-dockerfile/engine';

const options = Type.Object({ baseImage: Type.String({ minLength: 1 }), command: Type.Array(Type.String(), { minItems: 1 }) }, { additionalProperties: false });

class CopyBuilder {
  id = 'copy';
  constructor(options) { this.options = options; }
  async build(request) {
    const context = await mkdtemp(path.join(os.tmpdir(), 'copy-builder-'));
    try {
      await cp(appDirOf(request), path.join(context, 'app'), { recursive: true });
      await writeFile(path.join(context, 'Dockerfile'), 'FROM ' + this.options.baseImage + '\\nCOPY app/ /app/\\nCMD ' + JSON.stringify(this.options.command) + '\\n');
      request.log('copy builder: the application on ' + this.options.baseImage);
      await buildContext({ engine: request.engine, contextDir: context, dockerfile: 'Dockerfile', imageTag: request.imageTag, buildArgs: {}, target: null, labels: request.labels, secrets: request.secrets, signal: request.signal, log: request.log });
    } finally {
      await rm(context, { recursive: true, force: true });
    }
  }
}

export default defineProvider({ contract: 'builder', id: 'copy', options, create: o => new CopyBuilder(o) });
`,
);

const templateSource = providerPackage(
  'berth-provider-source-template',
  `
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { defineProvider, Type } from '@berth/core';

const options = Type.Object({ files: Type.Record(Type.String({ pattern: '^[a-z.]+$' }), Type.String()) }, { additionalProperties: false });

class TemplateSource {
  id = 'template';
  constructor(options) { this.files = options.files; }
  async resolve(request) {
    for (const [name, text] of Object.entries(this.files)) {
      await writeFile(path.join(request.workDir, name), text.replaceAll('{{title}}', String(request.fields.title ?? '')));
    }
    request.log('template: wrote ' + Object.keys(this.files).length + ' file(s)');
    return { revision: null, buildPath: '/' };
  }
}

export default defineProvider({ contract: 'source', id: 'template', options, create: o => new TemplateSource(o) });
`,
);

const providers = {
  database: { pgcompat: { resolve: pgcompat } },
  builder: { copy: { resolve: copyBuilder, options: { baseImage: TEST_BASE_IMAGE, command: ['httpd', '-f', '-p', '8080', '-h', '/app'] } } },
  source: { template: { resolve: templateSource, options: { files: { 'index.html': 'hello from {{title}}\n' } } } },
};

t.test('three providers from outside the repository, one config line each', async t => {
  const server = await startTestServer({ providers, deploySettleSeconds: 0 });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const { providers: registry } = server.kernel.container.cradle;
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Third parties' });

  t.test('are registered in the container as <contract>.<id>, beside the built-in ones', async t => {
    t.ok(registry.ids('database').includes('pgcompat') && registry.ids('database').includes('postgres'));
    t.ok(registry.ids('builder').includes('copy') && registry.ids('builder').includes('dockerfile'));
    t.same(registry.ids('source').sort(), ['bitbucket', 'docker', 'drop', 'git', 'gitea', 'github', 'gitlab', 'template'], 'the git providers register a source each');
    t.equal(server.kernel.container.resolve('builder.copy' as never), registry.get('builder', 'copy'));
  });

  t.test('the allowed values come from the registries, and a 400 names them', async t => {
    const { applicationId } = (await client.post('application.create', { name: 'refused', environmentId: environment.environmentId })).body;
    const badBuild = await client.post('application.saveBuildType', { applicationId, buildType: 'make' });
    t.equal(badBuild.status, 400);
    const buildIssue = badBuild.body.issues.find((i: { path: string[] }) => i.path.join('.') === 'buildType');
    t.match(buildIssue?.message, /^buildType: must be one of: .*"copy"/, JSON.stringify(badBuild.body));
    t.match(buildIssue?.message, /"dockerfile"/);
    const badSource = await client.post('application.update', { applicationId, sourceType: 'svn' });
    t.equal(badSource.status, 400);
    // The source providers in config order, then the forges' source types, in theirs (every built-in provider is in name order).
    t.match(badSource.body.issues[0].message, /^sourceType: must be one of: "docker", "drop", "git", "template", "bitbucket", "gitea", "github", "gitlab"$/, JSON.stringify(badSource.body));
    const byType = await client.get('deployment.allByType', { type: 'svn', id: applicationId });
    t.equal(byType.status, 400);
    t.match(byType.body.issues[0].message, /^type: must be one of: .*"application".*"pgcompat"/, 'deployment types: the registry of kinds, the new kind included');
    const mount = await client.post('mounts.create', { type: 'volume', volumeName: 'v', mountPath: '/data', serviceType: 'svn', serviceId: applicationId });
    t.equal(mount.status, 400);
    t.match(mount.body.issues.find((i: { path: string[] }) => i.path[0] === 'serviceType')?.message, /^serviceType: must be one of: .*"pgcompat"/, 'mount owners too');
    const doc = (await client.get('settings.getOpenApiDocument')).body;
    t.ok(doc.paths['/pgcompat.create']?.post, "the new kind's namespace is in the OpenAPI document");
  });

  t.test('the source and the builder deploy an application on the real engine', async t => {
    const title = `tpl-${randomBytes(4).toString('hex')}`;
    const app = (await client.post('application.create', { name: 'from a template', environmentId: environment.environmentId })).body as { applicationId: string; appName: string };
    t.teardown(async () => {
      await docker
        .getService(app.appName)
        .remove()
        .catch(() => undefined);
    });
    const port = await freePort();
    const updated = await client.post('application.update', { applicationId: app.applicationId, sourceType: 'template', buildType: 'copy', title, stopGracePeriodSwarm: 1_000_000_000 });
    t.equal(updated.status, 200, JSON.stringify(updated.body));
    t.equal((await client.post('port.create', { applicationId: app.applicationId, publishedPort: port, targetPort: 8080, publishMode: 'host', protocol: 'tcp' })).status, 200);
    const done = await runFinished(client, 'application.deploy', { applicationId: app.applicationId });
    t.equal(done.status, 'done', done.errorMessage ?? '');
    const log = (await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body as string;
    t.match(log, /template: wrote 1 file/, 'the source ran');
    t.match(log, new RegExp(`copy builder: the application on ${TEST_BASE_IMAGE}`), 'the builder ran with its configured options');
    const page = await waitFor(
      `port ${port} serving the template`,
      async () => {
        try {
          const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) });
          return res.status === 200 ? await res.text() : undefined;
        } catch {
          return undefined;
        }
      },
      { timeout: 30_000, interval: 200 },
    );
    t.equal(page, `hello from ${title}\n`, 'the built image serves what the source wrote');
    const service = await docker.getService(app.appName).inspect();
    const image = await docker.getImage(service.Spec.TaskTemplate.ContainerSpec.Image.split('@')[0]).inspect();
    t.equal(image.Config.Labels['berth.id'], app.applicationId, "the builder passed Berth's owner labels on");
    t.teardown(() =>
      docker
        .getImage(image.Id)
        .remove({ force: true })
        .catch(() => undefined),
    );
  });

  t.test('the postgres-compatible kind deploys and answers the real client', async t => {
    const password = 'Pgcompat-pass_1';
    const created = await client.post('pgcompat.create', {
      name: 'compatible',
      environmentId: environment.environmentId,
      dockerImage: TEST_POSTGRES_IMAGE,
      databaseName: 'shop',
      databaseUser: 'shop',
      databasePassword: password,
    });
    t.equal(created.status, 200, JSON.stringify(created.body));
    const { pgcompatId, appName } = created.body as { pgcompatId: string; appName: string };
    t.teardown(() => removeServiceAndVolume(appName));
    const port = await freePort();
    t.equal((await client.post('pgcompat.saveExternalPort', { pgcompatId, externalPort: port })).status, 200);
    const done = await runFinished(client, 'pgcompat.deploy', { pgcompatId });
    t.equal(done.status, 'done', done.errorMessage ?? '');
    const one = await client.get('pgcompat.one', { pgcompatId });
    t.match(one.body.internalConnectionUrl, new RegExp(`^postgresql://shop:.*@${appName}:5432/shop$`), "the postgres driver's URL");
    const answer = await waitFor(
      `pgcompat accepting connections on ${port}`,
      async () => {
        const c = new pg.Client({ host: '127.0.0.1', port, user: 'shop', password, database: 'shop', connectionTimeoutMillis: 3000 });
        try {
          await c.connect();
          return (await c.query('SELECT current_database() AS db')).rows[0].db as string;
        } catch {
          return undefined;
        } finally {
          await c.end().catch(() => undefined);
        }
      },
      { timeout: 60_000, interval: 500 },
    );
    t.equal(answer, 'shop');
    const environmentView = await client.get('environment.one', { environmentId: environment.environmentId });
    t.equal(environmentView.body.pgcompat?.[0]?.pgcompatId, pgcompatId, 'environments list the new kind under its id');
  });
});

t.test('the config is checked at boot, naming the bad key', async t => {
  const boot = (more: Record<string, unknown>) =>
    createKernel({ env: {}, config: { providers: more as never, dataDir: t.testdir(), logLevel: 'silent', databaseUrl: 'postgresql://127.0.0.1:1/none' } });
  await t.rejects(boot({ builder: { copy: { resolve: copyBuilder } } }), { name: 'ConfigError', message: /providers\.builder\.copy\.options\.baseImage/ }, 'a missing option');
  await t.rejects(
    boot({ builder: { copy: { resolve: copyBuilder, options: { baseImage: 'x', command: ['x'], colour: 'red' } } } }),
    { message: /providers\.builder\.copy\.options\.colour/ },
    'an unknown option',
  );
  await t.rejects(boot({ builder: { static: { options: { image: 'Not An Image' } } } }), { message: /providers\.builder\.static\.options\.image/ }, "a built-in's option");
  await t.rejects(boot({ builder: { make: {} } }), {
    message: /providers\.builder\.make is not a built-in provider \(built-in builder providers: dockerfile, heroku_buildpacks, nixpacks, paketo_buildpacks, railpack, static\)/,
  });
  await t.rejects(boot({ source: { template: { resolve: copyBuilder } } }), { message: /providers\.source\.template loads .*, which is the provider builder\.copy/ });
  await t.rejects(boot({ source: { svn: { resolve: path.join(outside, 'nowhere') } } }), { message: /Cannot load provider source\.svn/ });
  const mismatch = providerPackage(
    'berth-provider-database-mismatch',
    `
import { defineProvider, Type } from '@berth/core';
import { PostgresDriver } from '@berth/provider-database-postgres';
export default defineProvider({ contract: 'database', id: 'mismatch', options: Type.Object({}), create: () => new PostgresDriver() });
`,
  );
  await t.rejects(boot({ database: { mismatch: { resolve: mismatch } } }), { message: 'Provider database.mismatch makes a driver of kind "postgres": a database provider\'s id is its kind' });
});

t.test('a provider set to false is not enabled', async t => {
  const server = await startTestServer({ providers: { builder: { nixpacks: false, railpack: false } }, jobs: false });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  t.same(server.kernel.container.cradle.providers.ids('builder'), ['dockerfile', 'heroku_buildpacks', 'paketo_buildpacks', 'static']);
  t.notOk(server.kernel.container.hasRegistration('builder.nixpacks' as never), 'nothing registered under its name');
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Fewer builders' });
  const { applicationId } = (await client.post('application.create', { name: 'x', environmentId: environment.environmentId })).body;
  const refused = await client.post('application.saveBuildType', { applicationId, buildType: 'nixpacks' });
  t.equal(refused.status, 400);
  t.match(refused.body.issues[0].message, /must be one of: "dockerfile", "heroku_buildpacks", "paketo_buildpacks", "static"$/);
});
