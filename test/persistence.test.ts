// Data survives a restart, on an external PostgreSQL and on the embedded database; a
// restart runs no migration twice; jobs run on the same database.
import t from 'tap';
import pg from 'pg';
import { startTestServer, signUpAdmin, Client } from '@berth/core/testing';

for (const mode of ['external', 'default'] as const) {
  t.test(`records and credentials survive a restart (${mode} database)`, async t => {
    let server = await startTestServer({}, mode);
    t.teardown(() => server.destroy());
    t.equal(server.kernel.embedded, mode === 'default', 'without DATABASE_URL Berth runs its embedded database');
    const { apiKey, token } = await signUpAdmin(server);
    const client = new Client(server.url, { apiKey });
    const created = await client.post('project.create', { name: `kept-${mode}`, description: 'across restarts' });
    t.equal(created.status, 200);

    server = await server.restart();
    const after = new Client(server.url, { apiKey });
    const all = await after.get('project.all');
    t.equal(all.status, 200, 'the API key still works');
    t.same(
      all.body.map((p: { name: string }) => p.name),
      [`kept-${mode}`],
    );
    t.equal(all.body[0].environments[0].name, 'production');
    t.equal((await new Client(server.url, { token }).get('auth.get')).status, 200, 'the bearer token still works');
    t.equal((await new Client(server.url).post('auth.createAdmin', { email: 'late@example.com', password: 'password-late' })).status, 401, 'the first admin is remembered');
  });
}

t.test('migrations are recorded once and the jobs table lives in the same database', async t => {
  let server = await startTestServer();
  t.teardown(() => server.destroy());
  server = await server.restart();
  const c = new pg.Client(server.database);
  await c.connect();
  t.teardown(() => c.end());
  const rows = (await c.query('select name from berth_migrations order by name')).rows.map(r => r.name);
  t.ok(rows.includes('Migration20261122000000_core_identity'));
  t.equal(new Set(rows).size, rows.length, 'no migration twice');
  const jobs = (await c.query(`select name from berth_jobs where name = 'berth.purgeExpiredSessions'`)).rows;
  t.equal(jobs.length, 1, 'the repeating cleanup job is scheduled once, on the platform database');
});

t.test('the embedded database refuses a second process on the same data directory', async t => {
  const server = await startTestServer({}, 'default');
  t.teardown(() => server.destroy());
  const { createKernel } = await import('@berth/core');
  await t.rejects(createKernel({ env: {}, config: { dataDir: server.dataDir, logLevel: 'silent', port: 0 } }), /in use by process/);
});

for (const mode of ['external', 'default'] as const) {
  t.test(`a queued job runs on the platform database (${mode})`, async t => {
    const server = await startTestServer({}, mode);
    t.teardown(() => server.destroy());
    const jobs = server.kernel.container.cradle.jobs;
    t.ok(jobs.processing, 'the scheduler runs with the server');
    const ran = new Promise<{ n: number }>(resolve => jobs.define<{ n: number }>('test.echo', async data => resolve(data), { lockLifetimeMs: 5000 }));
    await jobs.now('test.echo', { n: 42 });
    const result = await Promise.race([ran, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('job did not run within 15 s')), 15_000))]);
    t.same(result, { n: 42 });
  });
}
