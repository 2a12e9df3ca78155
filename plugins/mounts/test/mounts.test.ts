// mounts.* through the real kernel, a real PostgreSQL database and (for the named volumes of a
// running application) the real Docker engine.
import t from 'tap';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startTestServer, signUpAdmin, addMember, otherOrganization, waitFor, TEST_BASE_IMAGE, type Client, type Reply } from '@berth/core/testing';

// The operator grants bind mounts below the directories these tests bind (to the instance owner only).
const bindMountRoots = ['/srv', '/home', '/var/lib', '/mnt', '/etcetera', '/devices', '/var/runner', '/opt'];
const start = () => startTestServer({ jobs: false, hostAccess: { bindMountRoots, hostNetworks: false, localGit: false } });

/** A project's default environment and an application in it, through the API. */
async function makeApplication(client: Client, name: string) {
  const project = await client.post('project.create', { name: `Project ${name}` });
  if (project.status !== 200) throw new Error(`project.create: ${project.status} ${JSON.stringify(project.body)}`);
  const app = await client.post('application.create', { name, environmentId: project.body.environment.environmentId });
  if (app.status !== 200) throw new Error(`application.create: ${app.status} ${JSON.stringify(app.body)}`);
  return app.body as { applicationId: string; appName: string };
}

// The owner fields of every registered kind that supports mounts.
const nullOwners = { applicationId: null, postgresId: null, mariadbId: null, mongoId: null, mysqlId: null, redisId: null, composeId: null, libsqlId: null };

/** The fields a 400 names, in order. */
const fields = (body: { issues?: { path: (string | number)[] }[] }) => (body.issues ?? []).map(i => i.path.join('.'));

t.test('bad input is refused before the workload is looked up, naming the field', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const serviceId = 'no-such-workload';
  type Case = [input: Record<string, unknown>, field: string, what: string];
  const cases: Case[] = [
    [{ type: 'tmpfs', mountPath: '/data' }, 'type', 'an unknown type'],
    [{ type: 'volume', volumeName: 'v' }, 'mountPath', 'no mountPath'],
    [{ type: 'volume', volumeName: 'v', mountPath: 'data' }, 'mountPath', 'a relative mountPath'],
    [{ type: 'volume', volumeName: 'v', mountPath: '/data/../etc' }, 'mountPath', 'a mountPath with ".."'],
    [{ type: 'volume', volumeName: 'v', mountPath: '/data\nx' }, 'mountPath', 'a mountPath with a newline'],
    [{ type: 'volume', volumeName: 'v', mountPath: '/data\u0000x' }, 'mountPath', 'a mountPath with NUL'],
    [{ type: 'volume', volumeName: 'v', mountPath: '/' }, 'mountPath', 'the container root'],
    [{ type: 'volume', volumeName: 'v', mountPath: '/data', serviceType: 'cassandra' }, 'serviceType', 'an unknown serviceType'],
    [{ type: 'volume', mountPath: '/data' }, 'volumeName', 'a volume without volumeName'],
    ...['-lead', '.hidden', 'a b', 'a/b', 'x'.repeat(129), 'a;rm', 'berth', 'berth-proxy-certs', 'Berth_x'].map((volumeName): Case => [
      { type: 'volume', volumeName, mountPath: '/data' },
      'volumeName',
      `volumeName ${JSON.stringify(volumeName.slice(0, 20))}`,
    ]),
    [{ type: 'bind', mountPath: '/data' }, 'hostPath', 'a bind without hostPath'],
    [{ type: 'bind', hostPath: '', mountPath: '/data' }, 'hostPath', 'an empty hostPath'],
    ...['srv/data', '/srv/../etc', '/srv//data', '/srv/./data', '/srv/data/', '/srv/da ta', '/srv/$(id)'].map((hostPath): Case => [
      { type: 'bind', hostPath, mountPath: '/data' },
      'hostPath',
      `hostPath ${hostPath}`,
    ]),
    [{ type: 'file', content: 'x', filePath: '/abs/file', mountPath: '/app/f' }, 'filePath', 'an absolute filePath'],
    [{ type: 'file', content: 'x', filePath: '../escape', mountPath: '/app/f' }, 'filePath', 'a filePath with ".."'],
    [{ type: 'file', content: 'x', filePath: 'conf/', mountPath: '/app/f' }, 'filePath', 'a filePath naming a directory'],
    [{ type: 'file', content: 'x', filePath: 'a b.conf', mountPath: '/app/f' }, 'filePath', 'a filePath with a space'],
    [{ type: 'file', content: 'x', mountPath: '/app/my file.conf' }, 'filePath', 'a filePath taken from a mountPath it cannot name'],
    [{ type: 'file', filePath: 'f', mountPath: '/app/f' }, 'content', 'a file mount without content'],
  ];
  const answers: { field: string; what: string; res: Reply }[] = [];
  for (const [input, field, what] of cases) answers.push({ field, what, res: await client.post('mounts.create', { serviceId, ...input }) });
  // One assertion per behaviour; a failure names the inputs that break it.
  t.same(
    answers.filter(({ res }) => res.status !== 400 || res.body.code !== 'BAD_REQUEST').map(({ what, res }) => `${what}: ${res.status} ${res.body.code}`),
    [],
    'every bad input is a 400 BAD_REQUEST',
  );
  t.same(
    answers.filter(({ res, field }) => !fields(res.body).includes(field)).map(({ what, res, field }) => `${what}: ${field} not in [${fields(res.body).join(', ')}]`),
    [],
    'each names its field',
  );
  t.same(
    answers.filter(({ res, field }) => !(res.body.issues ?? []).some((i: { message: string }) => i.message.startsWith(`${field}: `))).map(({ what }) => what),
    [],
    "each field's message starts with the field",
  );

  t.test('every problem is reported at once', async t => {
    const res = await client.post('mounts.create', { serviceId, type: 'bind', hostPath: '/etc', mountPath: 'rel' });
    t.equal(res.status, 400);
    t.same(fields(res.body).sort(), ['hostPath', 'mountPath']);
  });

  t.test("the deny list: system trees, the engine, Berth's data, and whole top-level directories", async t => {
    const denied = [
      '/',
      '/etc',
      '/etc/passwd',
      '/proc',
      '/proc/1/root',
      '/sys/kernel',
      '/dev',
      '/dev/sda',
      '/boot',
      '/root',
      '/root/.ssh',
      '/var/run/docker.sock',
      '/run/docker.sock',
      '/run',
      '/var/lib/docker',
      '/var/lib/docker/volumes',
      '/usr',
      '/usr/bin',
      '/bin',
      '/sbin',
      '/lib',
      '/lib64',
      '/home',
      '/var',
      '/var/lib',
      '/srv',
      '/opt',
      '/mnt',
      '/tmp',
    ];
    const attempt = (hostPath: string) => client.post('mounts.create', { serviceId, type: 'bind', hostPath, mountPath: '/data' });
    const admitted: string[] = [];
    for (const hostPath of denied) {
      const res = await attempt(hostPath);
      if (res.status !== 400 || JSON.stringify(fields(res.body)) !== '["hostPath"]') admitted.push(`${hostPath}: ${res.status} [${fields(res.body).join(', ')}]`);
    }
    t.same(admitted, [], 'each denied path is refused (400), naming hostPath alone');
    // Berth's own data is the host access policy's to refuse (403), whatever directories the operator lists.
    const own = [server.dataDir, path.join(server.dataDir, 'secret.key'), path.join(server.dataDir, 'applications')];
    const ownAdmitted: string[] = [];
    for (const hostPath of own) {
      const res = await attempt(hostPath);
      if (res.status !== 403 || JSON.stringify(fields(res.body)) !== '["hostPath"]') ownAdmitted.push(`${hostPath}: ${res.status} [${fields(res.body).join(', ')}]`);
    }
    t.same(ownAdmitted, [], "Berth's data directory is refused (403), naming hostPath alone");
    // Below a whole-denied directory, and look-alikes of denied trees, are fine: they reach the owner check.
    const refused: string[] = [];
    for (const hostPath of ['/srv/data', '/home/app/uploads', '/var/lib/app-data', '/mnt/backups', '/etcetera', '/devices', '/var/runner', '/opt/app']) {
      const res = await attempt(hostPath);
      if (res.status !== 404) refused.push(`${hostPath}: ${res.status}`);
    }
    t.same(refused, [], 'paths below or beside a denied tree pass validation (then the workload is not found: 404)');
  });

  t.test('valid input for a workload that does not exist is NOT_FOUND', async t => {
    const found: string[] = [];
    for (const serviceType of ['application', 'postgres']) {
      const res = await client.post('mounts.create', { serviceId, serviceType, type: 'volume', volumeName: 'data', mountPath: '/data' });
      if (res.status !== 404 || res.body.code !== 'NOT_FOUND') found.push(`${serviceType}: ${res.status} ${res.body.code}`);
    }
    t.same(found, [], 'for an application and a postgres: 404 NOT_FOUND');
    t.equal((await client.get('mounts.one', { mountId: 'nope' })).status, 404);
    t.equal((await client.post('mounts.update', { mountId: 'nope', mountPath: '/x' })).status, 404);
    t.equal((await client.post('mounts.remove', { mountId: 'nope' })).status, 404);
    t.equal((await client.get('mounts.listByServiceId', { serviceType: 'application', serviceId })).status, 404);
    t.equal((await client.get('mounts.allNamedByApplicationId', { applicationId: serviceId })).status, 404);
  });

  t.test('a member may not create a bind mount', async t => {
    const member = await addMember(server, client, 'member@example.com', 'member', undefined, 'apiKey');
    const res = await member.client.post('mounts.create', { serviceId, type: 'bind', hostPath: '/srv/data', mountPath: '/data' });
    t.equal(res.status, 403);
    t.equal(res.body.code, 'FORBIDDEN');
  });

  t.test('no credential is UNAUTHORIZED', async t => {
    const res = await client.post('mounts.create', { serviceId, type: 'volume', volumeName: 'v', mountPath: '/data' }, { apiKey: undefined });
    t.equal(res.status, 401);
  });
});

t.test('mounts of an application', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const { client, userId } = await signUpAdmin(server);
  const app = await makeApplication(client, 'web');
  const base = { serviceType: 'application', serviceId: app.applicationId };

  const volume = await client.post('mounts.create', { ...base, type: 'volume', volumeName: 'web-data', mountPath: '/var/lib/data' });
  t.equal(volume.status, 200);
  t.same(volume.body, {
    mountId: volume.body.mountId,
    type: 'volume',
    hostPath: null,
    volumeName: 'web-data',
    filePath: null,
    content: null,
    mountPath: '/var/lib/data',
    serviceType: 'application',
    ...nullOwners,
    applicationId: app.applicationId,
  });
  t.match(volume.body.mountId, /^\S{8,}$/);

  const bind = await client.post('mounts.create', { ...base, type: 'bind', hostPath: '/srv/web/uploads', mountPath: '/uploads' });
  t.equal(bind.status, 200);
  t.match(bind.body, { type: 'bind', hostPath: '/srv/web/uploads', volumeName: null, filePath: null, content: null, mountPath: '/uploads' });

  const config = 'server {\n  listen 80; # ünïcode ✓\n}\n';
  const file = await client.post('mounts.create', { ...base, type: 'file', content: config, filePath: 'nginx/site.conf', mountPath: '/etc/nginx/conf.d/site.conf' });
  t.equal(file.status, 200);
  t.match(file.body, { type: 'file', filePath: 'nginx/site.conf', content: config, hostPath: null, volumeName: null });

  t.test('serviceType defaults to application; fields a type does not use are not kept', async t => {
    const res = await client.post('mounts.create', { serviceId: app.applicationId, type: 'volume', volumeName: 'cache', hostPath: '/srv/x', content: 'ignored', mountPath: '/cache' });
    t.equal(res.status, 200);
    t.match(res.body, { serviceType: 'application', applicationId: app.applicationId, volumeName: 'cache', hostPath: null, content: null, filePath: null });
    t.equal((await client.post('mounts.remove', { mountId: res.body.mountId })).status, 200);
  });

  t.test('a file mount without filePath takes its mountPath; empty content is a file too', async t => {
    const res = await client.post('mounts.create', { ...base, type: 'file', content: '', mountPath: '/app/config/settings.json', filePath: null });
    t.equal(res.status, 200);
    t.match(res.body, { filePath: 'app/config/settings.json', content: '' });
    t.equal((await client.post('mounts.remove', { mountId: res.body.mountId })).status, 200);
  });

  t.test('the content is sealed at rest', async t => {
    const em = server.kernel.container.cradle.orm.em.fork();
    const rows: { content: string }[] = await em.getConnection().execute('select content from mounts where mount_id = ?', [file.body.mountId]);
    t.equal(rows.length, 1);
    t.type(rows[0]?.content, 'string');
    t.notOk(rows[0]?.content.includes('listen 80'), 'the column does not hold the plain text');
    t.equal((await client.get('mounts.one', { mountId: file.body.mountId })).body.content, config, 'and it reads back as written');
  });

  t.test('one answers a mount, over REST and tRPC', async t => {
    const one = await client.get('mounts.one', { mountId: volume.body.mountId });
    t.equal(one.status, 200);
    t.same(one.body, volume.body);
    const trpc = await client.trpc('query', 'mounts.one', { mountId: file.body.mountId });
    t.equal(trpc.status, 200);
    t.same(trpc.body.result.data.json, file.body);
  });

  /** An application of its own with a volume, a bind and a file mount, in the order made. */
  const threeMounts = async (name: string) => {
    const own = await makeApplication(client, name);
    const made = [];
    for (const input of [
      { type: 'volume', volumeName: `${name}-data`, mountPath: '/var/lib/data' },
      { type: 'bind', hostPath: `/srv/${name}/uploads`, mountPath: '/uploads' },
      { type: 'file', content: config, filePath: 'nginx/site.conf', mountPath: '/etc/nginx/conf.d/site.conf' },
    ]) {
      const res = await client.post('mounts.create', { serviceId: own.applicationId, ...input });
      if (res.status !== 200) throw new Error(`mounts.create: ${res.status} ${JSON.stringify(res.body)}`);
      made.push(res.body.mountId as string);
    }
    return { applicationId: own.applicationId, mountIds: made };
  };

  t.test("listByServiceId answers the workload's mounts, oldest first", async t => {
    const { applicationId, mountIds } = await threeMounts('listed');
    const res = await client.get('mounts.listByServiceId', { serviceType: 'application', serviceId: applicationId });
    t.equal(res.status, 200);
    t.same(
      res.body.map((m: { mountId: string }) => m.mountId),
      mountIds,
    );
  });

  t.test('application.one lists the mounts', async t => {
    const { applicationId, mountIds } = await threeMounts('shown');
    const res = await client.get('application.one', { applicationId });
    t.equal(res.status, 200);
    t.same(
      res.body.mounts.map((m: { mountId: string }) => m.mountId),
      mountIds,
    );
    t.match(res.body.mounts[2], { type: 'file', content: config, filePath: 'nginx/site.conf' });
  });

  t.test('one workload cannot mount two things at one path, nor two file mounts in one file', async t => {
    const samePath = await client.post('mounts.create', { ...base, type: 'volume', volumeName: 'other', mountPath: '/uploads' });
    t.equal(samePath.status, 409);
    t.equal(samePath.body.code, 'CONFLICT');
    t.match(samePath.body.message, /mountPath \/uploads/);
    const spelledOtherwise = await client.post('mounts.create', { ...base, type: 'volume', volumeName: 'other', mountPath: '/./uploads//' });
    t.equal(spelledOtherwise.status, 409, 'the same target spelled otherwise');
    const sameFile = await client.post('mounts.create', { ...base, type: 'file', content: 'x', filePath: 'nginx/site.conf', mountPath: '/other.conf' });
    t.equal(sameFile.status, 409);
    t.match(sameFile.body.message, /filePath nginx\/site\.conf/);
    const other = await makeApplication(client, 'other');
    const elsewhere = await client.post('mounts.create', { serviceId: other.applicationId, type: 'volume', volumeName: 'web-data', mountPath: '/uploads' });
    t.equal(elsewhere.status, 200, 'another application may use the same path and volume');
  });

  t.test('update changes what is given and checks the result as a whole', async t => {
    const made = (await client.post('mounts.create', { ...base, type: 'volume', volumeName: 'before', mountPath: '/before' })).body;
    const renamed = await client.post('mounts.update', { mountId: made.mountId, volumeName: 'after' });
    t.equal(renamed.status, 200);
    t.same(renamed.body, { ...made, volumeName: 'after' });

    const toFile = await client.post('mounts.update', { mountId: made.mountId, type: 'file', content: 'A=1\n', mountPath: '/app/.env' });
    t.equal(toFile.status, 200);
    t.match(toFile.body, { type: 'file', content: 'A=1\n', filePath: 'app/.env', volumeName: null, mountPath: '/app/.env' }, "a new type drops the old type's fields");

    const content = await client.post('mounts.update', { mountId: made.mountId, content: 'A=2\n' });
    t.match(content.body, { content: 'A=2\n', filePath: 'app/.env' });

    const incomplete = await client.post('mounts.update', { mountId: made.mountId, type: 'bind' });
    t.equal(incomplete.status, 400, 'a bind without hostPath');
    t.same(fields(incomplete.body), ['hostPath']);
    const denied = await client.post('mounts.update', { mountId: made.mountId, type: 'bind', hostPath: '/var/run/docker.sock' });
    t.equal(denied.status, 400);
    t.same(fields(denied.body), ['hostPath']);
    const badPath = await client.post('mounts.update', { mountId: made.mountId, mountPath: '/a/../b' });
    t.same(fields(badPath.body), ['mountPath']);
    const taken = await client.post('mounts.update', { mountId: made.mountId, mountPath: '/uploads' });
    t.equal(taken.status, 409, "moved onto another mount's path");
    t.equal((await client.post('mounts.update', { mountId: made.mountId, mountPath: '/app/.env' })).status, 200, 'its own path is not a conflict');

    t.equal((await client.get('mounts.one', { mountId: made.mountId })).body.content, 'A=2\n', 'refused updates changed nothing');
    const wrongOwner = await client.post('mounts.update', { mountId: made.mountId, postgresId: 'x' });
    t.equal(wrongOwner.status, 400);
    t.same(fields(wrongOwner.body), ['postgresId']);
  });

  t.test('update may move a mount to another application of the organization', async t => {
    const target = await makeApplication(client, 'target');
    const made = (await client.post('mounts.create', { ...base, type: 'volume', volumeName: 'moving', mountPath: '/moving' })).body;
    const moved = await client.post('mounts.update', { mountId: made.mountId, applicationId: target.applicationId });
    t.equal(moved.status, 200);
    t.equal(moved.body.applicationId, target.applicationId);
    const list = await client.get('mounts.listByServiceId', { serviceType: 'application', serviceId: target.applicationId });
    t.same(
      list.body.map((m: { mountId: string }) => m.mountId),
      [made.mountId],
    );
    const nowhere = await client.post('mounts.update', { mountId: made.mountId, applicationId: 'no-such-app' });
    t.equal(nowhere.status, 404);
  });

  t.test('a member may add volumes but not change a bind mount', async t => {
    const member = await addMember(server, client, 'member@example.com', 'member', undefined, 'apiKey');
    const vol = await member.client.post('mounts.create', { ...base, type: 'volume', volumeName: 'member-vol', mountPath: '/member' });
    t.equal(vol.status, 200);
    const toBind = await member.client.post('mounts.update', { mountId: vol.body.mountId, type: 'bind', hostPath: '/srv/member' });
    t.equal(toBind.status, 403);
    const editBind = await member.client.post('mounts.update', { mountId: bind.body.mountId, mountPath: '/elsewhere' });
    t.equal(editBind.status, 403);
    t.equal((await member.client.get('mounts.one', { mountId: bind.body.mountId })).status, 200, 'but may read it');
  });

  t.test('another organization sees none of it', async t => {
    const other = await otherOrganization(server, userId);
    const answered: string[] = [];
    for (const m of [volume.body, bind.body, file.body]) {
      const calls = [
        ['one', await other.client.get('mounts.one', { mountId: m.mountId })],
        ['update', await other.client.post('mounts.update', { mountId: m.mountId, mountPath: '/stolen' })],
        ['remove', await other.client.post('mounts.remove', { mountId: m.mountId })],
      ] as const;
      for (const [op, res] of calls) if (res.status !== 404) answered.push(`${op} ${m.type}: ${res.status}`);
    }
    t.same(answered, [], 'one, update and remove of each mount (volume, bind, file) are 404 for it');
    const attach = await other.client.post('mounts.create', { ...base, type: 'volume', volumeName: 'intruder', mountPath: '/intruder' });
    t.equal(attach.status, 404, 'cannot attach to an application it does not own');
    t.equal(attach.body.code, 'NOT_FOUND');
    t.equal((await other.client.get('mounts.listByServiceId', { serviceType: 'application', serviceId: app.applicationId })).status, 404);
    t.equal((await other.client.get('mounts.allNamedByApplicationId', { applicationId: app.applicationId })).status, 404);
    // Its own application cannot take the first organization's mount either.
    const own = await makeApplication(other.client, 'own');
    t.equal((await other.client.post('mounts.update', { mountId: volume.body.mountId, applicationId: own.applicationId })).status, 404);
    t.equal((await client.get('mounts.one', { mountId: volume.body.mountId })).body.applicationId, app.applicationId, 'nothing moved');
    const ownMount = await other.client.post('mounts.create', { serviceId: own.applicationId, type: 'volume', volumeName: 'own-data', mountPath: '/var/lib/data' });
    t.equal(ownMount.status, 200, 'while its own applications take any path');
    const stealInto = await client.post('mounts.update', { mountId: volume.body.mountId, applicationId: own.applicationId });
    t.equal(stealInto.status, 404, "nor can the first organization move a mount into the other's application");
  });

  t.test('volumes and bind sources are never shared between organizations', async t => {
    const other = await otherOrganization(server, userId);
    const own = await makeApplication(other.client, 'theirs');
    const attempt = (input: Record<string, unknown>) => other.client.post('mounts.create', { serviceId: own.applicationId, mountPath: '/shared', ...input });
    const conflicts: [Record<string, unknown>, RegExp, string][] = [
      [{ type: 'volume', volumeName: 'web-data' }, /^volumeName web-data is used by another organization/, 'a volume the first organization mounts'],
      [{ type: 'volume', volumeName: app.appName }, /^volumeName .* belongs to another organization's workload/, 'a volume named like its application'],
      [{ type: 'volume', volumeName: `${app.appName}-data` }, /^volumeName /, 'a volume of the application (<appName>-data)'],
      [{ type: 'volume', volumeName: `${app.appName}_db.1` }, /^volumeName /, 'a volume of the application (<appName>_...)'],
      [{ type: 'bind', hostPath: '/srv/web/uploads' }, /^hostPath \/srv\/web\/uploads overlaps/, 'the same bind source'],
      [{ type: 'bind', hostPath: '/srv/web/uploads/2026' }, /^hostPath /, 'a directory within it'],
      [{ type: 'bind', hostPath: '/srv/web' }, /^hostPath /, 'a directory containing it'],
    ];
    const shared: string[] = [];
    for (const [input, pattern, what] of conflicts) {
      const res = await attempt(input);
      if (res.status !== 409 || !pattern.test(String(res.body.message))) shared.push(`${what}: ${res.status} ${res.body.message}`);
    }
    t.same(shared, [], 'each is a 409 whose message names the field');
    const notOwn: string[] = [];
    for (const input of [
      { type: 'volume', volumeName: `${app.appName}x-data` },
      { type: 'volume', volumeName: 'web-data2' },
      { type: 'bind', hostPath: '/srv/web/uploads2' },
      { type: 'bind', hostPath: '/srv/web_uploads' },
    ]) {
      const res = await attempt(input);
      if (res.status !== 200) notOwn.push(`${JSON.stringify(input)}: ${res.status} ${res.body.message}`);
      await other.client.post('mounts.remove', { mountId: res.body.mountId });
    }
    t.same(notOwn, [], 'look-alike names and paths are its own (200)');
    const mine = await client.post('mounts.create', { ...base, type: 'volume', volumeName: `${app.appName}-extra`, mountPath: '/extra' });
    t.equal(mine.status, 200, "the application's own organization may use its volumes");
    const theirs = await other.client.post('mounts.create', { serviceId: own.applicationId, type: 'volume', volumeName: 'their-data', mountPath: '/their' });
    t.equal(theirs.status, 200);
    const moveOnto = await client.post('mounts.update', { mountId: mine.body.mountId, volumeName: 'their-data' });
    t.equal(moveOnto.status, 409, 'update is checked too');
  });

  t.test('remove answers the mount as it was; a second remove is NOT_FOUND', async t => {
    const made = (await client.post('mounts.create', { ...base, type: 'volume', volumeName: 'gone', mountPath: '/gone' })).body;
    const res = await client.post('mounts.remove', { mountId: made.mountId });
    t.equal(res.status, 200);
    t.same(res.body, made);
    t.equal((await client.get('mounts.one', { mountId: made.mountId })).status, 404);
    t.equal((await client.post('mounts.remove', { mountId: made.mountId })).status, 404);
  });

  t.test('deleting the application deletes its mounts', async t => {
    const doomed = await makeApplication(client, 'doomed');
    const made = (await client.post('mounts.create', { serviceId: doomed.applicationId, type: 'volume', volumeName: 'x', mountPath: '/x' })).body;
    t.equal((await client.post('application.delete', { applicationId: doomed.applicationId })).status, 200);
    t.equal((await client.get('mounts.one', { mountId: made.mountId })).status, 404);
  });
});

t.test('mounts of databases', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const { client, userId } = await signUpAdmin(server);
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Data' });
  const pg = await client.post('postgres.create', { name: 'db', databaseName: 'app', databaseUser: 'app', databasePassword: 'Secret_pw-1', environmentId: environment.environmentId });
  t.equal(pg.status, 200);
  const redis = await client.post('redis.create', { name: 'cache', databasePassword: 'Secret_pw-1', environmentId: environment.environmentId });
  t.equal(redis.status, 200);

  const onPg = await client.post('mounts.create', { serviceType: 'postgres', serviceId: pg.body.postgresId, type: 'volume', volumeName: 'pg-extra', mountPath: '/extra' });
  t.equal(onPg.status, 200);
  t.same(onPg.body, { ...onPg.body, serviceType: 'postgres', ...nullOwners, postgresId: pg.body.postgresId });
  const onRedis = await client.post('mounts.create', { serviceType: 'redis', serviceId: redis.body.redisId, type: 'bind', hostPath: '/srv/redis-conf', mountPath: '/conf' });
  t.equal(onRedis.status, 200);
  t.match(onRedis.body, { serviceType: 'redis', redisId: redis.body.redisId, applicationId: null, postgresId: null });

  const list = await client.get('mounts.listByServiceId', { serviceType: 'postgres', serviceId: pg.body.postgresId });
  t.same(list.body, [onPg.body]);
  const wrongKind = await client.post('mounts.create', { serviceType: 'mysql', serviceId: pg.body.postgresId, type: 'volume', volumeName: 'x', mountPath: '/x' });
  t.equal(wrongKind.status, 404, 'the id of a postgres is no mysql');
  const asApp = await client.get('mounts.listByServiceId', { serviceType: 'application', serviceId: pg.body.postgresId });
  t.equal(asApp.status, 404);

  const moved = await client.post('mounts.update', { mountId: onPg.body.mountId, serviceType: 'redis', redisId: redis.body.redisId });
  t.equal(moved.status, 200, 'a mount may move to another kind of workload');
  t.match(moved.body, { serviceType: 'redis', redisId: redis.body.redisId, postgresId: null });
  const noOwner = await client.post('mounts.update', { mountId: onPg.body.mountId, serviceType: 'mongo' });
  t.equal(noOwner.status, 400, "moving to another kind needs that kind's id");
  t.same(fields(noOwner.body), ['mongoId']);

  const other = await otherOrganization(server, userId);
  const theirs = await makeApplication(other.client, 'theirs');
  const dataVolume = await other.client.post('mounts.create', { serviceId: theirs.applicationId, type: 'volume', volumeName: `${pg.body.appName}-data`, mountPath: '/steal' });
  t.equal(dataVolume.status, 409, "another organization cannot mount the database's data volume");
  t.match(dataVolume.body.message, /^volumeName /);
  t.equal((await other.client.post('mounts.create', { serviceType: 'postgres', serviceId: pg.body.postgresId, type: 'volume', volumeName: 'in', mountPath: '/in' })).status, 404);

  t.equal((await client.post('redis.remove', { redisId: redis.body.redisId })).status, 200);
  t.equal((await client.get('mounts.one', { mountId: onRedis.body.mountId })).status, 404, 'removing the database removes its mounts');
  t.equal((await client.get('mounts.one', { mountId: onPg.body.mountId })).status, 404, 'including the one moved to it');
});

t.test('allNamedByApplicationId answers the named volumes of the running container', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const app = await makeApplication(client, 'volumes');

  const idle = await client.get('mounts.allNamedByApplicationId', { applicationId: app.applicationId });
  t.equal(idle.status, 200);
  t.same(idle.body, [], 'nothing runs yet');

  // The application's service as a deployment would run it: named after appName, with a named
  // volume and a bind mount (only the volume is answered).
  const docker = await server.kernel.container.cradle.hosts.local();
  const volumeName = `berth-test-vol-${randomBytes(4).toString('hex')}`;
  const service = await docker.createService({
    Name: app.appName,
    TaskTemplate: {
      ContainerSpec: {
        Image: TEST_BASE_IMAGE,
        Command: ['sleep', '3600'],
        Mounts: [
          { Type: 'volume', Source: volumeName, Target: '/data' },
          { Type: 'bind', Source: '/tmp', Target: '/host-tmp', ReadOnly: true },
        ],
      },
    },
    Mode: { Replicated: { Replicas: 1 } },
  });
  t.teardown(async () => {
    await docker
      .getService(service.id)
      .remove()
      .catch(() => {});
    // The engine keeps the volume busy until the task's container is gone, a few seconds later.
    await waitFor(
      `volume ${volumeName} removed`,
      () =>
        docker
          .getVolume(volumeName)
          .remove()
          .then(
            () => true,
            (e: { statusCode?: number }) => {
              if (e.statusCode === 404) return true;
              throw e;
            },
          ),
      { timeout: 60_000, interval: 250 },
    );
  });

  // One assertion however many polls the task takes to start, so the count does not vary.
  const refused: string[] = [];
  const running = await waitFor(
    'the named volumes of the running container',
    async () => {
      const res = await client.get<{ Destination: string; Name?: string; Type: string; RW: boolean }[]>('mounts.allNamedByApplicationId', { applicationId: app.applicationId });
      if (res.status !== 200) refused.push(`${res.status} ${JSON.stringify(res.body)}`);
      return res.status === 200 && res.body.length > 0 && res.body;
    },
    { timeout: 90_000, interval: 250 },
  );
  t.same(refused, [], 'every answer while the task starts is a 200');
  t.equal(running.length, 1, 'the named volume, not the bind mount');
  t.match(running[0], { Type: 'volume', Name: volumeName, Destination: '/data', RW: true });
});
