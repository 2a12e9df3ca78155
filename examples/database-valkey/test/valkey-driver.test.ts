// The valkey driver: the contract's conformance suite (the same one every built-in kind's driver
// passes) against a local valkey stand-in, plus the exact command lines and URLs clients see.
import t from 'tap';
import Docker from 'dockerode';
import type { DatabaseCredentials } from '@berth/core';
import { ValkeyDriver } from '../src/driver.ts';
import { ensureValkeyTestImage } from './valkey-image.ts';
import { driverConformance } from '@berth/plugin-workloads/testing';

t.setTimeout(300_000);
const driver = new ValkeyDriver();
const image = await ensureValkeyTestImage(new Docker());

const cli = (c: DatabaseCredentials, ...args: string[]) => ({
  cmd: ['valkey-cli', '-h', '127.0.0.1', '--no-auth-warning', ...args],
  env: { VALKEYCLI_AUTH: c.databasePassword, REDISCLI_AUTH: c.databasePassword },
});

driverConformance(t, driver, {
  image,
  passwords: { valid: ['', 'any thing \' " \\ $ é'], invalid: [] },
  data: {
    write: c => ({ ...cli(c, 'SET', 'berth_marker', 'kept'), expectOutput: /^OK\s*$/ }),
    clear: c => cli(c, 'DEL', 'berth_marker'),
    read: c => cli(c, 'GET', 'berth_marker'),
    expect: /^kept\n?$/,
  },
});

t.test('valkey: what the service and the clients see', async t => {
  const c: DatabaseCredentials = { databaseName: null, databaseUser: null, databasePassword: 's3cret/@ x', databaseRootPassword: null };
  t.equal(driver.kind, 'valkey');
  t.equal(driver.label, 'Valkey');
  t.same(driver.defaultImage, { current: 'valkey/valkey:8', older: 'valkey/valkey:8' });
  t.same(driver.fields, { databaseName: false, databaseUser: false, databaseRootPassword: false });
  t.same(driver.containerEnv(), {}, 'no environment: the password is in the start command');
  t.same(
    driver.startCommand(c),
    { command: null, args: ['valkey-server', '--dir', '/data', '--appendonly', 'yes', '--requirepass', 's3cret/@ x'] },
    "arguments to the image's entrypoint, the password as one argument",
  );
  t.same(
    driver.startCommand({ ...c, databasePassword: '' }).args,
    ['valkey-server', '--dir', '/data', '--appendonly', 'yes', '--protected-mode', 'no'],
    'an empty password: no password, and outside clients allowed',
  );
  t.equal(driver.dataPath, '/data');
  t.equal(driver.internalPort, 6379);
  t.equal(driver.connectionUrl(c, 'cache', 6379), 'redis://default:s3cret%2F%40%20x@cache:6379');
  t.equal(driver.connectionUrl(c, '::1', 16379), 'redis://default:s3cret%2F%40%20x@[::1]:16379');
  const ready = driver.readinessCheck(c);
  t.same(ready.cmd, ['valkey-cli', '-h', '127.0.0.1', '-p', '6379', '--no-auth-warning', 'PING']);
  t.same(ready.env, { VALKEYCLI_AUTH: 's3cret/@ x', REDISCLI_AUTH: 's3cret/@ x' }, 'the password for valkey-cli of every version, in the environment');
  t.ok(ready.expectOutput?.test('PONG\n'), 'PONG is success');
  t.notOk(ready.expectOutput?.test('NOAUTH Authentication required.\n'), 'valkey-cli exits 0 on NOAUTH: the output decides');
  t.same(driver.readinessCheck({ ...c, databasePassword: '' }).env, {}, 'no AUTH without a password');
  t.same(driver.changePasswordCommand(c, '-x y').cmd.slice(-4), ['CONFIG', 'SET', 'requirepass', '-x y'], 'the new password as one argument after the command');
  t.throws(() => driver.changePasswordCommand(c, 'x', 'root'), { message: /no root password/ });
  t.same(driver.dumpCommand(c).cmd.slice(-2), ['--rdb', '-'], 'the snapshot to stdout');
  t.throws(() => driver.restoreCommand(), { message: /Valkey cannot load a dump into a running server/ });
});
