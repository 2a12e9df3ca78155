// What a self-hosted instance answers about itself, through the real kernel and its database: health
// (no credential), isCloud false, no cloud addresses, the release tag, whether the organization
// has started (a project or a server), and the Redis operations refused as a self-hosted peer
// without Redis refuses them. Each on both wire forms; a member, and another organization's owner,
// refused where the peer refuses.
import pg from 'pg';
import t from 'tap';
import { addMember, Client, otherOrganization, signUpAdmin, startTestServer, waitFor, type Reply } from '@berth/core/testing';
import { berthVersion } from '@berth/plugin-platform';

/** The answer of either wire form: the tRPC envelope's json, or the REST body. */
const data = (r: Reply) => (r.body?.result?.data ? r.body.result.data.json : r.body);

t.test('settings.* of a self-hosted instance', async t => {
  const server = await startTestServer({ proxy: 'none' });
  t.teardown(() => server.destroy());
  const anonymous = new Client(server.url);

  t.test('health and isCloud answer without a credential', async t => {
    for (const [form, r] of [
      ['REST', await anonymous.get('settings.health')],
      ['tRPC', await anonymous.trpc('query', 'settings.health')],
    ] as const) {
      t.equal(r.status, 200, form);
      t.same(data(r), { status: 'ok' }, `${form}: the peer's answer`);
    }
    t.equal(data(await anonymous.get('settings.isCloud')), false, 'Berth is no cloud (REST)');
    t.equal(data(await anonymous.trpc('query', 'settings.isCloud')), false, 'Berth is no cloud (tRPC)');
  });

  const admin = await signUpAdmin(server);
  const a = admin.client;
  const member = await addMember(server, a, 'member@example.com', 'member');
  const other = await otherOrganization(server, member.userId);

  t.test('health says so when the database does not answer', async t => {
    // Berth's connections ended and no new one let in, as when PostgreSQL goes away; then let in again.
    const own = new pg.Client(server.database);
    await own.connect();
    const { rows } = await own.query<{ name: string }>('select current_database() as name');
    await own.end();
    const db = `"${rows[0]!.name}"`;
    // From another database of the server (template1: the default database's own is named postgres): a database's own session may not shut it.
    const { connectionString, ...rest } = server.database;
    const url = connectionString ? new URL(connectionString) : undefined;
    if (url) url.pathname = '/template1';
    const dba = new pg.Client(url ? { ...rest, connectionString: url.toString() } : { ...rest, database: 'template1' });
    await dba.connect();
    t.teardown(() => dba.end());
    await dba.query(`alter database ${db} allow_connections false`);
    try {
      await dba.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [rows[0]!.name]);
      const r = await anonymous.get('settings.health');
      t.equal(r.status, 503, 'a 503');
      t.match(r.body.message, /database does not answer/);
    } finally {
      await dba.query(`alter database ${db} allow_connections true`);
    }
    const back = await waitFor('health answers again', async () => {
      const r = await anonymous.get('settings.health');
      if (r.status !== 200) throw new Error(`${r.status}`);
      return r;
    });
    t.same(back.body, { status: 'ok' }, 'and ok again once it answers');
  });

  t.test('getReleaseTag and getDokployCloudIps', async t => {
    const version = berthVersion();
    t.equal(data(await a.get('settings.getReleaseTag')), `v${version}`, 'the release Berth runs (REST)');
    t.equal(data(await member.client.trpc('query', 'settings.getReleaseTag')), `v${version}`, 'any member reads it (tRPC)');
    t.same(data(await a.get('settings.getDokployCloudIps')), [], 'no cloud addresses (REST)');
    t.same(data(await a.trpc('query', 'settings.getDokployCloudIps')), [], 'no cloud addresses (tRPC)');
    t.equal((await member.client.get('settings.getDokployCloudIps')).status, 403, 'admins only, as the peer');
  });

  t.test("isUserSubscribed: the caller's organization has a project or a server", async t => {
    t.equal(data(await a.get('settings.isUserSubscribed')), false, 'a new organization has neither (REST)');
    const project = await a.post('project.create', { name: 'first' });
    t.equal(project.status, 200);
    t.equal(data(await a.trpc('query', 'settings.isUserSubscribed')), true, 'a project (tRPC)');
    t.equal(data(await member.client.get('settings.isUserSubscribed')), true, 'any member of it reads it');
    t.equal(data(await other.client.get('settings.isUserSubscribed')), false, "another organization's is its own: neither");
    const made = await other.client.post('server.create', { name: 'box', ipAddress: '192.0.2.10', port: 22, username: 'root', sshKeyId: null });
    t.equal(made.status, 200, JSON.stringify(made.body));
    t.equal(data(await other.client.trpc('query', 'settings.isUserSubscribed')), true, 'a server counts too');
  });

  t.test('the Redis operations: Berth runs no Redis', async t => {
    for (const op of ['settings.cleanRedis', 'settings.reloadRedis']) {
      const rest = await a.post(op, {});
      t.equal(rest.status, 404, `${op} (REST)`);
      t.match(rest.body.message, /^Redis container not found\. Berth runs no Redis/);
      const trpc = await a.trpc('mutation', op, {});
      t.equal(trpc.status, 404, `${op} (tRPC)`);
      t.equal((await member.client.post(op, {})).status, 403, 'a member is refused before');
      const stranger = await other.client.post(op, {});
      t.equal(stranger.status, 403, "so is another organization's owner: this machine is the instance operators'");
    }
  });
});
