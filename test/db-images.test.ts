// The database images scripts/db-images.sh builds behave like the public ones Berth runs in production:
// the environment they honour, a real client from the host, a wrong password refused, data kept in the
// volume across a new container, a quick `docker stop`, and the tools backups run inside them.
// MongoDB has no image here: Debian ships no MongoDB package and nothing can be pulled.
import t, { type Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import pg from 'pg';
import mysql from 'mysql2/promise';
import { createClient } from 'redis';
import { TEST_POSTGRES_IMAGE, TEST_MARIADB_IMAGE, TEST_REDIS_IMAGE, waitFor } from '@berth/core/testing';

const run = promisify(execFile);
const docker = new Docker();
const suffix = () => randomBytes(4).toString('hex');
/** Retries `connect` until it succeeds: a fresh database refuses connections while it initialises. */
const connected = <T>(what: string, connect: () => Promise<T>) => waitFor(what, connect, { timeout: 60_000, interval: 200 });

interface Started {
  container: Docker.Container;
  name: string;
  port: number;
}

/** Containers and volumes a test made, removed in its teardown (containers first, or the volumes are in use). */
function resources(t: Test) {
  const containers: Docker.Container[] = [];
  const volumes: string[] = [];
  t.teardown(async () => {
    await Promise.all(containers.map(c => c.remove({ force: true }).catch(() => {})));
    await Promise.all(
      volumes.map(v =>
        docker
          .getVolume(v)
          .remove()
          .catch(() => {}),
      ),
    );
  });
  return {
    /** A container of the image on a named volume, its port published on a free loopback port. */
    async start(opts: { image: string; port: number; volume: string; target: string; env?: Record<string, string>; cmd?: string[] }): Promise<Started> {
      const name = `berth-dbimg-${suffix()}`;
      const portKey = `${opts.port}/tcp`;
      const container = await docker.createContainer({
        name,
        Image: opts.image,
        Env: Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`),
        ...(opts.cmd ? { Cmd: opts.cmd } : {}),
        ExposedPorts: { [portKey]: {} },
        HostConfig: { PortBindings: { [portKey]: [{ HostIp: '127.0.0.1', HostPort: '' }] }, Mounts: [{ Type: 'volume', Source: opts.volume, Target: opts.target }] },
      });
      containers.push(container);
      await container.start();
      const info = await container.inspect();
      const port = Number(info.NetworkSettings.Ports[portKey]?.[0]?.HostPort);
      return { container, name, port };
    },
    async volume(): Promise<string> {
      const name = `berth-dbimg-${suffix()}`;
      await docker.createVolume({ Name: name });
      volumes.push(name);
      return name;
    },
  };
}

/** `docker stop` with the engine's default 10 s grace: answers how long the container took to stop. */
async function timedStop(c: Started): Promise<number> {
  const began = Date.now();
  await c.container.stop({ t: 10 });
  return Date.now() - began;
}

/** Waits until the container exits; answers its exit code and its log. */
async function exited(c: Started): Promise<{ code: number; log: string }> {
  const { StatusCode } = await c.container.wait();
  const { stdout, stderr } = await run('docker', ['logs', c.name]);
  return { code: StatusCode, log: stdout + stderr };
}

async function exec(c: Started, cmd: string[]): Promise<string> {
  const { stdout } = await run('docker', ['exec', c.name, ...cmd]);
  return stdout;
}

async function requireImage(t: Test, image: string): Promise<boolean> {
  try {
    await docker.getImage(image).inspect();
    return true;
  } catch {
    t.fail(`${image} is missing: run scripts/db-images.sh (scripts/services.sh does)`);
    return false;
  }
}

t.test('postgres image', async t => {
  if (!(await requireImage(t, TEST_POSTGRES_IMAGE))) return;
  const res = resources(t);
  const password = `pw 'quoted' \\ ${suffix()}`;
  const env = { POSTGRES_PASSWORD: password, POSTGRES_USER: 'app', POSTGRES_DB: 'app-db' };
  const vol = await res.volume();
  const target = '/var/lib/postgresql/data';
  const connect = (port: number, pw = password) => {
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'app', password: pw, database: 'app-db', connectionTimeoutMillis: 3000 });
    // The stop below ends open sessions; that is expected, not a crash of the test.
    client.on('error', () => {});
    return client.connect().then(
      () => client,
      err => {
        void client.end().catch(() => {});
        throw err;
      },
    );
  };

  const first = await res.start({ image: TEST_POSTGRES_IMAGE, port: 5432, volume: vol, target, env });
  const db = await connected('postgres to accept the password', () => connect(first.port));
  await db.query('create table notes (id int primary key, body text)');
  await db.query('insert into notes values (1, $1)', ['kept in the volume']);
  t.same((await db.query('select body from notes')).rows, [{ body: 'kept in the volume' }], 'a row written and read');
  t.equal((await db.query('select current_user as u')).rows[0].u, 'app', 'POSTGRES_USER is the superuser');
  t.equal((await db.query('select rolsuper from pg_roles where rolname = current_user')).rows[0].rolsuper, true);

  await t.rejects(connect(first.port, 'wrong-password'), { code: '28P01' }, 'a wrong password is refused');

  const dump = await exec(first, ['pg_dump', '-U', 'app', 'app-db']);
  t.match(dump, /CREATE TABLE public\.notes/, 'pg_dump on PATH dumps over the local socket');
  t.match(await exec(first, ['psql', '--version']), /PostgreSQL\) 15/);
  t.match(await exec(first, ['pg_restore', '--version']), /pg_restore/);

  // An open session must not hold the stop up (smart shutdown would wait for it).
  const ms = await timedStop(first);
  await db.end().catch(() => {});
  t.ok(ms < 5000, `docker stop took ${ms} ms`);
  await first.container.remove();

  // A new container on the same volume: the data stays and the first password still holds (no re-init).
  const second = await res.start({ image: TEST_POSTGRES_IMAGE, port: 5432, volume: vol, target, env: { ...env, POSTGRES_PASSWORD: 'another' } });
  const again = await connected('postgres to start again', () => connect(second.port));
  t.same((await again.query('select body from notes')).rows, [{ body: 'kept in the volume' }], 'the row survived');
  await again.end();
  await t.rejects(connect(second.port, 'another'), { code: '28P01' }, 'a later POSTGRES_PASSWORD does not change an initialised database');

  const trusting = await res.start({ image: TEST_POSTGRES_IMAGE, port: 5432, volume: await res.volume(), target, env: { POSTGRES_HOST_AUTH_METHOD: 'trust' } });
  const open = await connected('postgres with trust to answer', async () => {
    const client = new pg.Client({ host: '127.0.0.1', port: trusting.port, user: 'postgres', password: 'anything', database: 'postgres', connectionTimeoutMillis: 3000 });
    client.on('error', () => {});
    await client.connect();
    return client;
  });
  t.equal((await open.query('select current_user as u')).rows[0].u, 'postgres', 'POSTGRES_HOST_AUTH_METHOD=trust needs no password, the user defaults to postgres');
  await open.end();

  const bare = await res.start({ image: TEST_POSTGRES_IMAGE, port: 5432, volume: await res.volume(), target, env: { POSTGRES_USER: 'x' } });
  const refused = await exited(bare);
  t.not(refused.code, 0, 'without POSTGRES_PASSWORD the container exits');
  t.match(refused.log, /POSTGRES_PASSWORD is not set/, 'and says why');
});

t.test('mariadb image (the mariadb and mysql kinds)', async t => {
  if (!(await requireImage(t, TEST_MARIADB_IMAGE))) return;
  const res = resources(t);
  const rootPassword = `root 'pw' \\ ${suffix()}`;
  const password = `user \`pw\` '${suffix()}`;
  const env = { MARIADB_ROOT_PASSWORD: rootPassword, MARIADB_DATABASE: 'app_db', MARIADB_USER: "o'app", MARIADB_PASSWORD: password };
  const vol = await res.volume();
  const target = '/var/lib/mysql';
  const connect = (port: number, user: string, pw: string, database?: string) => mysql.createConnection({ host: '127.0.0.1', port, user, password: pw, database, connectTimeout: 3000 });

  const first = await res.start({ image: TEST_MARIADB_IMAGE, port: 3306, volume: vol, target, env });
  const db = await connected('mariadb to accept the user', () => connect(first.port, "o'app", password, 'app_db'));
  await db.query('create table notes (id int primary key, body text)');
  await db.query('insert into notes values (1, ?)', ['kept in the volume']);
  const [rows] = await db.query('select body from notes');
  t.same(rows, [{ body: 'kept in the volume' }], 'a row written and read as MARIADB_USER in MARIADB_DATABASE');
  // Only that database: `_` is no wildcard in the grant, so app_db's privileges do not reach appxdb.
  await t.rejects(db.query('create database appxdb'), { code: 'ER_DBACCESS_DENIED_ERROR' }, 'the user has no rights beyond its database');
  await db.end();

  const root = await connect(first.port, 'root', rootPassword);
  const [grants] = await root.query('select count(*) as n from information_schema.schemata where schema_name = ?', ['app_db']);
  t.same(grants, [{ n: 1 }], 'root connects from another host with MARIADB_ROOT_PASSWORD');
  await root.end();

  await t.rejects(connect(first.port, 'root', 'wrong-password'), { code: 'ER_ACCESS_DENIED_ERROR' }, 'a wrong root password is refused');
  await t.rejects(connect(first.port, "o'app", 'wrong-password', 'app_db'), { code: 'ER_ACCESS_DENIED_ERROR' }, 'a wrong user password is refused');

  t.match(await exec(first, ['mysqldump', '-u', "o'app", `--password=${password}`, 'app_db']), /CREATE TABLE `notes`/, 'mysqldump on PATH dumps the database');
  t.match(await exec(first, ['mariadb-dump', '--version']), /mariadb-dump/i);
  t.match(await exec(first, ['mysql', '-uroot', `--password=${rootPassword}`, '-N', '-e', 'select 1']), /^1$/m, 'mysql on PATH connects as root');

  const ms = await timedStop(first);
  t.ok(ms < 5000, `docker stop took ${ms} ms`);
  await first.container.remove();

  const second = await res.start({ image: TEST_MARIADB_IMAGE, port: 3306, volume: vol, target, env });
  const again = await connected('mariadb to start again', () => connect(second.port, "o'app", password, 'app_db'));
  const [kept] = await again.query('select body from notes');
  t.same(kept, [{ body: 'kept in the volume' }], 'the row survived a new container on the volume');
  await again.end();

  // The mysql kind's names for the same settings.
  const mysqlEnv = { MYSQL_ROOT_PASSWORD: 'mysql-root', MYSQL_DATABASE: 'shop', MYSQL_USER: 'shopper', MYSQL_PASSWORD: 'shopper-pw' };
  const other = await res.start({ image: TEST_MARIADB_IMAGE, port: 3306, volume: await res.volume(), target, env: mysqlEnv });
  const shop = await connected('mariadb with MYSQL_* to accept the user', () => connect(other.port, 'shopper', 'shopper-pw', 'shop'));
  const [[{ db: current }]] = (await shop.query('select database() as db')) as unknown as [[{ db: string }]];
  t.equal(current, 'shop', 'MYSQL_USER, MYSQL_PASSWORD and MYSQL_DATABASE are honoured');
  await shop.end();
  const otherRoot = await connect(other.port, 'root', 'mysql-root');
  await otherRoot.end();
  t.pass('MYSQL_ROOT_PASSWORD is honoured');

  const bare = await res.start({ image: TEST_MARIADB_IMAGE, port: 3306, volume: await res.volume(), target, env: { MARIADB_DATABASE: 'x' } });
  const refused = await exited(bare);
  t.not(refused.code, 0, 'without a root password the container exits');
  t.match(refused.log, /MARIADB_ROOT_PASSWORD/, 'and says why');
});

t.test('redis image', async t => {
  if (!(await requireImage(t, TEST_REDIS_IMAGE))) return;
  const res = resources(t);
  const connect = async (port: number, password?: string) => {
    const client = createClient({ socket: { host: '127.0.0.1', port, reconnectStrategy: false, connectTimeout: 3000 }, password });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.ping();
      return client;
    } catch (err) {
      client.destroy();
      throw err;
    }
  };

  const open = await res.start({ image: TEST_REDIS_IMAGE, port: 6379, volume: await res.volume(), target: '/data' });
  const plain = await connected('redis to answer', () => connect(open.port));
  await plain.set('greeting', 'hello');
  t.equal(await plain.get('greeting'), 'hello', 'the default command answers from another host without a password');
  t.equal(await plain.configGet('dir').then(c => c.dir), '/data', 'and keeps its data in /data');
  plain.destroy();

  // Dokploy's command for a redis database: the image runs it as given.
  const vol = await res.volume();
  const cmd = ['redis-server', '--requirepass', 'secret'];
  const first = await res.start({ image: TEST_REDIS_IMAGE, port: 6379, volume: vol, target: '/data', cmd });
  const db = await connected('redis with a password to answer', () => connect(first.port, 'secret'));
  await db.set('kept', 'in the volume');
  t.equal(await db.get('kept'), 'in the volume', 'a key written and read with the password');
  t.equal(await db.configGet('dir').then(c => c.dir), '/data', 'a given command keeps its data in /data too');
  db.destroy();
  await t.rejects(connect(first.port, 'wrong'), { message: /^WRONGPASS/ }, 'a wrong password is refused by AUTH');
  await t.rejects(connect(first.port), { message: /^NOAUTH/ }, 'no password is refused');
  t.match(await exec(first, ['redis-cli', '-a', 'secret', '--no-auth-warning', 'get', 'kept']), /in the volume/, 'redis-cli on PATH');

  const ms = await timedStop(first);
  t.ok(ms < 5000, `docker stop took ${ms} ms`);
  await first.container.remove();

  const second = await res.start({ image: TEST_REDIS_IMAGE, port: 6379, volume: vol, target: '/data', cmd });
  const again = await connected('redis to start again', () => connect(second.port, 'secret'));
  t.equal(await again.get('kept'), 'in the volume', 'the key survived a new container on the volume (saved at stop)');
  again.destroy();
});
