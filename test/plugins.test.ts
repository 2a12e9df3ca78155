// The plugin loader: the operator enables a subset; a third-party plugin is loaded by path
// or by package name; a plugin enabled without its dependency fails at boot.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startTestServer, signUpAdmin, Client } from '@berth/core/testing';
import { createKernel } from '@berth/core';
import { examplePlugin, repoRoot } from './helpers.ts';

t.test("a disabled plugin's operations answer 404", async t => {
  const server = await startTestServer({ plugins: ['auth', 'user', 'organization'] });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const r = await client.get('project.all');
  t.equal(r.status, 404);
  t.equal(r.body.code, 'NOT_FOUND');
  t.equal((await client.trpc('query', 'project.all')).status, 404);
  t.same(server.kernel.plugins.map(p => p.name).sort(), ['auth', 'organization', 'user']);
});

t.test('the third-party example plugin, loaded by path, stores and isolates its records', async t => {
  const server = await startTestServer({ extraPlugins: [examplePlugin] });
  t.teardown(() => server.destroy());
  const { client, organizationId, token } = await signUpAdmin(server);
  const info = server.kernel.plugins.find(p => p.name === 'bookmarks');
  t.equal(info?.version, '1.0.0');
  const project = (await client.post('project.create', { name: 'with links' })).body.project;
  const created = await client.post('bookmark.create', { url: 'https://grafana.example.com/d/abc', title: 'Dashboards', weight: 5, projectId: project.projectId });
  t.equal(created.status, 200);
  t.equal(created.body.organizationId, organizationId);
  t.same(
    (await client.get('bookmark.all')).body.map((b: { title: string }) => b.title),
    ['Dashboards'],
  );
  // It reaches the project plugin through the container: a foreign project is 404.
  const foreign = await client.post('bookmark.create', { url: 'https://x.example.com', title: 'x', projectId: 'nope' });
  t.equal(foreign.status, 404);
  // Another organization sees none of it.
  const other = await new Client(server.url, { token }).post('organization.create', { name: 'Other' });
  const key = await new Client(server.url, { token }).post('user.createApiKey', { name: 'other', metadata: { organizationId: other.body.id } });
  const otherClient = new Client(server.url, { apiKey: key.body.key });
  t.same((await otherClient.get('bookmark.all')).body, []);
  t.equal((await otherClient.post('bookmark.remove', { bookmarkId: created.body.bookmarkId })).status, 404);
});

t.test('the example plugin loads by package name too', async t => {
  // The workspace links berth-plugin-bookmarks into the root node_modules.
  const cwd = process.cwd();
  process.chdir(repoRoot);
  t.teardown(() => process.chdir(cwd));
  const server = await startTestServer({ extraPlugins: ['berth-plugin-bookmarks'] });
  t.teardown(() => server.destroy());
  t.ok(server.kernel.plugins.some(p => p.name === 'bookmarks'));
});

t.test('a list written before the hosts plugin was split out of the workload kit still boots', async t => {
  const server = await startTestServer({ plugins: ['auth', 'user', 'organization', 'workloads'], jobs: false });
  t.teardown(() => server.destroy());
  t.same(server.kernel.plugins.map(p => p.name).sort(), ['auth', 'hosts', 'organization', 'user', 'workloads'], 'workloads brings hosts, its former part');
  t.same(server.kernel.config.plugins, ['auth', 'user', 'organization', 'workloads'], "the operator's list is kept as written");
});

t.test('a plugin whose dependency is disabled stops the boot with a clear message', async t => {
  await t.rejects(
    createKernel({ env: {}, config: { plugins: ['environment'], dataDir: t.testdir(), logLevel: 'silent', databaseUrl: 'postgresql://127.0.0.1:1/none' } }),
    /Plugin "environment" needs plugin "project", which is not enabled/,
  );
  await t.rejects(
    createKernel({ env: {}, config: { plugins: ['nonsense'], dataDir: t.testdir(), logLevel: 'silent', databaseUrl: 'postgresql://127.0.0.1:1/none' } }),
    /Unknown plugin\(s\) in the configuration: nonsense/,
  );
  await t.rejects(
    createKernel({ env: {}, config: { extraPlugins: ['/no/such/plugin'], dataDir: t.testdir(), logLevel: 'silent', databaseUrl: 'postgresql://127.0.0.1:1/none' } }),
    /Cannot load plugin \/no\/such\/plugin/,
  );
});

t.test("a plugin's uses: a disabled one is gone without it, a name that is no plugin stops the boot", async t => {
  // A third party's plugin in a directory of its own (t.testdir is one per test, and the kernel's dataDir takes it below).
  const write = (name: string, uses: string[]) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), `berth-plugin-${name}-`));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `berth-plugin-${name}`, version: '1.0.0', type: 'module', main: 'index.js' }));
    writeFileSync(
      path.join(dir, 'index.js'),
      `import { definePlugin } from '@berth/core';\nexport default definePlugin({ name: '${name}', version: '1.0.0', uses: ${JSON.stringify(uses)}, setup() {} });\n`,
    );
    return dir;
  };
  const server = await startTestServer({ plugins: ['auth', 'user', 'organization'], extraPlugins: [write('with-git', ['git-provider'])], jobs: false });
  t.teardown(() => server.destroy());
  t.same(server.kernel.plugins.map(p => p.name).sort(), ['auth', 'organization', 'user', 'with-git'], 'it boots beside a disabled plugin it uses');
  await t.rejects(
    createKernel({
      env: {},
      config: { plugins: ['auth', 'user', 'organization'], extraPlugins: [write('typo', ['gti-provider'])], dataDir: t.testdir(), logLevel: 'silent', databaseUrl: 'postgresql://127.0.0.1:1/none' },
    }),
    /Plugin "typo" uses "gti-provider", which is no plugin \(built-in or enabled\)/,
  );
});
