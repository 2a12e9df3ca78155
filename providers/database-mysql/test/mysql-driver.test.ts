// The mysql driver: the contract's conformance suite against berth-test/mariadb:1 (no MySQL image can
// be built here; it honours the public mysql image's MYSQL_* environment and ships the mysql-named
// clients), plus the exact values the peer's clients see.
import t from 'tap';
import { descriptorConformance } from '@berth/core/testing';
import provider from '../src/index.ts';
import mysql from 'mysql2/promise';
import { TEST_MARIADB_IMAGE } from '@berth/core/testing';
import type { DatabaseCredentials } from '@berth/core';
import { MysqlDriver, quoteString } from '../src/index.ts';
import { driverConformance } from '@berth/plugin-workloads/testing';

const driver = new MysqlDriver();

t.test('the provider descriptor', async t => void (await descriptorConformance(t, provider, 'database')));

const sql = (c: DatabaseCredentials, statement: string) => ({
  cmd: ['mysql', '--protocol=TCP', '--host=127.0.0.1', `--user=${c.databaseUser}`, `--database=${c.databaseName}`, '--batch', '--skip-column-names', `--execute=${statement}`],
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

t.test("mysql: what the service and the peer's clients see", async t => {
  const c: DatabaseCredentials = { databaseName: 'shop', databaseUser: 'app', databasePassword: 'p@ss', databaseRootPassword: 'r00t' };
  t.same(driver.defaultImage, { current: 'mysql:8', older: 'mysql:8' });
  t.same(driver.fields, { databaseName: true, databaseUser: true, databaseRootPassword: true });
  t.same(driver.containerEnv(c), { MYSQL_ROOT_PASSWORD: 'r00t', MYSQL_DATABASE: 'shop', MYSQL_USER: 'app', MYSQL_PASSWORD: 'p@ss' });
  t.same(
    driver.containerEnv({ ...c, databaseRootPassword: null }),
    { MYSQL_RANDOM_ROOT_PASSWORD: 'yes', MYSQL_DATABASE: 'shop', MYSQL_USER: 'app', MYSQL_PASSWORD: 'p@ss' },
    'without a root password the image picks a random one',
  );
  t.equal(driver.dataPath, '/var/lib/mysql');
  t.equal(driver.internalPort, 3306);
  t.equal(driver.connectionUrl(c, 'shop-db', 3306), 'mysql://app:p%40ss@shop-db:3306/shop');
  t.equal(driver.readinessCheck(c).cmd[0], 'mysql');
  t.equal(driver.dumpCommand(c).cmd[0], 'mysqldump');
  t.same(driver.dumpCommand(c).cmd.slice(-2), ['--', 'shop'], 'a database name is never read as an option');
});

t.test('mysql: SQL quoting of password changes', async t => {
  t.equal(quoteString("it's"), "'it''s'");
  t.equal(quoteString('a\\b'), "'a\\\\b'");
  t.equal(quoteString('a\0b'), "'a\\0b'");
  const c: DatabaseCredentials = { databaseName: 'd', databaseUser: "o'neil", databasePassword: 'old', databaseRootPassword: 'root' };
  const user = driver.changePasswordCommand(c, "n'e\\w");
  t.equal(user.cmd.at(-1), "--execute=ALTER USER 'o''neil'@'%' IDENTIFIED BY 'n''e\\\\w'; FLUSH PRIVILEGES;");
  t.same(user.env, { MYSQL_PWD: 'root' }, 'as root, whose password is in the environment');
  const root = driver.changePasswordCommand(c, 'x', 'root');
  t.match(root.cmd.at(-1), /ALTER USER IF EXISTS 'root'@'%' IDENTIFIED BY 'x'; ALTER USER IF EXISTS 'root'@'localhost' IDENTIFIED BY 'x'/);
  const own = driver.changePasswordCommand({ ...c, databaseRootPassword: null }, 'x');
  t.equal(own.cmd.at(-1), "--execute=ALTER USER USER() IDENTIFIED BY 'x'", 'without root, the user changes its own');
  t.same(own.env, { MYSQL_PWD: 'old' });
  t.throws(() => driver.changePasswordCommand({ ...c, databaseRootPassword: null }, 'x', 'root'), { message: /root password is not known/ });
});
