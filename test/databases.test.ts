// Databases of every kind, run for real: create → deploy → write and read with the real client
// library through the external port → stop (refused) → start (data kept) → changePassword (old
// refused, new works) → rebuild (data gone) → remove (no service, no volume). Images are the local
// berth-test ones (scripts/db-images.sh); the mysql kind runs on the MariaDB image, and on a real
// MySQL image and mongo on a real MongoDB image where this host has them (test/expected-skips).
import t from 'tap';
import Docker from 'dockerode';
import pg from 'pg';
import mysql from 'mysql2/promise';
import { createClient } from 'redis';
import { MongoClient } from 'mongodb';
import {
  startTestServer,
  signUpAdmin,
  waitFor,
  freePort,
  canRun,
  removeServiceAndVolume,
  engineGone,
  TEST_POSTGRES_IMAGE,
  TEST_MARIADB_IMAGE,
  TEST_REDIS_IMAGE,
  runFinished,
} from '@berth/core/testing';
import { runContainerCommand } from '@berth/plugin-workloads/testing';
import { dataVolumeOf } from '@berth/plugin-workloads';

t.setTimeout(900_000);
const docker = new Docker();

// Neither can be built here (test/expected-skips); a host that has them runs the same flow on them.
const TEST_MYSQL_IMAGE = 'berth-test/mysql:1';
const TEST_MONGO_IMAGE = 'berth-test/mongo:1';

interface Conn {
  write(value: string): Promise<void>;
  /** The values written; null only when nothing was ever written (no such table, collection or key). Any other failure throws. */
  read(): Promise<string[] | null>;
  close(): Promise<void>;
}
/** What a client's rejection must look like (the shape t.rejects compares with). */
type Rejection = { code: string | number; [k: string]: unknown } | { message: RegExp; [k: string]: unknown };
interface Kind {
  kind: string;
  image: string;
  /** Its id in test/expected-skips, when the image may be missing on a host. */
  skip?: string;
  create: Record<string, unknown>;
  connect(port: number, password: string): Promise<Conn>;
  /** What the client rejects with when the password is wrong. */
  authError: Rejection;
  /** What the client rejects with when nothing listens on the port (host-mode publishing: no task, no listener). */
  refused: Rejection;
}

/** The rows of berth_probe; null when the query fails because the table does not exist. */
async function probeRows(query: () => Promise<{ v: string }[]>, noTable: (e: { code?: string; errno?: number }) => boolean): Promise<string[] | null> {
  try {
    return (await query()).map(r => r.v);
  } catch (e) {
    if (noTable(e as { code?: string })) return null;
    throw e;
  }
}

const mysqlKind = (kind: 'mysql' | 'mariadb', image: string, skip?: string): Kind => ({
  kind,
  image,
  skip,
  create: { databaseName: 'shop', databaseUser: 'shop', databasePassword: 'My-pass_1#x', databaseRootPassword: 'Root-pass_1' },
  async connect(port, password) {
    const c = await mysql.createConnection({ host: '127.0.0.1', port, user: 'shop', password, database: 'shop', connectTimeout: 3000 });
    return {
      async write(v) {
        await c.query('create table if not exists berth_probe (v text)');
        await c.query('insert into berth_probe (v) values (?)', [v]);
      },
      read: () =>
        probeRows(
          async () => (await c.query('select v from berth_probe'))[0] as { v: string }[],
          e => e.errno === 1146,
        ),
      close: () => c.end(),
    };
  },
  authError: { code: 'ER_ACCESS_DENIED_ERROR', errno: 1045 },
  refused: { code: 'ECONNREFUSED' },
});

const kinds: Kind[] = [
  {
    kind: 'postgres',
    image: TEST_POSTGRES_IMAGE,
    create: { databaseName: 'shop', databaseUser: 'shop', databasePassword: 'Pg-pass_1#(x)' },
    async connect(port, password) {
      const c = new pg.Client({ host: '127.0.0.1', port, user: 'shop', password, database: 'shop', connectionTimeoutMillis: 3000 });
      c.on('error', () => undefined);
      await c.connect();
      return {
        async write(v) {
          await c.query('create table if not exists berth_probe (v text)');
          await c.query('insert into berth_probe (v) values ($1)', [v]);
        },
        read: () =>
          probeRows(
            async () => (await c.query('select v from berth_probe')).rows,
            e => e.code === '42P01',
          ),
        close: () => c.end(),
      };
    },
    authError: { code: '28P01' },
    refused: { code: 'ECONNREFUSED' },
  },
  mysqlKind('mysql', TEST_MARIADB_IMAGE),
  mysqlKind('mysql', TEST_MYSQL_IMAGE, 'mysql-image'),
  mysqlKind('mariadb', TEST_MARIADB_IMAGE),
  {
    kind: 'redis',
    image: TEST_REDIS_IMAGE,
    create: { databasePassword: 'Redis-pass_1' },
    async connect(port, password) {
      const c = createClient({ url: `redis://127.0.0.1:${port}`, password, socket: { connectTimeout: 3000, reconnectStrategy: false } });
      c.on('error', () => undefined);
      await c.connect();
      return {
        write: async v => void (await c.set('berth:probe', v)),
        read: async () => {
          const v = await c.get('berth:probe');
          return v === null ? null : [v];
        },
        close: async () => void (await c.quit()),
      };
    },
    authError: { message: /^WRONGPASS/ },
    refused: { code: 'ECONNREFUSED' },
  },
  {
    kind: 'mongo',
    image: TEST_MONGO_IMAGE,
    skip: 'mongod',
    create: { databaseUser: 'shop', databasePassword: 'Mongo-pass_1#x' },
    async connect(port, password) {
      // The database user is mongo's root user, which lives in admin.
      const c = new MongoClient(`mongodb://127.0.0.1:${port}/?directConnection=true`, {
        auth: { username: 'shop', password },
        authSource: 'admin',
        serverSelectionTimeoutMS: 3000,
        connectTimeoutMS: 3000,
      });
      try {
        await c.connect();
        await c.db('admin').command({ ping: 1 });
      } catch (e) {
        await c.close().catch(() => undefined);
        throw e;
      }
      const db = c.db('shop');
      return {
        write: async v => void (await db.collection('berth_probe').insertOne({ v })),
        read: async () => ((await db.listCollections({ name: 'berth_probe' }).toArray()).length ? (await db.collection<{ v: string }>('berth_probe').find().toArray()).map(d => d.v) : null),
        close: () => c.close(),
      };
    },
    authError: { code: 18, codeName: 'AuthenticationFailed' },
    // The driver reports a server it cannot reach as a failed server selection naming the socket error.
    refused: { name: 'MongoServerSelectionError', message: /ECONNREFUSED/ },
  },
];

const imageMissing = (image: string) =>
  docker
    .getImage(image)
    .inspect()
    .then(
      () => undefined,
      (e: { statusCode?: number }) => (e.statusCode === 404 ? `no image ${image} on this host` : Promise.reject(e)),
    );

t.test('databases on the real engine', async t => {
  const server = await startTestServer({ deploySettleSeconds: 0 });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const {
    body: { project, environment },
  } = await client.post('project.create', { name: 'Data' });
  const run = (op: string, input: Record<string, unknown>) => runFinished(client, op, input);

  t.test('a database gets its file mounts; a mount on its data path is refused at deploy', async t => {
    const created = await client.post('redis.create', { name: 'with files', environmentId: environment.environmentId, dockerImage: TEST_REDIS_IMAGE, databasePassword: 'Files-pass_1' });
    const { redisId, appName } = created.body as { redisId: string; appName: string };
    t.teardown(() => removeServiceAndVolume(appName));
    const file = await client.post('mounts.create', { type: 'file', content: 'maxmemory 64mb\n', mountPath: '/etc/berth/extra.conf', serviceType: 'redis', serviceId: redisId });
    t.equal(file.status, 200, JSON.stringify(file.body));
    const done = await run('redis.deploy', { redisId });
    t.equal(done.status, 'done', done.errorMessage ?? '');
    const [container] = await docker.listContainers({ filters: { label: [`com.docker.swarm.service.name=${appName}`] } });
    const read = await runContainerCommand(docker, container!.Id, { cmd: ['cat', '/etc/berth/extra.conf'] });
    t.equal(read.stdout.toString('utf8'), 'maxmemory 64mb\n', 'the file is in the container');

    const onData = await client.post('mounts.create', { type: 'volume', volumeName: `extra-${appName}`, mountPath: '/data', serviceType: 'redis', serviceId: redisId });
    t.equal(onData.status, 200, JSON.stringify(onData.body));
    const refused = await run('redis.deploy', { redisId });
    t.equal(refused.status, 'error');
    t.match(refused.errorMessage, /\/data.*data volume/);
    t.equal((await client.post('redis.remove', { redisId })).status, 200);
  });

  for (const k of kinds) {
    t.test(`${k.kind} on ${k.image}: create → deploy → data → stop → start → changePassword → rebuild → remove`, async t => {
      if (k.skip && !canRun(t, k.skip, await imageMissing(k.image))) return;
      const id = `${k.kind}Id`;
      const created = await client.post(`${k.kind}.create`, { name: `${k.kind} main`, environmentId: environment.environmentId, dockerImage: k.image, ...k.create });
      t.equal(created.status, 200, JSON.stringify(created.body));
      const dbId = created.body[id] as string;
      const appName = created.body.appName as string;
      t.teardown(() => removeServiceAndVolume(appName));
      const port = await freePort();
      t.equal((await client.post(`${k.kind}.saveExternalPort`, { [id]: dbId, externalPort: port })).body.externalPort, port);
      // Host-mode publishing follows the task start closely: the port may open a moment after the deployment is done.
      const connected = (password: string) => waitFor(`${k.kind} accepting connections on ${port}`, () => k.connect(port, password));

      const deployed = await run(`${k.kind}.deploy`, { [id]: dbId });
      t.equal(deployed.status, 'done', deployed.errorMessage ?? '');
      const one = await client.get(`${k.kind}.one`, { [id]: dbId });
      t.equal(one.body.applicationStatus, 'done');
      t.match(one.body.internalConnectionUrl, new RegExp(`^[a-z]+://.*@${appName}:\\d+`));
      t.match(one.body.externalConnectionUrl, new RegExp(`:${port}`));
      t.match(one.body, { environment: { environmentId: environment.environmentId, project: { projectId: project.projectId } }, backups: [] });
      const password = k.create.databasePassword as string;
      t.notOk((await client.get('deployment.readLogs', { deploymentId: deployed.deploymentId })).body.includes(password), 'the password never reaches the log');

      let conn = await connected(password);
      t.equal(await conn.read(), null, 'a new database has no probe table yet');
      await conn.write('kept-row');
      t.same(await conn.read(), ['kept-row'], 'written and read with the real client');
      await conn.close();

      const stopped = await run(`${k.kind}.stop`, { [id]: dbId });
      t.equal(stopped.status, 'done', stopped.errorMessage ?? '');
      t.equal((await client.get(`${k.kind}.one`, { [id]: dbId })).body.applicationStatus, 'idle');
      // Stop waits until no task is active, and host-mode publishing goes with the task.
      await t.rejects(k.connect(port, password), k.refused, 'connection refused while stopped');

      const started = await run(`${k.kind}.start`, { [id]: dbId });
      t.equal(started.status, 'done', started.errorMessage ?? '');
      conn = await connected(password);
      t.same(await conn.read(), ['kept-row'], 'the data survived stop/start');
      await conn.close();

      const newPassword = 'New-pass_2#z';
      const changed = await client.post(`${k.kind}.changePassword`, { [id]: dbId, password: newPassword });
      t.equal(changed.status, 200, JSON.stringify(changed.body));
      await t.rejects(k.connect(port, password), k.authError, "the old password is refused by the server's authentication");
      conn = await connected(newPassword);
      t.same(await conn.read(), ['kept-row'], 'the new password works');
      await conn.close();
      t.equal((await client.get(`${k.kind}.one`, { [id]: dbId })).body.databasePassword, newPassword, 'the record has the new password');

      const rebuilt = await run(`${k.kind}.rebuild`, { [id]: dbId });
      t.equal(rebuilt.status, 'done', rebuilt.errorMessage ?? '');
      conn = await connected(newPassword);
      t.equal(await conn.read(), null, 'rebuild starts from an empty data volume: the probe table is not there');
      await conn.close();

      const history = await client.get('deployment.allByType', { type: k.kind, id: dbId });
      t.equal(history.status, 200);
      t.same(
        history.body.map((d: { action: string }) => d.action),
        ['rebuild', 'start', 'stop', 'deploy'],
        'its deployments are recorded, newest first',
      );
      const removed = await client.post(`${k.kind}.remove`, { [id]: dbId });
      t.equal(removed.status, 200);
      t.equal(await engineGone(docker.getService(appName).inspect()), 'gone', 'no service');
      t.equal(await engineGone(docker.getVolume(dataVolumeOf(k.kind, dbId)).inspect()), 'gone', 'no volume');
      t.equal((await client.get(`${k.kind}.one`, { [id]: dbId })).status, 404);
    });
  }
});
