// The postgres driver: the contract's conformance suite against berth-test/postgres:1 (the public
// image's environment), plus the exact values the peer's clients see.
import { execFile } from 'node:child_process';
import t from 'tap';
import { descriptorConformance } from '@berth/core/testing';
import provider from '../src/index.ts';
import pg from 'pg';
import { TEST_POSTGRES_IMAGE } from '@berth/core/testing';
import type { DatabaseCredentials } from '@berth/core';
import { PostgresDriver, quoteIdent, quoteLiteral } from '../src/index.ts';
import { driverConformance } from '@berth/plugin-workloads/testing';

const driver = new PostgresDriver();

t.test('the provider descriptor', async t => void (await descriptorConformance(t, provider, 'database')));

/** Runs a program (docker) with an argument array and optional stdin. */
const run = (file: string, args: string[], { input }: { input?: string } = {}) =>
  new Promise<string>((resolve, reject) => {
    const child = execFile(file, args, (error, stdout) => (error ? reject(error) : resolve(stdout)));
    // No input: close stdin without writing, so a program that exits at once cannot make an EPIPE.
    if (input === undefined) child.stdin?.end();
    else child.stdin?.on('error', reject).end(input);
  });

const psql = (c: DatabaseCredentials, sql: string, extra: string[] = []) => ({
  cmd: ['psql', '--no-psqlrc', '--no-password', '--set=ON_ERROR_STOP=1', '--host=127.0.0.1', ...extra, `--command=${sql}`],
  env: { PGUSER: c.databaseUser ?? '', PGDATABASE: c.databaseName ?? '', PGPASSWORD: c.databasePassword },
});

driverConformance(t, driver, {
  // pg, as the peer's clients would, from outside through the container's address.
  connect: async url => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
    } finally {
      await client.end().catch(() => {});
    }
  },
  authError: { code: '28P01' },
  // Names that need quoting as identifiers and as literals, and every sign the current variant allows
  // (the bootstrap user may not contain " $ ' or \, PostgreSQL refuses them as an extension owner).
  credentials: { databaseName: `sh"op'db`, databaseUser: 'Shop Owner.1', databasePassword: 'In1t@#%^&*()_+-=[]{}|;:,.<>?~`', databaseRootPassword: null },
  image: TEST_POSTGRES_IMAGE,
  passwords: { valid: ['', 'abcXYZ019', '@#%^&*()_+-=[]{}|;:,.<>?~`'], invalid: ['with space', "quote'", 'double"', 'back\\slash', 'dollar$', 'slash/', 'exclaim!', 'é'] },
  data: {
    write: c => psql(c, "CREATE TABLE berth_marker (v text); INSERT INTO berth_marker VALUES ('kept')"),
    clear: c => psql(c, 'DROP TABLE berth_marker'),
    read: c => psql(c, 'SELECT v FROM berth_marker', ['--tuples-only', '--no-align']),
    expect: /^kept\n?$/,
  },
});

t.test("postgres: what the service and the peer's clients see", async t => {
  const c: DatabaseCredentials = { databaseName: 'shop', databaseUser: 'app', databasePassword: 'p@ss:w/rd', databaseRootPassword: null };
  t.same(driver.defaultImage, { current: 'postgres:18', older: 'postgres:15' });
  t.same(driver.fields, { databaseName: true, databaseUser: true, databaseRootPassword: false });
  t.same(driver.containerEnv(c), { POSTGRES_USER: 'app', POSTGRES_PASSWORD: 'p@ss:w/rd', POSTGRES_DB: 'shop', PGDATA: '/var/lib/postgresql/pgdata' });
  t.equal(driver.containerEnv({ ...c, databasePassword: '' }).POSTGRES_HOST_AUTH_METHOD, 'trust', 'an empty password means none is asked');
  t.equal(driver.dataPath, '/var/lib/postgresql', 'the one mount postgres 18 wants; PGDATA inside it');
  t.equal(driver.internalPort, 5432);
  t.same(driver.startCommand(), { command: null, args: null }, "the image's own command");
  t.equal(driver.connectionUrl(c, 'shop-db', 5432), 'postgresql://app:p%40ss%3Aw%2Frd@shop-db:5432/shop');
  t.equal(driver.connectionUrl(c, 'fe80::1', 5432), 'postgresql://app:p%40ss%3Aw%2Frd@[fe80::1]:5432/shop', 'an IPv6 host in brackets');
});

t.test('postgres: SQL quoting', async t => {
  t.equal(quoteIdent('a"b'), '"a""b"');
  t.equal(quoteLiteral("it's"), "'it''s'");
  t.equal(quoteLiteral("a\\b'c"), "E'a\\\\b''c'", 'a backslash makes an E literal with it doubled');
  t.throws(() => quoteLiteral('a\0b'), { message: /NUL/ });
  const change = driver.changePasswordCommand({ databaseName: 'd', databaseUser: 'we"ird', databasePassword: 'old', databaseRootPassword: null }, "n'ew");
  t.equal(change.cmd.at(-1), `--command=ALTER ROLE "we""ird" WITH PASSWORD 'n''ew'`);
  t.throws(() => driver.changePasswordCommand({ databaseName: 'd', databaseUser: 'u', databasePassword: 'old', databaseRootPassword: null }, 'x', 'root'), { message: /no root password/ });
});

t.test('postgres: restore names its database as a connection-string value, never as a connection string', async t => {
  const cmd = driver.restoreCommand({ databaseName: "host=evil dbname='x'", databaseUser: 'u', databasePassword: 'p', databaseRootPassword: null }).cmd;
  t.equal(cmd.at(-1), "--dbname=dbname='host=evil dbname=\\'x\\''");
});

// The public images' two layouts, mimicked on the test image: up to 17 an anonymous VOLUME at
// /var/lib/postgresql/data; 18 a VOLUME at /var/lib/postgresql with data a link to its parent.
// The suite's last step (a new container on the same volume still has the data) shows that
// the data lands in the named volume with either.
const layouts = {
  'postgres 15-17 layout': 'VOLUME /var/lib/postgresql/data',
  'postgres 18 layout': 'RUN rm -rf /var/lib/postgresql/data && ln -s . /var/lib/postgresql/data\nVOLUME /var/lib/postgresql',
};
for (const [name, lines] of Object.entries(layouts)) {
  const tag = `berth-test/postgres-layout:${process.pid}-${name.split(' ')[1]}`;
  await run('docker', ['build', '--pull=false', '-q', '-t', tag, '-'], { input: `FROM ${TEST_POSTGRES_IMAGE}\n${lines}\n` });
  t.teardown(() =>
    run('docker', ['image', 'rm', '-f', tag]).then(
      () => {},
      () => {},
    ),
  );
  t.test(name, async t => {
    driverConformance(t, driver, {
      image: tag,
      data: {
        write: c => psql(c, "CREATE TABLE berth_marker (v text); INSERT INTO berth_marker VALUES ('kept')"),
        clear: c => psql(c, 'DROP TABLE berth_marker'),
        read: c => psql(c, 'SELECT v FROM berth_marker', ['--tuples-only', '--no-align']),
        expect: /^kept\n?$/,
      },
    });
  });
}
