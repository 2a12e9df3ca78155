// The mariadb driver: the contract's conformance suite against berth-test/mariadb:1 (MariaDB 10.11 with
// the public image's MARIADB_* and MYSQL_* environment), plus the exact values the peer's clients see.
import t from 'tap';
import { descriptorConformance } from '@berth/core/testing';
import provider from '../src/index.ts';
import mysql from 'mysql2/promise';
import Docker from 'dockerode';
import { waitFor, TEST_MARIADB_IMAGE } from '@berth/core/testing';
import type { DatabaseCredentials } from '@berth/core';
import { MariadbDriver } from '../src/index.ts';
import { driverConformance, runContainerCommand } from '@berth/plugin-workloads/testing';

const driver = new MariadbDriver();

t.test('the provider descriptor', async t => void (await descriptorConformance(t, provider, 'database')));

const sql = (c: DatabaseCredentials, statement: string) => ({
  cmd: ['mariadb', '--protocol=TCP', '--host=127.0.0.1', `--user=${c.databaseUser}`, `--database=${c.databaseName}`, '--batch', '--skip-column-names', `--execute=${statement}`],
  env: { MYSQL_PWD: c.databasePassword },
});

driverConformance(t, driver, {
  // mysql2 takes the URL itself and decodes its credentials.
  connect: async url => {
    const connection = await mysql.createConnection({ uri: url, connectTimeout: 5000 });
    try {
      await connection.query('SELECT 1');
    } finally {
      await connection.end().catch(() => {});
    }
  },
  authError: { code: 'ER_ACCESS_DENIED_ERROR', errno: 1045 },
  // Names that need quoting as identifiers and as literals, and every sign the current variant allows.
  credentials: { databaseName: `sh"op'db`, databaseUser: `o'ne"il`, databasePassword: 'In1t@#%^&*()_+-=[]{}|;:,.<>?~`', databaseRootPassword: 'R00t@#%^&*()[]' },
  image: TEST_MARIADB_IMAGE,
  passwords: { valid: ['', 'abcXYZ019', '@#%^&*()_+-=[]{}|;:,.<>?~`'], invalid: ['with space', "quote'", 'double"', 'back\\slash', 'dollar$'] },
  data: {
    write: c => sql(c, "CREATE TABLE berth_marker (v TEXT); INSERT INTO berth_marker VALUES ('kept')"),
    clear: c => sql(c, 'DROP TABLE berth_marker'),
    read: c => sql(c, 'SELECT v FROM berth_marker'),
    expect: /^kept\n?$/,
  },
});

t.test("mariadb: what the service and the peer's clients see", async t => {
  const c: DatabaseCredentials = { databaseName: 'shop', databaseUser: 'app', databasePassword: 'p@ss', databaseRootPassword: 'r00t' };
  t.equal(driver.kind, 'mariadb');
  t.equal(driver.label, 'MariaDB');
  t.same(driver.defaultImage, { current: 'mariadb:6', older: 'mariadb:6' });
  t.same(
    driver.containerEnv(c),
    {
      MARIADB_ROOT_PASSWORD: 'r00t',
      MARIADB_DATABASE: 'shop',
      MARIADB_USER: 'app',
      MARIADB_PASSWORD: 'p@ss',
      MYSQL_ROOT_PASSWORD: 'r00t',
      MYSQL_DATABASE: 'shop',
      MYSQL_USER: 'app',
      MYSQL_PASSWORD: 'p@ss',
    },
    'both the newer MARIADB_* and the older MYSQL_* names',
  );
  t.equal(driver.connectionUrl(c, 'shop-db', 3306), 'mysql://app:p%40ss@shop-db:3306/shop', "the mysql protocol's URL");
  t.equal(driver.readinessCheck(c).cmd[0], 'mariadb', 'the mariadb-named client (the 11.x images have no mysql)');
  t.equal(driver.dumpCommand(c).cmd[0], 'mariadb-dump');
  t.equal(driver.restoreCommand(c).cmd[0], 'mariadb');
  const own = driver.changePasswordCommand({ ...c, databaseRootPassword: null }, "n'ew");
  t.equal(own.cmd.at(-1), "--execute=SET PASSWORD = PASSWORD('n''ew')", 'without root, SET PASSWORD (ALTER USER needs CREATE USER on MariaDB)');
});

t.test('mariadb: without a root password the user changes its own password on the engine', async t => {
  // The suite's own run changes it as root; this is the other path, on a second container.
  const docker = new Docker();
  const name = `berth-mariadb-own-${process.pid}-${Date.now().toString(36)}`;
  const c: DatabaseCredentials = { databaseName: 'shop', databaseUser: 'app', databasePassword: 'Old-pass-1', databaseRootPassword: 'Root-pass-1' };
  const container = await docker.createContainer({ name, Image: TEST_MARIADB_IMAGE, Env: Object.entries(driver.containerEnv(c)).map(([k, v]) => `${k}=${v}`) });
  t.teardown(() => container.remove({ force: true, v: true }).catch(() => {}));
  await container.start();
  const run = (cmd: ReturnType<typeof driver.readinessCheck>) => runContainerCommand(docker, container.id, cmd);
  await waitFor('mariadb to accept the user', async () => (await run(driver.readinessCheck(c))).ok, { timeout: 60_000, interval: 200 });
  const noRoot = { ...c, databaseRootPassword: null };
  t.ok((await run(driver.changePasswordCommand(noRoot, "Ne'w\\pass"))).ok, 'SET PASSWORD succeeds as the user');
  t.ok((await run(driver.readinessCheck({ ...c, databasePassword: "Ne'w\\pass" }))).ok, 'the new password is accepted');
  t.notOk((await run(driver.readinessCheck(c))).ok, 'the old one is refused');
});
