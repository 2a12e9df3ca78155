// The mongo driver: no mongod exists for these machines (no image can be pulled or built), so the
// contract's pure checks and the exact service environment and commands, without an engine run.
import t from 'tap';
import { descriptorConformance } from '@berth/core/testing';
import provider from '../src/index.ts';
import type { DatabaseCredentials } from '@berth/core';
import { MongoDriver } from '../src/index.ts';
import { driverConformance } from '@berth/plugin-workloads/testing';

const driver = new MongoDriver();

t.test('the provider descriptor', async t => void (await descriptorConformance(t, provider, 'database')));

t.test('mongo driver (no mongod on these machines: the service spec and commands only)', async t => {
  driverConformance(t, driver, { passwords: { valid: ['', 'abcXYZ019', '@#%^&*()_+-=[]{}|;:,.<>?~`'], invalid: ['with space', "quote'", 'double"', 'back\\slash', 'dollar$'] } });

  t.test("the service and the peer's clients see", async t => {
    const c: DatabaseCredentials = { databaseName: null, databaseUser: 'admin', databasePassword: 'p@ss:/', databaseRootPassword: null };
    t.same(driver.defaultImage, { current: 'mongo:15', older: 'mongo:15' });
    t.same(driver.fields, { databaseName: false, databaseUser: true, databaseRootPassword: false });
    t.equal(driver.defaultUser, 'mongo', 'the user when an older client leaves it out');
    t.same(driver.containerEnv(c), { MONGO_INITDB_ROOT_USERNAME: 'admin', MONGO_INITDB_ROOT_PASSWORD: 'p@ss:/' });
    t.same(driver.containerEnv({ ...c, databaseUser: null }).MONGO_INITDB_ROOT_USERNAME, 'mongo', 'the default user when none is given');
    t.equal(driver.dataPath, '/data/db');
    t.equal(driver.internalPort, 27017);
    t.same(driver.startCommand(), { command: null, args: null });
    t.equal(driver.connectionUrl(c, 'mongo-app', 27017), 'mongodb://admin:p%40ss%3A%2F@mongo-app:27017');
  });

  t.test('mongosh gets every value from its environment, never from the script text', async t => {
    const c: DatabaseCredentials = { databaseName: null, databaseUser: "ad'min", databasePassword: 'old"pw', databaseRootPassword: null };
    const ready = driver.readinessCheck(c);
    t.same(ready.cmd.slice(0, 4), ['mongosh', '--nodb', '--quiet', '--eval']);
    t.same(ready.env, { BERTH_MONGO_USER: "ad'min", BERTH_MONGO_PASSWORD: 'old"pw', BERTH_MONGO_PORT: '27017' });
    const change = driver.changePasswordCommand(c, "'); db.dropDatabase(); ('");
    t.equal(change.env?.BERTH_MONGO_NEW_PASSWORD, "'); db.dropDatabase(); ('");
    t.same(driver.changePasswordCommand({ ...c, databaseUser: 'other' }, 'x').cmd, change.cmd, 'the script is the same whatever the values');
    t.match(change.cmd[4], /changeUserPassword\(e\.BERTH_MONGO_USER, e\.BERTH_MONGO_NEW_PASSWORD\)/);
    for (const script of [ready.cmd[4], change.cmd[4]]) {
      t.doesNotThrow(() => new Function('require', 'connect', 'process', script!), 'the script is valid JavaScript');
    }
    t.throws(() => driver.changePasswordCommand(c, 'x', 'root'), { message: /no separate root password/ });
  });

  t.test("the readiness script connects through the container's own name and fails on a bad ping", async t => {
    // mongosh's globals, stood in for, to run the real script text.
    const calls: string[] = [];
    const run = (reply: unknown) =>
      new Function('require', 'connect', 'process', driver.readinessCheck({ databaseName: null, databaseUser: 'u@x', databasePassword: 'p/w', databaseRootPassword: null }).cmd[4]!)(
        (m: string) => (m === 'os' ? { hostname: () => 'task-1' } : undefined),
        (uri: string) => {
          calls.push(uri);
          return { runCommand: () => reply };
        },
        { env: { BERTH_MONGO_USER: 'u@x', BERTH_MONGO_PASSWORD: 'p/w', BERTH_MONGO_PORT: '27017' } },
      );
    run({ ok: 1 });
    t.equal(calls[0], 'mongodb://u%40x:p%2Fw@task-1:27017/admin?directConnection=true&serverSelectionTimeoutMS=5000');
    t.throws(() => run({ ok: 0 }), { message: 'ping failed' });
  });

  t.test('the database tools get their URI from the environment through a fixed script', async t => {
    const c: DatabaseCredentials = { databaseName: null, databaseUser: 'admin', databasePassword: 'a"b$c', databaseRootPassword: null };
    const dump = driver.dumpCommand(c);
    t.same(dump.cmd, ['sh', '-c', 'exec mongodump --archive --uri="$BERTH_MONGO_URI"']);
    t.same(dump.env, { BERTH_MONGO_URI: 'mongodb://admin:a%22b%24c@127.0.0.1:27017/?authSource=admin' });
    t.same(driver.restoreCommand(c).cmd, ['sh', '-c', 'exec mongorestore --archive --drop --uri="$BERTH_MONGO_URI"']);
  });

  t.test('the restore check lists every collection with its document count, through mongosh, values from its environment', async t => {
    const c: DatabaseCredentials = { databaseName: null, databaseUser: 'u@x', databasePassword: "p'w", databaseRootPassword: null };
    const inventory = driver.inventoryCommand(c);
    t.same(inventory.cmd.slice(0, 4), ['mongosh', '--nodb', '--quiet', '--eval']);
    t.same(inventory.env, { BERTH_MONGO_USER: 'u@x', BERTH_MONGO_PASSWORD: "p'w", BERTH_MONGO_PORT: '27017' });
    t.notMatch(inventory.cmd.join(' '), /p'w|u@x/, 'no credential in the arguments');
    // mongosh's globals (connect, print) and a server's answers, stood in for, to run the real script text.
    const server: Record<string, { collections: { name: string; type: string }[]; counts: Record<string, number> }> = {
      shop: {
        collections: [
          { name: 'orders', type: 'collection' },
          { name: 'customers', type: 'collection' },
          { name: 'system.views', type: 'collection' },
        ],
        counts: { orders: 500, customers: 12, 'system.views': 1 },
      },
      admin: { collections: [{ name: 'system.users', type: 'collection' }], counts: { 'system.users': 1 } },
      analytics: { collections: [{ name: 'events', type: 'collection' }], counts: { events: 0 } },
    };
    const run = (databases: string[]) => {
      const printed: string[] = [];
      const uris: string[] = [];
      const db = (name: string) => ({
        getCollectionInfos: (filter: { type: string }) => server[name]!.collections.filter(x => x.type === filter.type),
        getCollection: (coll: string) => ({ countDocuments: () => server[name]!.counts[coll] }),
      });
      new Function('connect', 'print', 'process', inventory.cmd[4]!)(
        (uri: string) => {
          uris.push(uri);
          return { adminCommand: () => ({ databases: databases.map(name => ({ name })) }), getSiblingDB: db };
        },
        (text: string) => void printed.push(text),
        { env: inventory.env },
      );
      return { printed, uris };
    };
    const { printed, uris } = run(['shop', 'admin', 'analytics', 'local', 'config']);
    t.equal(uris[0], "mongodb://u%40x:p'w@127.0.0.1:27017/admin?directConnection=true&serverSelectionTimeoutMS=5000");
    t.same(printed, ['analytics.events\t0\nshop.customers\t12\nshop.orders\t500'], "sorted, the server's own databases and system collections left out");
    t.same(run([]).printed, [], 'an empty server prints nothing (an empty inventory)');
  });
});
