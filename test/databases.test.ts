// Databases of every kind, run for real: create → deploy → write and read with the real client
// library through the external port → stop (refused) → start (data kept) → changePassword (old
// refused, new works) → rebuild (data gone) → remove (no service, no volume). Images are the local
// berth-test ones (scripts/db-images.sh); mysql is served by the MariaDB image.
import t from 'tap';
import Docker from 'dockerode';
import pg from 'pg';
import mysql from 'mysql2/promise';
import { createClient } from 'redis';
import { startTestServer, signUpAdmin, TEST_POSTGRES_IMAGE, TEST_MARIADB_IMAGE, TEST_REDIS_IMAGE, type Client } from '@berth/core/testing';

t.setTimeout(900_000);
const docker = new Docker();
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));
const freePort = () => 20000 + Math.floor(Math.random() * 20000);

interface Conn { write(value: string): Promise<void>; read(): Promise<string | null>; close(): Promise<void> }
interface Kind {
  kind: string;
  image: string;
  create: Record<string, unknown>;
  connect(port: number, password: string): Promise<Conn>;
}

const sqlConn = (query: (sql: string, params?: unknown[]) => Promise<unknown[]>, close: () => Promise<void>): Conn => ({
  async write(value) {
    await query('create table if not exists berth_probe (v text)');
    await query('insert into berth_probe (v) values (?)', [value]);
  },
  async read() {
    try {
      const rows = await query('select v from berth_probe') as { v: string }[];
      return rows[0]?.v ?? null;
    } catch {
      return null;
    }
  },
  close,
});

const kinds: Kind[] = [
  {
    kind: 'postgres', image: TEST_POSTGRES_IMAGE,
    create: { databaseName: 'shop', databaseUser: 'shop', databasePassword: 'Pg-pass_1#(x)' },
    async connect(port, password) {
      const c = new pg.Client({ host: '127.0.0.1', port, user: 'shop', password, database: 'shop', connectionTimeoutMillis: 3000 });
      await c.connect();
      return {
        async write(v) {
          await c.query('create table if not exists berth_probe (v text)');
          await c.query('insert into berth_probe (v) values ($1)', [v]);
        },
        async read() {
          try {
            return (await c.query('select v from berth_probe')).rows[0]?.v ?? null;
          } catch {
            return null;
          }
        },
        close: () => c.end(),
      };
    },
  },
  ...(['mysql', 'mariadb'] as const).map((kind): Kind => ({
    kind, image: TEST_MARIADB_IMAGE,
    create: { databaseName: 'shop', databaseUser: 'shop', databasePassword: 'My-pass_1#x', databaseRootPassword: 'Root-pass_1' },
    async connect(port, password) {
      const c = await mysql.createConnection({ host: '127.0.0.1', port, user: 'shop', password, database: 'shop', connectTimeout: 3000 });
      return sqlConn(async (sql, params) => (await c.query(sql, params))[0] as unknown[], () => c.end());
    },
  })),
  {
    kind: 'redis', image: TEST_REDIS_IMAGE,
    create: { databasePassword: 'Redis-pass_1' },
    async connect(port, password) {
      const c = createClient({ url: `redis://127.0.0.1:${port}`, password, socket: { connectTimeout: 3000, reconnectStrategy: false } });
      c.on('error', () => undefined);
      await c.connect();
      return { write: async v => void (await c.set('berth:probe', v)), read: () => c.get('berth:probe'), close: async () => void (await c.quit()) };
    },
  },
];

async function finished(client: Client, deploymentId: string, ms = 240_000): Promise<Record<string, any>> {
  const until = Date.now() + ms;
  for (;;) {
    const res = await client.get('deployment.one', { deploymentId });
    if (!['queued', 'running'].includes(res.body.status)) return res.body;
    if (Date.now() > until) throw new Error(`deployment ${deploymentId} still ${res.body.status}`);
    await sleep(250);
  }
}

/** Connects, retrying while the port opens (host-mode publishing follows the task start closely). */
async function connected(k: Kind, port: number, password: string, ms = 30_000): Promise<Conn> {
  const until = Date.now() + ms;
  let last: unknown;
  while (Date.now() < until) {
    try {
      return await k.connect(port, password);
    } catch (e) {
      last = e;
      await sleep(300);
    }
  }
  throw last;
}

t.test('databases on the real engine', async t => {
  const server = await startTestServer({ deploySettleSeconds: 0 });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const { body: { project, environment } } = await client.post('project.create', { name: 'Data' });

  t.test('a database gets its file mounts; a mount on its data path is refused at deploy', async t => {
    const created = await client.post('redis.create', { name: 'with files', environmentId: environment.environmentId, dockerImage: TEST_REDIS_IMAGE, databasePassword: 'Files-pass_1' });
    const { redisId, appName } = created.body as { redisId: string; appName: string };
    t.teardown(async () => {
      await docker.getService(appName).remove().catch(() => undefined);
      await sleep(1000);
      await docker.getVolume(`${appName}-data`).remove().catch(() => undefined);
    });
    const file = await client.post('mounts.create', { type: 'file', content: 'maxmemory 64mb\n', mountPath: '/etc/berth/extra.conf', serviceType: 'redis', serviceId: redisId });
    t.equal(file.status, 200, JSON.stringify(file.body));
    const done = await finished(client, (await client.post('redis.deploy', { redisId })).body.deploymentId);
    t.equal(done.status, 'done', done.errorMessage ?? '');
    const [container] = await docker.listContainers({ filters: { label: [`com.docker.swarm.service.name=${appName}`] } });
    const exec = await docker.getContainer(container!.Id).exec({ Cmd: ['cat', '/etc/berth/extra.conf'], AttachStdout: true, AttachStderr: true });
    const stream = await exec.start({});
    const chunks: Buffer[] = [];
    await new Promise(resolve => { stream.on('data', (c: Buffer) => chunks.push(c)); stream.on('end', resolve); });
    t.match(Buffer.concat(chunks).toString('utf8'), /maxmemory 64mb/, 'the file is in the container');

    const onData = await client.post('mounts.create', { type: 'volume', volumeName: `extra-${appName}`, mountPath: '/data', serviceType: 'redis', serviceId: redisId });
    t.equal(onData.status, 200, JSON.stringify(onData.body));
    const refused = await finished(client, (await client.post('redis.deploy', { redisId })).body.deploymentId);
    t.equal(refused.status, 'error');
    t.match(refused.errorMessage, /\/data.*data volume/);
    t.equal((await client.post('redis.remove', { redisId })).status, 200);
  });

  for (const k of kinds) {
    t.test(`${k.kind}: create → deploy → data → stop → start → changePassword → rebuild → remove`, async t => {
      const id = `${k.kind}Id`;
      const created = await client.post(`${k.kind}.create`, { name: `${k.kind} main`, environmentId: environment.environmentId, dockerImage: k.image, ...k.create });
      t.equal(created.status, 200, JSON.stringify(created.body));
      const dbId = created.body[id] as string;
      const appName = created.body.appName as string;
      t.teardown(async () => {
        await docker.getService(appName).remove().catch(() => undefined);
        await sleep(1000);
        await docker.getVolume(`${appName}-data`).remove().catch(() => undefined);
      });
      const port = freePort();
      t.equal((await client.post(`${k.kind}.saveExternalPort`, { [id]: dbId, externalPort: port })).body.externalPort, port);

      const deployed = await finished(client, (await client.post(`${k.kind}.deploy`, { [id]: dbId })).body.deploymentId);
      t.equal(deployed.status, 'done', deployed.errorMessage ?? '');
      const one = await client.get(`${k.kind}.one`, { [id]: dbId });
      t.equal(one.body.applicationStatus, 'done');
      t.match(one.body.internalConnectionUrl, new RegExp(`^[a-z]+://.*@${appName}:\\d+`));
      t.match(one.body.externalConnectionUrl, new RegExp(`:${port}`));
      t.match(one.body, { environment: { environmentId: environment.environmentId, project: { projectId: project.projectId } }, backups: [] });
      t.notMatch(await (await client.get('deployment.readLogs', { deploymentId: deployed.deploymentId })).body, new RegExp(String(k.create.databasePassword).replace(/[()#]/g, '\\$&')), 'the password never reaches the log');

      const password = k.create.databasePassword as string;
      let conn = await connected(k, port, password);
      await conn.write('kept-row');
      t.equal(await conn.read(), 'kept-row', 'written and read with the real client');
      await conn.close();

      const stopped = await finished(client, (await client.post(`${k.kind}.stop`, { [id]: dbId })).body.deploymentId);
      t.equal(stopped.status, 'done', stopped.errorMessage ?? '');
      t.equal((await client.get(`${k.kind}.one`, { [id]: dbId })).body.applicationStatus, 'idle');
      await t.rejects(k.connect(port, password), 'connection refused while stopped');

      const started = await finished(client, (await client.post(`${k.kind}.start`, { [id]: dbId })).body.deploymentId);
      t.equal(started.status, 'done', started.errorMessage ?? '');
      conn = await connected(k, port, password);
      t.equal(await conn.read(), 'kept-row', 'the data survived stop/start');
      await conn.close();

      const newPassword = 'New-pass_2#z';
      const changed = await client.post(`${k.kind}.changePassword`, { [id]: dbId, password: newPassword });
      t.equal(changed.status, 200, JSON.stringify(changed.body));
      await t.rejects(k.connect(port, password), 'the old password is refused');
      conn = await connected(k, port, newPassword);
      t.equal(await conn.read(), 'kept-row', 'the new password works');
      await conn.close();
      t.equal((await client.get(`${k.kind}.one`, { [id]: dbId })).body.databasePassword, newPassword, 'the record has the new password');

      const rebuilt = await finished(client, (await client.post(`${k.kind}.rebuild`, { [id]: dbId })).body.deploymentId);
      t.equal(rebuilt.status, 'done', rebuilt.errorMessage ?? '');
      conn = await connected(k, port, newPassword);
      t.equal(await conn.read(), null, 'rebuild starts from an empty data volume');
      await conn.close();

      const history = await client.get('deployment.allByType', { type: k.kind, id: dbId });
      t.equal(history.status, 200);
      t.same(history.body.map((d: { action: string }) => d.action), ['rebuild', 'start', 'stop', 'deploy'], 'its deployments are recorded, newest first');
      const removed = await client.post(`${k.kind}.remove`, { [id]: dbId });
      t.equal(removed.status, 200);
      t.equal(await docker.getService(appName).inspect().then(() => 'present', () => 'gone'), 'gone', 'no service');
      t.equal(await docker.getVolume(`${appName}-data`).inspect().then(() => 'present', () => 'gone'), 'gone', 'no volume');
      t.equal((await client.get(`${k.kind}.one`, { [id]: dbId })).status, 404);
    });
  }
});
