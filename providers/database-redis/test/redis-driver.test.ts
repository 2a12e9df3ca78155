// The redis driver: the contract's conformance suite against berth-test/redis:1 (run like the public
// redis image), plus the exact command line and URLs the peer's clients see.
import t from 'tap';
import { descriptorConformance } from '@berth/core/testing';
import provider from '../src/index.ts';
import { createClient } from 'redis';
import { TEST_REDIS_IMAGE } from '@berth/core/testing';
import type { DatabaseCredentials } from '@berth/core';
import { RedisDriver } from '../src/index.ts';
import { driverConformance } from '@berth/plugin-workloads/testing';

const driver = new RedisDriver();

t.test('the provider descriptor', async t => void (await descriptorConformance(t, provider, 'database')));

const cli = (c: DatabaseCredentials, ...args: string[]) => ({ cmd: ['redis-cli', '-h', '127.0.0.1', '--no-auth-warning', ...args], env: { REDISCLI_AUTH: c.databasePassword } });

driverConformance(t, driver, {
  // node-redis takes the URL (user "default") and decodes its password.
  connect: async url => {
    const client = createClient({ url, socket: { reconnectStrategy: false, connectTimeout: 5000 } });
    client.on('error', () => {});
    try {
      await client.connect();
      if ((await client.ping()) !== 'PONG') throw new Error('no PONG');
    } finally {
      if (client.isOpen) await client.quit().catch(() => {});
    }
  },
  authError: { message: /^WRONGPASS/ },
  image: TEST_REDIS_IMAGE,
  passwords: { valid: ['', 'any thing \' " \\ $ é'], invalid: [] },
  data: {
    write: c => ({ ...cli(c, 'SET', 'berth_marker', 'kept'), expectOutput: /^OK\s*$/ }),
    clear: c => cli(c, 'DEL', 'berth_marker'),
    read: c => cli(c, 'GET', 'berth_marker'),
    expect: /^kept\n?$/,
  },
});

t.test("redis: what the service and the peer's clients see", async t => {
  const c: DatabaseCredentials = { databaseName: null, databaseUser: null, databasePassword: 's3cret/@', databaseRootPassword: null };
  t.same(driver.defaultImage, { current: 'redis:8', older: 'redis:7' });
  t.same(driver.fields, { databaseName: false, databaseUser: false, databaseRootPassword: false });
  t.same(driver.containerEnv(), {}, 'no environment: the password is in the start command');
  t.same(
    driver.startCommand(c),
    { command: null, args: ['redis-server', '--dir', '/data', '--appendonly', 'yes', '--requirepass', 's3cret/@'] },
    "arguments to the image's entrypoint, the password as one argument",
  );
  t.same(
    driver.startCommand({ ...c, databasePassword: '' }).args,
    ['redis-server', '--dir', '/data', '--appendonly', 'yes', '--protected-mode', 'no'],
    'an empty password: no password, and outside clients allowed',
  );
  t.equal(driver.dataPath, '/data');
  t.equal(driver.internalPort, 6379);
  t.equal(driver.connectionUrl(c, 'cache', 6379), 'redis://default:s3cret%2F%40@cache:6379');
  const ready = driver.readinessCheck(c);
  t.same(ready.env, { REDISCLI_AUTH: 's3cret/@' });
  t.ok(ready.expectOutput?.test('PONG\n'), 'PONG is success');
  t.notOk(ready.expectOutput?.test('NOAUTH Authentication required.\n'), 'redis-cli exits 0 on NOAUTH: the output decides');
  t.same(driver.readinessCheck({ ...c, databasePassword: '' }).env, {}, 'no AUTH without a password');
  t.same(driver.changePasswordCommand(c, '-x y').cmd.slice(-4), ['CONFIG', 'SET', 'requirepass', '-x y'], 'the new password as one argument after the command');
  t.throws(() => driver.restoreCommand(), { message: /Redis cannot restore a dump from a running server/ });
});
