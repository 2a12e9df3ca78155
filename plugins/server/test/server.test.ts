// server.* through the real kernel and PostgreSQL: the records in the peer's shapes, confined to
// their organization; removal refused while workloads live on a server; a deploy to an inactive
// server refused; a server billing set inactive stays so through server.update. On a real remote host of the kit (its own sshd and engine): the host key pinned
// on first use or up front, a changed key refused with both fingerprints until server.update
// accepts it, and the reachability probe (a host taken off its network fails the deployment
// running there, serverUnreachable once, serverReachable when it returns).
import t from 'tap';
import type { Deployer, EntityManager } from '@berth/core';
import { canRun, otherOrganization, signUpAdmin, startTestServer, waitFor, type Client } from '@berth/core/testing';
import { cutNetwork, dropSshSessions, privateRemoteHosts, regenerateHostKey, remoteHostsMissing, restoreNetwork, type RemoteHost } from '@berth/test/remote-hosts';

const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}$/;
const issueFields = (body: { issues?: { path: string[] }[] }) => (body.issues ?? []).map(i => i.path[0]);

/** A stored key pair of the caller's organization (from sshKey.generate, or the one given). */
async function storedKey(client: Client, pair?: { privateKey: string; publicKey: string }): Promise<string> {
  const keys = pair ?? (await client.post('sshKey.generate', {})).body;
  const created = await client.post('sshKey.create', { name: 'server key', privateKey: keys.privateKey, publicKey: keys.publicKey });
  if (created.status !== 200) throw new Error(`sshKey.create: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.sshKeyId;
}

t.test('server records', async t => {
  // Probes every second, so the remote part below is quick; the records part has no server that answers.
  const server = await startTestServer({ serverProbeSeconds: 1, deploySettleSeconds: 0 });
  t.teardown(() => server.destroy());
  const { client, organizationId, userId } = await signUpAdmin(server);
  const sql = (query: string, params: unknown[]) => server.kernel.container.cradle.orm.em.fork().getConnection().execute<Record<string, any>[]>(query, params);
  const sshKeyId = await storedKey(client);
  // A keyed server the probe tries every second: a loopback address with a closed port (1), so no
  // connection leaves this machine and none is answered.
  const base = { name: 'edge', description: 'the edge box', ipAddress: '127.0.0.77', port: 1, username: 'deploy', sshKeyId };

  t.test("create answers the peer's row with its defaults and the pinned host key", async t => {
    const created = await client.post('server.create', { ...base, hostKeyFingerprint: `SHA256:${'A'.repeat(43)}` });
    t.equal(created.status, 200, JSON.stringify(created.body));
    t.match(created.body, {
      serverId: String,
      name: 'edge',
      description: 'the edge box',
      ipAddress: '127.0.0.77',
      port: 1,
      username: 'deploy',
      appName: /^server-/,
      enableDockerCleanup: true,
      buildsConcurrency: 1,
      organizationId,
      serverStatus: 'active',
      serverType: 'deploy',
      command: '',
      sshKeyId,
      hostKeyFingerprint: `SHA256:${'A'.repeat(43)}`,
      metricsConfig: { server: { type: 'Remote', port: 4500 }, containers: { refreshRate: 60 } },
    });
    t.notOk('privateKey' in created.body, 'no key material');
    const none = await client.post('server.create', { name: 'bare', ipAddress: 'bare.example.com', port: 2222, sshKeyId: null, serverType: 'build', enableDockerCleanup: false });
    t.equal(none.status, 200, 'sshKeyId null is accepted');
    t.match(none.body, { username: 'root', sshKeyId: null, serverType: 'build', enableDockerCleanup: false, hostKeyFingerprint: null });

    const one = await client.get('server.one', { serverId: created.body.serverId });
    t.equal(one.status, 200);
    t.equal(one.body.hostKeyFingerprint, `SHA256:${'A'.repeat(43)}`, 'one answers the pinned fingerprint');
    t.same(one.body.deployments, [], 'its own deployments (none)');
    t.match(one.body.sshKey, { sshKeyId, name: 'server key', publicKey: /^ssh-ed25519 / });
    t.notOk('privateKey' in one.body.sshKey, 'the key without its private half');
    t.equal((await client.get('server.one', { serverId: none.body.serverId })).body.sshKey, null);

    const all = (await client.get('server.all')).body as { serverId: string; totalSum: number }[];
    t.same(
      all.map(s => s.serverId),
      [none.body.serverId, created.body.serverId],
      'newest first',
    );
    t.same(
      all.map(s => s.totalSum),
      [0, 0],
      'no workloads on them',
    );
    t.equal((await client.get('server.count')).body, 2);
    t.same(
      (await client.get('server.withSSHKey')).body.map((s: { serverId: string }) => s.serverId),
      [created.body.serverId],
      'deploy servers with a key',
    );
    t.same((await client.get('server.buildServers')).body, [], 'the build server has no key');
    t.same((await client.get('server.allForPermissions')).body, [
      { serverId: none.body.serverId, name: 'bare', ipAddress: 'bare.example.com', serverType: 'build' },
      { serverId: created.body.serverId, name: 'edge', ipAddress: '127.0.0.77', serverType: 'deploy' },
    ]);

    const updated = await client.post('server.update', { serverId: created.body.serverId, name: 'edge-2', command: 'echo hi', hostKeyFingerprint: null, enableDockerCleanup: false });
    t.match(updated.body, { name: 'edge-2', command: 'echo hi', hostKeyFingerprint: null, enableDockerCleanup: false, ipAddress: '127.0.0.77' });
    t.match((await client.post('server.updateBuildsConcurrency', { serverId: created.body.serverId, buildsConcurrency: 4 })).body, { buildsConcurrency: 4 });
    t.equal((await client.post('server.updateBuildsConcurrency', { serverId: created.body.serverId, buildsConcurrency: 101 })).status, 400);

    const removed = await client.post('server.remove', { serverId: none.body.serverId });
    t.equal(removed.status, 200);
    t.match(removed.body, { serverId: none.body.serverId, name: 'bare', deployments: [], sshKey: null });
    t.equal((await client.get('server.one', { serverId: none.body.serverId })).status, 404);
    await client.post('server.remove', { serverId: created.body.serverId });
  });

  t.test('bad input names the field', async t => {
    for (const [input, field] of [
      [{ ...base, port: 0 }, 'port'],
      [{ ...base, port: 70000 }, 'port'],
      [{ ...base, ipAddress: 'a b' }, 'ipAddress'],
      [{ ...base, ipAddress: 'x'.repeat(300) }, 'ipAddress'],
      [{ ...base, username: 'no way' }, 'username'],
      [{ ...base, hostKeyFingerprint: 'MD5:aa:bb' }, 'hostKeyFingerprint'],
      [{ ...base, serverType: 'edge' }, 'serverType'],
      [{ ...base, name: '' }, 'name'],
    ] as const) {
      const r = await client.post('server.create', input);
      t.equal(r.status, 400, `${field}: ${JSON.stringify(input[field as keyof typeof input]).slice(0, 40)}`);
      t.same(issueFields(r.body), [field]);
    }
    t.equal((await client.post('server.create', { ...base, sshKeyId: 'no-such-key' })).status, 404, 'a key that does not exist');
  });

  t.test("another organization's server and key are 404", async t => {
    const mine = (await client.post('server.create', base)).body;
    t.teardown(() => client.post('server.remove', { serverId: mine.serverId }));
    const other = await otherOrganization(server, userId);
    const { serverId } = mine;
    t.equal((await other.client.get('server.one', { serverId })).status, 404);
    t.equal((await other.client.post('server.update', { serverId, name: 'stolen' })).status, 404);
    t.equal((await other.client.post('server.updateBuildsConcurrency', { serverId, buildsConcurrency: 2 })).status, 404);
    t.equal((await other.client.post('server.remove', { serverId })).status, 404);
    t.same((await other.client.get('server.all')).body, [], 'their list is their own');
    t.equal((await other.client.get('server.count')).body, 0);
    t.same((await other.client.get('server.allForPermissions')).body, []);
    t.equal((await other.client.post('server.create', { ...base, sshKeyId })).status, 404, 'with our key');
    const theirKey = await storedKey(other.client);
    t.equal((await client.post('server.update', { serverId, sshKeyId: theirKey })).status, 404, 'our server with their key');
    t.equal((await client.get('server.one', { serverId })).body.name, 'edge', 'nothing changed');
    const { servers, orm } = server.kernel.container.cradle;
    await t.rejects(servers.owned(serverId, other.organizationId, orm.em.fork() as EntityManager), { code: 'NOT_FOUND' }, 'a workload of theirs cannot name it');
    t.equal((await servers.owned(serverId, organizationId, orm.em.fork() as EntityManager)).serverId, serverId, 'one of ours can');
  });

  t.test('workload answers join their server (no key material); another organization never sees it', async t => {
    const srv = (await client.post('server.create', base)).body;
    const { sshKeyId: _key, ...shown } = srv;
    const project = (await client.post('project.create', { name: 'joined' })).body;
    const environmentId = project.environment.environmentId;
    const app = (await client.post('application.create', { name: 'web', environmentId })).body;
    const pg = (await client.post('postgres.create', { name: 'db', databaseName: 'db', databaseUser: 'u', databasePassword: 'secret-password', environmentId })).body;
    const stack = (await client.post('compose.create', { name: 'stack', environmentId })).body;
    const reads = () =>
      Promise.all([
        client.get('application.one', { applicationId: app.applicationId }),
        client.get('postgres.one', { postgresId: pg.postgresId }),
        client.get('compose.one', { composeId: stack.composeId }),
      ]);
    for (const res of await reads()) t.equal(res.body.server, null, 'null on this machine');
    await sql('update applications set server_id = ? where application_id = ?', [srv.serverId, app.applicationId]);
    await sql('update db_postgres set server_id = ? where id = ?', [srv.serverId, pg.postgresId]);
    await sql('update compose_stacks set server_id = ? where compose_id = ?', [srv.serverId, stack.composeId]);
    t.teardown(async () => {
      await sql('update applications set server_id = null where application_id = ?', [app.applicationId]);
      await sql('update db_postgres set server_id = null where id = ?', [pg.postgresId]);
      await sql('update compose_stacks set server_id = null where compose_id = ?', [stack.composeId]);
      await client.post('server.remove', { serverId: srv.serverId });
    });
    for (const [i, res] of (await reads()).entries()) {
      const what = ['application', 'postgres', 'compose'][i]!;
      t.equal(res.status, 200, what);
      t.match(res.body.server, { ...shown, sshKeyId }, `${what}.one joins the server`);
      t.same(Object.keys(res.body.server).sort(), Object.keys(srv).sort(), `${what}: server.one's fields, nothing more`);
      t.notOk(JSON.stringify(res.body.server).includes('PRIVATE KEY'), `${what}: no key material`);
    }

    const other = await otherOrganization(server, userId);
    t.equal((await other.client.get('application.one', { applicationId: app.applicationId })).status, 404, 'their reads of ours are 404');
    t.equal((await other.client.get('compose.one', { composeId: stack.composeId })).status, 404);
    const theirs = (await other.client.post('project.create', { name: 'theirs' })).body;
    const theirApp = (await other.client.post('application.create', { name: 'theirs', environmentId: theirs.environment.environmentId })).body;
    // A record of theirs that names our server (only writable past the API, which refuses it) still joins nothing of ours.
    await sql('update applications set server_id = ? where application_id = ?', [srv.serverId, theirApp.applicationId]);
    t.teardown(() => sql('update applications set server_id = null where application_id = ?', [theirApp.applicationId]));
    const seen = await other.client.get('application.one', { applicationId: theirApp.applicationId });
    t.equal(seen.status, 200);
    t.equal(seen.body.server, null, "another organization's server is never joined");
  });

  t.test('remove is refused while workloads live on the server; a deploy to an inactive server is refused', async t => {
    const srv = (await client.post('server.create', base)).body;
    const project = (await client.post('project.create', { name: 'on-server' })).body;
    const environmentId = project.environment.environmentId;
    const app = (await client.post('application.create', { name: 'web', environmentId })).body;
    const pg = (await client.post('postgres.create', { name: 'db', databaseName: 'db', databaseUser: 'u', databasePassword: 'secret-password', environmentId })).body;
    // The records name the server as application.create and postgres.create will once workloads run on servers.
    await sql('update applications set server_id = ? where application_id = ?', [srv.serverId, app.applicationId]);
    await sql('update db_postgres set server_id = ? where id = ?', [srv.serverId, pg.postgresId]);

    t.equal((await client.get('server.all')).body.find((s: { serverId: string }) => s.serverId === srv.serverId).totalSum, 2, 'all counts them');
    const refused = await client.post('server.remove', { serverId: srv.serverId });
    t.equal(refused.status, 409);
    t.match(refused.body.message, /still runs 2 workload/);
    t.match(refused.body.message, new RegExp(`application web \\(${app.applicationId}\\)`));
    t.match(refused.body.message, new RegExp(`postgres db \\(${pg.postgresId}\\)`));

    t.match((await client.post('server.update', { serverId: srv.serverId, serverStatus: 'inactive' })).body, { serverStatus: 'inactive' });
    const deploy = await client.post('application.deploy', { applicationId: app.applicationId });
    t.equal(deploy.status, 409, JSON.stringify(deploy.body));
    t.match(deploy.body.message, new RegExp(`Server edge \\(${srv.serverId}\\) is inactive`), 'naming the server');
    t.same((await client.get('deployment.all', { applicationId: app.applicationId })).body, [], 'nothing queued');

    await sql('update applications set server_id = null where application_id = ?', [app.applicationId]);
    await sql('update db_postgres set server_id = null where id = ?', [pg.postgresId]);
    t.equal((await client.post('server.remove', { serverId: srv.serverId })).status, 200, 'removed once no workload lives there');
  });

  t.test('a server set inactive for a reason (billing) stays so: server.update answers 409 naming serverStatus, the other fields stored', async t => {
    const srv = (await client.post('server.create', { ...base, name: 'held' })).body;
    t.teardown(() => client.post('server.remove', { serverId: srv.serverId }));
    const { servers, orm } = server.kernel.container.cradle;
    const em = () => orm.em.fork() as EntityManager;
    t.equal(await servers.setStatusFor('billing', srv.serverId, organizationId, 'inactive', em()), true, 'billing sets it inactive');
    t.same(
      await sql('select server_status, inactive_reason from servers where server_id = ?', [srv.serverId]),
      [{ server_status: 'inactive', inactive_reason: 'billing' }],
      'the reason on the record',
    );
    const { deployments: _d, sshKey: _k, ...record } = (await client.get('server.one', { serverId: srv.serverId })).body;
    t.notOk('inactiveReason' in record, 'the reason is not answered');
    const refused = await client.post('server.update', { ...record, description: 'edited in the same form', serverStatus: 'active' });
    t.equal(refused.status, 409, JSON.stringify(refused.body));
    t.same(issueFields(refused.body), ['serverStatus'], 'naming serverStatus');
    t.match(refused.body.message, /set inactive by billing .*pay .*or remove servers/);
    t.match((await client.get('server.one', { serverId: srv.serverId })).body, { description: 'edited in the same form', serverStatus: 'inactive' }, 'the other fields stored, the status kept');
    t.equal((await client.post('server.update', { serverId: srv.serverId, serverStatus: 'inactive' })).status, 200, 'inactive again is no change: allowed');
    t.equal(await servers.setStatusFor('other', srv.serverId, organizationId, 'active', em()), false, 'only the reason that set it may lift it');
    t.equal(await servers.setStatusFor('billing', srv.serverId, organizationId, 'active', em()), true, 'billing sets it active again');
    t.same(await sql('select server_status, inactive_reason from servers where server_id = ?', [srv.serverId]), [{ server_status: 'active', inactive_reason: null }], 'the reason cleared');
    // Positive control: set inactive by an admin, server.update sets it active again.
    t.match(await client.post('server.update', { serverId: srv.serverId, serverStatus: 'inactive' }), { status: 200, body: { serverStatus: 'inactive' } });
    t.match(await client.post('server.update', { serverId: srv.serverId, serverStatus: 'active' }), { status: 200, body: { serverStatus: 'active' } });
  });

  t.test('deployments on a server run on its own queue, buildsConcurrency at once', async t => {
    // No key: the probe leaves it alone, and the deployer below never touches a host.
    const srv = (await client.post('server.create', { ...base, name: 'queue', sshKeyId: null })).body;
    t.teardown(() => client.post('server.remove', { serverId: srv.serverId }));
    t.equal((await client.post('server.updateBuildsConcurrency', { serverId: srv.serverId, buildsConcurrency: 2 })).status, 200);
    const { deployments, orm } = server.kernel.container.cradle;
    const running = new Map<string, () => void>();
    deployments.register({
      targetType: 'serverQueueTest',
      run: (_action, run) =>
        new Promise<void>(resolve => {
          running.set(run.deployment.targetId, resolve);
        }),
      settle: async () => undefined,
    });
    const enqueue = (targetId: string, serverId: string | null) =>
      deployments.enqueue({ targetType: 'serverQueueTest', targetId, organizationId, serverId, action: 'deploy', title: targetId }, orm.em.fork() as EntityManager);
    const state = async (deploymentId: string) => (await client.get('deployment.one', { deploymentId })).body.state as string;
    const [a, b, c] = [await enqueue('a', srv.serverId), await enqueue('b', srv.serverId), await enqueue('c', srv.serverId)];
    await waitFor('two running on the server', () => running.has('a') && running.has('b'));
    t.equal(await state(c.deploymentId), 'queued', "the third waits: the server runs two at once (this host's deployConcurrency is 1)");
    const local = await enqueue('local', null);
    await waitFor("this host's own slot", () => running.has('local'));
    t.equal(await state(c.deploymentId), 'queued', "a deployment on this host does not take the server's slots, nor the other way round");
    running.get('a')!();
    await waitFor('the third starts once a slot frees', () => running.has('c'));
    for (const id of ['b', 'c', 'local']) running.get(id)!();
    for (const d of [a, b, c, local]) await waitFor(`${d.targetId} done`, async () => (await state(d.deploymentId)) === 'done');
  });

  if (!canRun(t, 'remote-hosts', remoteHostsMissing())) return;

  t.test('on a real remote host', async t => {
    const set = await privateRemoteHosts(1);
    t.teardown(() => set.down());
    const h = set.hosts[0] as RemoteHost;
    const { hosts, deployments, events } = server.kernel.container.cradle;
    const hostKey = await storedKey(client, { privateKey: h.privateKey, publicKey: h.publicKey });
    const at = { ipAddress: h.address, port: 22, username: h.user, sshKeyId: hostKey };
    const heard: { event: string; reason?: string; serverId: string }[] = [];
    events.on('serverUnreachable', p => {
      heard.push({ event: 'unreachable', reason: p.reason, serverId: p.serverId });
    });
    events.on('serverReachable', p => {
      heard.push({ event: 'reachable', serverId: p.serverId });
    });
    const heardOf = (serverId: string) => heard.filter(e => e.serverId === serverId);

    t.test('the host key: pinned on first use, or up front', async t => {
      const first = (await client.post('server.create', { name: 'first-use', ...at })).body;
      t.teardown(() => client.post('server.remove', { serverId: first.serverId }));
      t.equal(first.hostKeyFingerprint, null, 'nothing pinned before the first connection');
      const remote = await hosts.of(first.serverId);
      t.equal((await remote.run(['hostname'])).stdout, `${h.name}\n`, 'hosts.of reaches the server of the record');
      const pinned = await waitFor('the pinned key stored', async () => (await client.get('server.one', { serverId: first.serverId })).body.hostKeyFingerprint);
      t.equal(pinned, h.hostKeyFingerprint, 'one answers the key the host presented');

      const upFront = (await client.post('server.create', { name: 'up-front', ...at, hostKeyFingerprint: h.hostKeyFingerprint })).body;
      t.teardown(() => client.post('server.remove', { serverId: upFront.serverId }));
      t.equal((await (await hosts.of(upFront.serverId)).run(['true'])).code, 0, 'the pinned key is the one presented');
      const wrong = (await client.post('server.create', { name: 'wrong', ...at, hostKeyFingerprint: `SHA256:${'B'.repeat(43)}` })).body;
      t.teardown(() => client.post('server.remove', { serverId: wrong.serverId }));
      await t.rejects(
        (await hosts.of(wrong.serverId)).run(['true']),
        { code: 'CONFLICT', message: new RegExp(`pinned SHA256:B{43}, presented ${h.hostKeyFingerprint.replace(/[+/]/g, '\\$&')}`) },
        'a key other than the one pinned up front is refused',
      );
    });

    t.test('a changed host key is refused with both fingerprints until server.update accepts it', async t => {
      const srv = (await client.post('server.create', { name: 'rekeyed', ...at, hostKeyFingerprint: h.hostKeyFingerprint })).body;
      t.teardown(() => client.post('server.remove', { serverId: srv.serverId }));
      t.equal((await (await hosts.of(srv.serverId)).run(['true'])).code, 0);
      const old = h.hostKeyFingerprint;
      const fresh = await regenerateHostKey(h);
      h.hostKeyFingerprint = fresh;
      await dropSshSessions(h);
      const refused = await waitFor('the new key seen', async () => {
        const err = await (await hosts.of(srv.serverId)).run(['true']).then(
          () => null,
          (e: Error & { code?: string }) => e,
        );
        return err?.code === 'CONFLICT' ? err : null;
      });
      t.match(refused.message, `pinned ${old}, presented ${fresh}`, 'both fingerprints');
      t.match(refused.message, `server.update with hostKeyFingerprint "${fresh}"`, 'and how to accept the new one');
      await t.rejects(async () => (await hosts.of(srv.serverId)).engine(), { code: 'CONFLICT' }, 'the engine too');
      // Through the API: an operation that reaches the server answers 409 with the same words.
      const overHttp = await client.get('server.publicIp', { serverId: srv.serverId });
      t.equal(overHttp.status, 409, 'server.publicIp answers CONFLICT');
      t.match(overHttp.body, { code: 'CONFLICT', message: `pinned ${old}, presented ${fresh}` }, 'naming both fingerprints');
      // The probe hears it too: the server is unreachable with the same reason.
      const unreachable = await waitFor('serverUnreachable', () => heardOf(srv.serverId).find(e => e.event === 'unreachable'));
      t.match(unreachable.reason, `pinned ${old}, presented ${fresh}`);

      const accepted = await client.post('server.update', { serverId: srv.serverId, hostKeyFingerprint: fresh });
      t.equal(accepted.body.hostKeyFingerprint, fresh);
      t.equal((await (await hosts.of(srv.serverId)).run(['hostname'])).stdout, `${h.name}\n`, 'accepted: the connection is made anew with the new key');
      await waitFor('serverReachable', () => heardOf(srv.serverId).find(e => e.event === 'reachable'));
      t.equal((await client.get('server.one', { serverId: srv.serverId })).body.hostKeyFingerprint, fresh);
    });

    t.test('a host that goes away fails its running deployment, serverUnreachable once, serverReachable when it returns', async t => {
      const srv = (await client.post('server.create', { name: 'flaky', ...at, hostKeyFingerprint: h.hostKeyFingerprint })).body;
      t.teardown(() => client.post('server.remove', { serverId: srv.serverId }));
      // A deployment that runs on the server until it is stopped.
      const started: string[] = [];
      const deployer: Deployer = {
        targetType: 'serverProbeTest',
        run: (_action, run) =>
          new Promise((_, reject) => {
            started.push(run.deployment.deploymentId);
            run.signal.addEventListener('abort', () => reject(run.signal.reason), { once: true });
          }),
        settle: async () => undefined,
      };
      deployments.register(deployer);
      const em = server.kernel.container.cradle.orm.em.fork() as EntityManager;
      const record = await deployments.enqueue({ targetType: 'serverProbeTest', targetId: srv.serverId, organizationId, serverId: srv.serverId, action: 'deploy', title: 'long run' }, em);
      await waitFor('the deployment running', () => started.includes(record.deploymentId));
      t.equal((await (await hosts.of(srv.serverId)).run(['true'])).code, 0, 'the server answers');

      await cutNetwork(h);
      let restored = false;
      t.teardown(async () => {
        if (!restored) await restoreNetwork(h);
      });
      const ended = await waitFor(
        'the deployment failed',
        async () => {
          const d = (await client.get('deployment.one', { deploymentId: record.deploymentId })).body;
          return d.state === 'error' ? d : null;
        },
        { timeout: 90_000 },
      );
      t.match(ended.errorMessage, new RegExp(`Server flaky \\(${h.address.replace(/\./g, '\\.')}\\) is unreachable: `), 'with the reason');
      const probesAtUnreachable = (await sql('select failed_probes from servers where server_id = ?', [srv.serverId]))[0]!.failed_probes as number;
      // Two more failed probes: still one event.
      await waitFor('more failed probes', async () => (await sql('select failed_probes from servers where server_id = ?', [srv.serverId]))[0]!.failed_probes >= probesAtUnreachable + 2, {
        timeout: 90_000,
      });
      t.same(
        heardOf(srv.serverId).map(e => e.event),
        ['unreachable'],
        'serverUnreachable once',
      );
      t.match(heardOf(srv.serverId)[0]!.reason, /is unreachable/);

      await restoreNetwork(h);
      restored = true;
      await waitFor('serverReachable', () => heardOf(srv.serverId).some(e => e.event === 'reachable'), { timeout: 90_000 });
      t.same(
        heardOf(srv.serverId).map(e => e.event),
        ['unreachable', 'reachable'],
        'serverReachable when it returns',
      );
      t.equal((await (await hosts.of(srv.serverId)).run(['hostname'])).stdout, `${h.name}\n`, 'and it is used again');
    });
  });
});
