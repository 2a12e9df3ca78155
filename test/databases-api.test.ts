// The database kinds' API without an engine run: create in both variants (default images,
// credential fields, password rules), validation naming each field, update of the Swarm
// settings, move, search, appName and externalPort uniqueness, the `one` shape and the lists of
// project.one/project.all, secrets sealed at rest, other organizations refused, and the OpenAPI
// document. No deploy runs (jobs: false); remove and readLogs reach the real engine.
import t from 'tap';
import pg from 'pg';
import { DEPLOYMENT_ID_HEADER } from '@berth/core';
import { startTestServer, signUpAdmin, otherOrganization, Client, deploymentIdOf } from '@berth/core/testing';

const issuePaths = (body: { issues?: { path: (string | number)[] }[] }) => (body.issues ?? []).map(i => i.path.join('.'));
const suffix = () => Math.random().toString(36).slice(2, 8);

interface Kind {
  kind: string;
  images: { current: string; older: string };
  /** The credential fields create takes (databaseRootPassword optional where present). */
  databaseName: boolean;
  databaseUser: boolean;
  databaseRootPassword: boolean;
  /** Whether the current variant restricts the password's characters (the peer's pattern). */
  restrictedPassword: boolean;
}

// Defaults as the spec states them (current postgres/redis; older postgres/mysql/mariadb/mongo) and,
// where it is silent, as the peer's OpenAPI document declares them (current mysql:8, mariadb:6, mongo:15).
// Redis has no older variant in the spec; the kit answers a projectId with redis:7.
const kinds: Kind[] = [
  { kind: 'postgres', images: { current: 'postgres:18', older: 'postgres:15' }, databaseName: true, databaseUser: true, databaseRootPassword: false, restrictedPassword: true },
  { kind: 'mysql', images: { current: 'mysql:8', older: 'mysql:8' }, databaseName: true, databaseUser: true, databaseRootPassword: true, restrictedPassword: true },
  { kind: 'mariadb', images: { current: 'mariadb:6', older: 'mariadb:6' }, databaseName: true, databaseUser: true, databaseRootPassword: true, restrictedPassword: true },
  { kind: 'mongo', images: { current: 'mongo:15', older: 'mongo:15' }, databaseName: false, databaseUser: true, databaseRootPassword: false, restrictedPassword: true },
  { kind: 'redis', images: { current: 'redis:8', older: 'redis:7' }, databaseName: false, databaseUser: false, databaseRootPassword: false, restrictedPassword: false },
];

const operations = [
  'create',
  'one',
  'start',
  'stop',
  'deploy',
  'reload',
  'rebuild',
  'remove',
  'update',
  'move',
  'changeStatus',
  'saveEnvironment',
  'saveExternalPort',
  'changePassword',
  'search',
  'readLogs',
];

/** A valid create body of the kind (without placement). */
function body(k: Kind, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: `${k.kind} db`, databasePassword: 'Secret_pw-1', ...(k.databaseName ? { databaseName: 'app' } : {}), ...(k.databaseUser ? { databaseUser: 'appuser' } : {}), ...extra };
}

t.test('database API (records only)', async t => {
  const server = await startTestServer({ jobs: false });
  t.teardown(() => server.destroy());
  const { client, token, userId } = await signUpAdmin(server);
  const bearer = new Client(server.url, { token });
  const other = await otherOrganization(server, userId);
  const {
    body: { project, environment },
  } = await client.post('project.create', { name: 'Data' });
  const staging = (await client.post('environment.create', { projectId: project.projectId, name: 'staging' })).body;
  t.equal(typeof staging.environmentId, 'string', 'a second environment');
  const foreign = (await other.client.post('project.create', { name: 'Theirs' })).body;

  /** One database of each kind in the production environment, made by the first subtest. */
  const made: Record<string, Record<string, any>> = {};

  for (const k of kinds) {
    const id = `${k.kind}Id`;
    t.test(`${k.kind}: create in both variants`, async t => {
      const current = await client.post(`${k.kind}.create`, body(k, { environmentId: environment.environmentId, description: 'main' }));
      t.equal(current.status, 200, JSON.stringify(current.body));
      made[k.kind] = current.body;
      t.match(current.body, {
        [id]: String,
        name: `${k.kind} db`,
        description: 'main',
        environmentId: environment.environmentId,
        serverId: null,
        applicationStatus: 'idle',
        externalPort: null,
        dockerImage: k.images.current,
        replicas: 1,
        env: null,
        databasePassword: 'Secret_pw-1',
        detachDokployNetwork: false,
        networkIds: null,
        command: null,
        args: null,
      });
      t.match(current.body.appName, new RegExp(`^${k.kind}-${k.kind}-db-[0-9a-f]{6}$`), 'a generated Swarm-safe appName');
      t.equal('databaseName' in current.body, k.databaseName, 'databaseName present only where the kind has it');
      t.equal('databaseUser' in current.body, k.databaseUser, 'databaseUser present only where the kind has it');
      t.equal('databaseRootPassword' in current.body, k.databaseRootPassword, 'databaseRootPassword present only where the kind has it');
      if (k.databaseName) t.equal(current.body.databaseName, 'app');
      if (k.databaseUser) t.equal(current.body.databaseUser, 'appuser');
      if (k.databaseRootPassword) t.match(current.body.databaseRootPassword, /^[A-Za-z0-9_-]{20,}$/, 'a root password is generated when none is given');

      const older = await bearer.post(
        `${k.kind}.create`,
        body(k, { projectId: project.projectId, appName: `${k.kind}-older-${suffix()}`, ...(k.databaseRootPassword ? { databaseRootPassword: 'Root_pw-1' } : {}) }),
      );
      t.equal(older.status, 200, JSON.stringify(older.body));
      t.match(older.body, { environmentId: environment.environmentId, dockerImage: k.images.older }, "older variant: the project's default environment and the older default image");
      if (k.databaseRootPassword) t.equal(older.body.databaseRootPassword, 'Root_pw-1');

      const chosen = await client.post(`${k.kind}.create`, body(k, { environmentId: staging.environmentId, dockerImage: 'example/custom:1' }));
      t.equal(chosen.status, 200);
      t.match(chosen.body, { environmentId: staging.environmentId, dockerImage: 'example/custom:1' }, 'a given image wins');
    });

    t.test(`${k.kind}: bad input names the field`, async t => {
      const env = { environmentId: environment.environmentId };
      const cases: [Record<string, unknown>, string][] = [
        [body(k, { ...env, name: undefined }), 'name'],
        [body(k, { ...env, name: '' }), 'name'],
        [body(k, { ...env, databasePassword: undefined }), 'databasePassword'],
        [body(k, { ...env, appName: 'x'.repeat(64) }), 'appName'],
        [body(k, { ...env, appName: 'bad name' }), 'appName'],
        [body(k, { ...env, appName: 'a;touch /tmp/x' }), 'appName'],
        // Allowed by the spec's pattern, refused as a Swarm service name:
        [body(k, { ...env, appName: 'with.dot' }), 'appName'],
        [body(k, { ...env, appName: '-leading' }), 'appName'],
        [body(k, { ...env, appName: 'trailing-' }), 'appName'],
        [body(k, { ...env, dockerImage: '' }), 'dockerImage'],
        [body(k, { ...env, description: 5 }), 'description'],
      ];
      if (k.databaseName) cases.push([body(k, { ...env, databaseName: '' }), 'databaseName'], [body(k, { ...env, databaseName: undefined }), 'databaseName']);
      if (k.databaseUser && k.kind !== 'mongo') cases.push([body(k, { ...env, databaseUser: undefined }), 'databaseUser']);
      if (k.databaseUser) cases.push([body(k, { ...env, databaseUser: '' }), 'databaseUser']);
      const refused: string[] = [];
      const unnamed: string[] = [];
      for (const [input, field] of cases) {
        const res = await client.post(`${k.kind}.create`, input);
        const what = `${field}=${JSON.stringify(input[field]) ?? '(missing)'}`;
        if (res.status !== 400 || res.body.code !== 'BAD_REQUEST') refused.push(`${what}: ${res.status} ${res.body.code}`);
        if (!issuePaths(res.body).includes(field)) unnamed.push(`${what}: issues ${JSON.stringify(res.body.issues)}`);
      }
      t.same(refused, [], 'every bad input is a 400 BAD_REQUEST');
      t.same(unnamed, [], 'each names its field');
      const nowhere = await client.post(`${k.kind}.create`, body(k));
      t.equal(nowhere.status, 400, 'neither environmentId nor projectId');
      t.ok(issuePaths(nowhere.body).includes('environmentId'));
      t.equal((await client.post(`${k.kind}.create`, body(k, { environmentId: 'no-such-environment' }))).status, 404);
      t.equal((await bearer.post(`${k.kind}.create`, body(k, { projectId: 'no-such-project' }))).status, 404);
      const remote = await client.post(`${k.kind}.create`, body(k, { ...env, serverId: 'some-server' }));
      t.equal(remote.status, 404, 'a server no record has is refused, not ignored');
      t.match(remote.body.message, 'Server some-server not found');
    });

    t.test(`${k.kind}: password rules per variant`, async t => {
      const env = { environmentId: environment.environmentId };
      const currentWrong: string[] = [];
      const olderWrong: string[] = [];
      for (const bad of ["it's", 'say "hi"', 'two words', 'pa$$word', 'back\\slash']) {
        const current = await client.post(`${k.kind}.create`, body(k, { ...env, databasePassword: bad }));
        const refusedAlone = current.status === 400 && JSON.stringify(issuePaths(current.body)) === '["databasePassword"]';
        const kept = current.status === 200 && current.body.databasePassword === bad;
        if (k.restrictedPassword ? !refusedAlone : !kept) currentWrong.push(`${JSON.stringify(bad)}: ${current.status} ${JSON.stringify(current.body.issues ?? current.body.databasePassword)}`);
        const older = await bearer.post(`${k.kind}.create`, body(k, { projectId: project.projectId, databasePassword: bad }));
        if (older.status !== 200 || older.body.databasePassword !== bad) olderWrong.push(`${JSON.stringify(bad)}: ${older.status} ${JSON.stringify(older.body.databasePassword)}`);
      }
      t.same(
        currentWrong,
        [],
        k.restrictedPassword
          ? 'the current variant refuses quotes, spaces, $ and backslashes, naming databasePassword alone'
          : `${k.kind} passwords are unrestricted: quotes, spaces, $ and backslashes accepted and kept`,
      );
      t.same(olderWrong, [], 'the older variant accepts each, kept as given');
      const allowed = 'Az09@#%^&*()_+-=[]{}|;:,.<>?~`';
      const every = await client.post(`${k.kind}.create`, body(k, { ...env, databasePassword: allowed }));
      t.equal(every.status, 200, 'every allowed sign');
      t.equal(every.body.databasePassword, allowed);
      const empty = await client.post(`${k.kind}.create`, body(k, { ...env, databasePassword: '' }));
      t.equal(empty.status, 200, 'empty is allowed');
      if (k.restrictedPassword) {
        const update = await client.post(`${k.kind}.update`, { [id]: every.body[id], databasePassword: 'no spaces' });
        t.equal(update.status, 400, 'update follows the current rules');
        t.ok(issuePaths(update.body).includes('databasePassword'));
        const change = await client.post(`${k.kind}.changePassword`, { [id]: every.body[id], password: "x'y" });
        t.equal(change.status, 400, 'changePassword follows the current rules');
        t.ok(issuePaths(change.body).includes('password'));
      }
      if (k.databaseRootPassword) {
        const root = await client.post(`${k.kind}.create`, body(k, { ...env, databaseRootPassword: "root's" }));
        t.equal(root.status, 400, 'the root password follows the same rules in the current variant');
        t.same(issuePaths(root.body), ['databaseRootPassword']);
        const olderRoot = await bearer.post(`${k.kind}.create`, body(k, { projectId: project.projectId, databaseRootPassword: "root's" }));
        t.equal(olderRoot.status, 200, 'and none in the older one');
        t.equal(olderRoot.body.databaseRootPassword, "root's");
        const rootUpdate = await client.post(`${k.kind}.update`, { [id]: every.body[id], databaseRootPassword: 'two words' });
        t.equal(rootUpdate.status, 400);
        t.ok(issuePaths(rootUpdate.body).includes('databaseRootPassword'));
        const rootOk = await client.post(`${k.kind}.update`, { [id]: every.body[id], databaseRootPassword: 'Root_pw-2' });
        t.equal(rootOk.body, true, 'update answers true');
        t.equal((await client.get(`${k.kind}.one`, { [id]: every.body[id] })).body.databaseRootPassword, 'Root_pw-2');
        const emptyRoot = await client.post(`${k.kind}.create`, body(k, { ...env, databaseRootPassword: '' }));
        t.match(emptyRoot.body.databaseRootPassword, /^[A-Za-z0-9_-]{20,}$/, 'an empty root password is generated');
      } else {
        const noRoot = await client.post(`${k.kind}.changePassword`, { [id]: every.body[id], password: 'Fine_pw-1', type: 'root' });
        t.equal(noRoot.status, 400, `${k.kind} has no root password`);
        t.ok(issuePaths(noRoot.body).includes('type'));
      }
      const notRunning = await client.post(`${k.kind}.changePassword`, { [id]: every.body[id], password: 'Fine_pw-1' });
      t.equal(notRunning.status, 400, 'changePassword needs a running database');
      t.match(notRunning.body.message, /is not running/);
      t.equal((await client.get(`${k.kind}.one`, { [id]: every.body[id] })).body.databasePassword, allowed, 'a refused change keeps the password');
      const changeEmpty = await client.post(`${k.kind}.changePassword`, { [id]: every.body[id], password: '' });
      t.equal(changeEmpty.status, 400, 'changePassword needs a password');
      t.ok(issuePaths(changeEmpty.body).includes('password'));
    });

    t.test(`${k.kind}: small operations`, async t => {
      const db = made[k.kind]!;
      const dbId = db[id] as string;

      const port = await client.post(`${k.kind}.saveExternalPort`, { [id]: dbId, externalPort: 40000 + kinds.indexOf(k) });
      t.equal(port.status, 200);
      t.equal(port.body.externalPort, 40000 + kinds.indexOf(k));
      const badPorts: string[] = [];
      for (const bad of ['5432', 0, 70000, 1.5]) {
        const res = await client.post(`${k.kind}.saveExternalPort`, { [id]: dbId, externalPort: bad });
        if (res.status !== 400 || !issuePaths(res.body).includes('externalPort')) badPorts.push(`${JSON.stringify(bad)}: ${res.status} ${JSON.stringify(res.body.issues)}`);
      }
      t.same(badPorts, [], 'a string, 0, 70000 and 1.5 are refused, naming externalPort');
      const missing = await client.post(`${k.kind}.saveExternalPort`, { [id]: dbId });
      t.equal(missing.status, 400, 'externalPort is required (number or null)');
      t.ok(issuePaths(missing.body).includes('externalPort'));
      const unset = await client.post(`${k.kind}.saveExternalPort`, { [id]: dbId, externalPort: null });
      t.equal(unset.status, 200);
      t.equal(unset.body.externalPort, null);

      const env = await client.post(`${k.kind}.saveEnvironment`, { [id]: dbId, env: 'A=1\nB=${{project.X}}' });
      t.same([env.status, env.body], [200, true], 'saveEnvironment answers true, as the peer does');
      t.equal((await client.get(`${k.kind}.one`, { [id]: dbId })).body.env, 'A=1\nB=${{project.X}}');
      t.equal((await client.post(`${k.kind}.saveEnvironment`, { [id]: dbId, env: 5 })).status, 400);

      const status = await client.post(`${k.kind}.changeStatus`, { [id]: dbId, applicationStatus: 'error' });
      t.equal(status.status, 200);
      t.equal(status.body.applicationStatus, 'error');
      const badStatus = await client.post(`${k.kind}.changeStatus`, { [id]: dbId, applicationStatus: 'broken' });
      t.equal(badStatus.status, 400);
      t.ok(issuePaths(badStatus.body).includes('applicationStatus'));
      t.equal((await client.post(`${k.kind}.changeStatus`, { [id]: dbId, applicationStatus: 'idle' })).status, 200);

      const noAppName = await client.post(`${k.kind}.reload`, { [id]: dbId });
      t.equal(noAppName.status, 400, 'reload needs the appName');
      t.ok(issuePaths(noAppName.body).includes('appName'));
      const wrong = await client.post(`${k.kind}.reload`, { [id]: dbId, appName: 'someone-else' });
      t.equal(wrong.status, 400, 'reload with another appName');
      t.ok(issuePaths(wrong.body).includes('appName'));
      const reload = await client.post(`${k.kind}.reload`, { [id]: dbId, appName: db.appName });
      t.equal(reload.status, 200, 'the right appName queues a reload');
      t.equal(reload.body, true, 'reload answers true, as the peer does');
      t.match((await client.get('deployment.one', { deploymentId: deploymentIdOf(reload) })).body, { status: String, action: 'reload', [id]: dbId }, 'the queued deployment is named in the header');

      const notQueued: string[] = [];
      const withoutId: string[] = [];
      const ofMissing: string[] = [];
      for (const op of ['deploy', 'start', 'stop', 'rebuild']) {
        const res = await client.post(`${k.kind}.${op}`, { [id]: dbId });
        // The peer's answer: the database for deploy, start and stop, true for rebuild; the deployment in the header.
        const answered = op === 'rebuild' ? res.body === true : res.body?.[id] === dbId && typeof res.body.environment === 'object';
        const deploymentId = res.headers.get(DEPLOYMENT_ID_HEADER);
        const queued = deploymentId ? (await client.get('deployment.one', { deploymentId })).body : null;
        if (res.status !== 200 || !answered || queued?.action !== op || queued[id] !== dbId) notQueued.push(`${op}: ${res.status} ${JSON.stringify(res.body)} ${JSON.stringify(queued)}`);
        const noId = await client.post(`${k.kind}.${op}`, {});
        if (noId.status !== 400) withoutId.push(`${op}: ${noId.status}`);
        const missing = await client.post(`${k.kind}.${op}`, { [id]: 'no-such-id' });
        if (missing.status !== 404) ofMissing.push(`${op}: ${missing.status}`);
      }
      t.same(notQueued, [], 'deploy, start, stop and rebuild each queue a deployment of their action');
      t.same(withoutId, [], `each needs ${id} (400)`);
      t.same(ofMissing, [], 'each of a missing database is a 404');
      t.equal((await client.get(`${k.kind}.one`, { [id]: 'no-such-id' })).status, 404);

      const logs = await client.get(`${k.kind}.readLogs`, { [id]: dbId });
      t.equal(logs.status, 400, "a database never deployed has no logs: a clear answer, not the engine's");
      t.match(logs.body.message, /never been deployed/);
      const badLogs = await client.get(`${k.kind}.readLogs`, { [id]: dbId, tail: 0, since: 'yesterday', search: 'a;b' });
      t.equal(badLogs.status, 400);
      t.same(issuePaths(badLogs.body).sort(), ['search', 'since', 'tail']);
      t.equal((await client.get(`${k.kind}.readLogs`, { [id]: 'no-such-id' })).status, 404);
    });

    t.test(`${k.kind}: update`, async t => {
      const dbId = made[k.kind]![id] as string;
      /** update answers true, as the peer does; a successful one answers here the record as `one` reads it back. */
      const update = async (fields: Record<string, unknown>) => {
        const res = await client.post(`${k.kind}.update`, { [id]: dbId, ...fields });
        if (res.status !== 200) return res;
        t.equal(res.body, true, 'update answers true');
        return { status: res.status, body: (await client.get(`${k.kind}.one`, { [id]: dbId })).body };
      };
      const asStrings = await update({ memoryLimit: '512m', memoryReservation: '256m', cpuLimit: '0.5', cpuReservation: '0.25' });
      t.equal(asStrings.status, 200, JSON.stringify(asStrings.body));
      t.match(asStrings.body, { memoryLimit: '512m', memoryReservation: '256m', cpuLimit: '0.5', cpuReservation: '0.25' }, 'resources as strings (current variant)');
      const asNumbers = await update({ memoryLimit: 536870912, cpuLimit: 1, memoryReservation: null, cpuReservation: null });
      t.equal(asNumbers.status, 200);
      t.match(asNumbers.body, { memoryLimit: '536870912', cpuLimit: '1', memoryReservation: null, cpuReservation: null }, "resources as numbers (older variant), answered as text like the peer's");
      t.equal((await update({ memoryLimit: true })).status, 400);
      t.equal((await update({ cpuLimit: -1 })).status, 400);

      const swarm = {
        healthCheckSwarm: { Test: ['CMD', 'true'], Interval: 10_000_000_000, Retries: 3 },
        restartPolicySwarm: { Condition: 'on-failure', MaxAttempts: 5 },
        placementSwarm: { Constraints: ['node.role==manager'] },
        updateConfigSwarm: { Parallelism: 1, Order: 'stop-first' },
        rollbackConfigSwarm: { Parallelism: 1, Order: 'stop-first', FailureAction: 'pause' },
        modeSwarm: { Replicated: { Replicas: 1 } },
        labelsSwarm: { team: 'data' },
        networkSwarm: [{ Target: 'backend', Aliases: ['db'] }],
        stopGracePeriodSwarm: 30_000_000_000,
        endpointSpecSwarm: { Mode: 'dnsrr' },
        ulimitsSwarm: [{ Name: 'nofile', Soft: 1024, Hard: 2048 }],
        replicas: 2,
        networkIds: [], // ids are network.* records of the organization, checked on save (plugins/network/test/joining.test.ts)
        detachDokployNetwork: true,
        command: 'run-db',
        args: ['--flag', 'value with spaces'],
        name: 'renamed',
        description: null,
        dockerImage: 'example/other:2',
      };
      const set = await update(swarm);
      t.equal(set.status, 200, JSON.stringify(set.body));
      t.match(set.body, swarm, 'every Swarm object, replicas, networkIds, detachDokployNetwork kept');
      t.same((await client.get(`${k.kind}.one`, { [id]: dbId })).body.labelsSwarm, { team: 'data' }, 'and read back');
      const cleared = await update({ healthCheckSwarm: null, labelsSwarm: null, networkIds: null, detachDokployNetwork: false, replicas: 1, command: null, args: null });
      t.match(cleared.body, { healthCheckSwarm: null, labelsSwarm: null, networkIds: null, detachDokployNetwork: false, replicas: 1 });

      const bad: [Record<string, unknown>, string][] = [
        [{ replicas: -1 }, 'replicas'],
        [{ replicas: 1.5 }, 'replicas'],
        [{ restartPolicySwarm: { Condition: 'sometimes' } }, 'restartPolicySwarm.Condition'],
        [{ updateConfigSwarm: { Parallelism: 1 } }, 'updateConfigSwarm.Order'],
        [{ ulimitsSwarm: [{ Name: '', Soft: 1, Hard: 1 }] }, 'ulimitsSwarm.0.Name'],
        [{ networkIds: 'net-a' }, 'networkIds'],
        [{ detachDokployNetwork: 'yes' }, 'detachDokployNetwork'],
        [{ labelsSwarm: { a: 1 } }, 'labelsSwarm.a'],
        [{ appName: 'with.dot' }, 'appName'],
        [{ appName: 'x'.repeat(64) }, 'appName'],
        [{ name: '' }, 'name'],
        [{ applicationStatus: 'broken' }, 'applicationStatus'],
        [{ externalPort: '5432' }, 'externalPort'],
        [{ dockerImage: '' }, 'dockerImage'],
      ];
      if (k.databaseName) bad.push([{ databaseName: '' }, 'databaseName']);
      if (k.databaseUser) bad.push([{ databaseUser: '' }, 'databaseUser']);
      const accepted: string[] = [];
      const unnamed: string[] = [];
      for (const [fields, path] of bad) {
        const res = await update(fields);
        if (res.status !== 400) accepted.push(`${JSON.stringify(fields)}: ${res.status}`);
        if (!issuePaths(res.body).some(p => p.startsWith(path))) unnamed.push(`${JSON.stringify(fields)}: ${path} not in ${JSON.stringify(res.body.issues)}`);
      }
      t.same(accepted, [], 'every bad field is a 400');
      t.same(unnamed, [], 'each names its field');
      t.equal((await update({ appName: 'renamed-db-' + suffix() })).status, 200, 'a new valid appName');
      t.equal((await update({ environmentId: foreign.environment.environmentId })).status, 404, "not into another organization's environment");
      t.equal((await update({ environmentId: 'no-such-environment' })).status, 404);
      t.equal((await client.post(`${k.kind}.update`, { name: 'x' })).status, 400, `update needs ${id}`);
      t.equal((await client.post(`${k.kind}.update`, { [id]: 'no-such-id', name: 'x' })).status, 404);
      const restored = await update({ name: `${k.kind} db`, dockerImage: k.images.current, description: 'main' });
      made[k.kind] = restored.body;
    });

    t.test(`${k.kind}: move to another environment`, async t => {
      const created = await client.post(`${k.kind}.create`, body(k, { environmentId: environment.environmentId, name: 'mover' }));
      const dbId = created.body[id];
      const moved = await client.post(`${k.kind}.move`, { [id]: dbId, targetEnvironmentId: staging.environmentId });
      t.equal(moved.status, 200);
      t.equal(moved.body.environmentId, staging.environmentId);
      const one = await client.get(`${k.kind}.one`, { [id]: dbId });
      t.match(one.body.environment, { environmentId: staging.environmentId, name: 'staging', projectId: project.projectId });
      t.equal((await client.post(`${k.kind}.move`, { [id]: dbId, targetEnvironmentId: foreign.environment.environmentId })).status, 404, 'not into another organization');
      t.equal((await client.post(`${k.kind}.move`, { [id]: dbId, targetEnvironmentId: 'no-such-environment' })).status, 404);
      const noTarget = await client.post(`${k.kind}.move`, { [id]: dbId });
      t.equal(noTarget.status, 400);
      t.ok(issuePaths(noTarget.body).includes('targetEnvironmentId'));
      t.equal((await client.get(`${k.kind}.one`, { [id]: dbId })).body.environmentId, staging.environmentId, 'a refused move changes nothing');
    });

    t.test(`${k.kind}: search`, async t => {
      const tag = `findme${suffix()}`;
      for (const [name, environmentId] of [
        [`${tag} one`, environment.environmentId],
        [`${tag} two`, staging.environmentId],
        [`${tag} three`, staging.environmentId],
      ]) {
        t.equal((await client.post(`${k.kind}.create`, body(k, { environmentId, name, description: 'search' }))).status, 200);
      }
      const all = await client.get(`${k.kind}.search`, { q: tag.toUpperCase() });
      t.equal(all.status, 200);
      t.equal(all.body.total, 3, 'case-insensitive');
      t.same(
        all.body.items.map((i: any) => i.name),
        [`${tag} three`, `${tag} two`, `${tag} one`],
        'newest first',
      );
      t.notOk(
        all.body.items.some((i: any) => i.databasePassword || i.databaseRootPassword || i.env),
        'no secrets in search results',
      );
      const byEnv = await client.get(`${k.kind}.search`, { name: tag, environmentId: staging.environmentId });
      t.equal(byEnv.body.total, 2);
      const byProject = await client.get(`${k.kind}.search`, { q: tag, projectId: project.projectId, limit: 1, offset: 1 });
      t.equal(byProject.body.total, 3);
      t.same(
        byProject.body.items.map((i: any) => i.name),
        [`${tag} two`],
        'paged',
      );
      t.equal((await client.get(`${k.kind}.search`, { q: tag, projectId: foreign.project.projectId })).body.total, 0);
      t.equal((await client.get(`${k.kind}.search`, { appName: made[k.kind]!.appName })).body.total, 1, 'by appName');
      t.equal((await other.client.get(`${k.kind}.search`, { q: tag })).body.total, 0, 'another organization finds none');
      t.equal((await client.get(`${k.kind}.search`, { limit: 0 })).status, 400);
      t.equal((await client.get(`${k.kind}.search`, { limit: 101 })).status, 400);
    });

    t.test(`${k.kind}: one`, async t => {
      const db = made[k.kind]!;
      const dbId = db[id] as string;
      const one = await client.get(`${k.kind}.one`, { [id]: dbId });
      t.equal(one.status, 200);
      t.match(one.body, {
        [id]: dbId,
        appName: db.appName,
        databasePassword: 'Secret_pw-1',
        environmentId: environment.environmentId,
        environment: { environmentId: environment.environmentId, name: 'production', isDefault: true, projectId: project.projectId, project: { projectId: project.projectId, name: 'Data' } },
        mounts: [],
        backups: [],
        externalConnectionUrl: null,
      });
      t.match(one.body.internalConnectionUrl, new RegExp(`^[a-z]+://.*Secret_pw-1@${db.appName}:\\d+`), 'internal URL: credentials, the appName, the internal port');
      await client.post(`${k.kind}.saveExternalPort`, { [id]: dbId, externalPort: 41000 + kinds.indexOf(k) });
      const published = await client.get(`${k.kind}.one`, { [id]: dbId });
      t.match(published.body.externalConnectionUrl, new RegExp(`^[a-z]+://.*@[^:/]+:${41000 + kinds.indexOf(k)}`), 'external URL on the external port');
      const trpc = await client.trpc('query', `${k.kind}.one`, { [id]: dbId });
      t.equal(trpc.status, 200);
      t.equal(trpc.body.result.data.json[id], dbId, 'the tRPC form answers the same');
      const bad = await client.get(`${k.kind}.one`, {});
      t.equal(bad.status, 400);
      t.ok(issuePaths(bad.body).includes(id));
    });
  }

  t.test('project.one, project.all and environment.one list every kind without secrets', async t => {
    const secrets = (list: Record<string, unknown>[]) => list.some(d => 'databasePassword' in d || 'databaseRootPassword' in d || 'env' in d);
    const one = await client.get('project.one', { projectId: project.projectId });
    t.equal(one.status, 200);
    const all = await client.get('project.all');
    const inAll = all.body.find((p: any) => p.projectId === project.projectId);
    const envOne = await client.get('environment.one', { environmentId: environment.environmentId });
    const unlisted: string[] = [];
    const leaked: string[] = [];
    const elsewhere: string[] = [];
    for (const k of kinds) {
      const id = `${k.kind}Id`;
      const dbId = made[k.kind]![id];
      for (const [where, environments] of [
        ['project.one', one.body.environments],
        ['project.all', inAll.environments],
      ] as const) {
        const list = environments.find((e: any) => e.environmentId === environment.environmentId)?.[k.kind] as Record<string, unknown>[] | undefined;
        const found = list?.find(d => d[id] === dbId);
        if (!found || found.name !== `${k.kind} db` || found.appName !== made[k.kind]!.appName || typeof found.applicationStatus !== 'string') {
          unlisted.push(`${where}: ${k.kind} ${Array.isArray(list) ? JSON.stringify(found) : 'has no list'}`);
        }
        if (list && secrets(list)) leaked.push(`${where}: ${k.kind}`);
        const stagingList = environments.find((e: any) => e.environmentId === staging.environmentId)?.[k.kind] as Record<string, unknown>[] | undefined;
        if (!Array.isArray(stagingList)) unlisted.push(`${where}: staging has no ${k.kind} list`);
        else if (stagingList.some(d => d[id] === dbId)) elsewhere.push(`${where}: ${k.kind}`);
      }
      const envList = envOne.body[k.kind] as Record<string, unknown>[];
      if (!envList.some(d => d[id] === dbId)) unlisted.push(`environment.one: ${k.kind}`);
      if (secrets(envList)) leaked.push(`environment.one: ${k.kind}`);
    }
    t.same(unlisted, [], "each kind's database listed under its environment (name, appName, status)");
    t.same(leaked, [], 'no passwords or env in the lists');
    t.same(elsewhere, [], 'not under the other environment');
  });

  t.test('secrets are sealed at rest', async t => {
    const marker = `Sealed_${suffix()}`;
    const pgc = new pg.Client(server.database);
    await pgc.connect();
    t.teardown(() => pgc.end());
    const notCreated: string[] = [];
    const inClear: string[] = [];
    const notReadBack: string[] = [];
    for (const k of kinds) {
      const id = `${k.kind}Id`;
      const created = await client.post(
        `${k.kind}.create`,
        body(k, { environmentId: environment.environmentId, databasePassword: `${marker}user`, ...(k.databaseRootPassword ? { databaseRootPassword: `${marker}root` } : {}) }),
      );
      if (created.status !== 200) {
        notCreated.push(`${k.kind}: ${created.status} ${JSON.stringify(created.body)}`);
        continue;
      }
      await client.post(`${k.kind}.saveEnvironment`, { [id]: created.body[id], env: `TOKEN=${marker}env` });
      const { rows } = await pgc.query(`select row_to_json(t)::text as row from "db_${k.kind}" t where id = $1`, [created.body[id]]);
      if (rows.length !== 1) inClear.push(`${k.kind}: ${rows.length} rows in db_${k.kind}`);
      else if (rows[0].row.includes(marker)) inClear.push(`${k.kind}: ${rows[0].row}`);
      const back = (await client.get(`${k.kind}.one`, { [id]: created.body[id] })).body;
      const sealed = { databasePassword: `${marker}user`, env: `TOKEN=${marker}env`, ...(k.databaseRootPassword ? { databaseRootPassword: `${marker}root` } : {}) };
      const got = Object.fromEntries(Object.keys(sealed).map(key => [key, back[key]]));
      if (JSON.stringify(got) !== JSON.stringify(sealed)) notReadBack.push(`${k.kind}: ${JSON.stringify(got)}`);
    }
    t.same(notCreated, [], 'a database of every kind is created');
    t.same(inClear, [], "each kind's row (in db_<kind>) holds no password or env in clear");
    t.same(notReadBack, [], 'and each reads them back through the API');
  });

  t.test('appName is unique across kinds and with applications', async t => {
    const shared = `shared-${suffix()}`;
    t.equal((await client.post('postgres.create', body(kinds[0]!, { environmentId: environment.environmentId, appName: shared }))).status, 200);
    const takenFromDatabase: string[] = [];
    for (const k of kinds) {
      const res = await client.post(`${k.kind}.create`, body(k, { environmentId: staging.environmentId, appName: shared }));
      if (res.status !== 409 || res.body.code !== 'CONFLICT' || !String(res.body.message).includes(shared)) takenFromDatabase.push(`${k.kind}: ${res.status} ${res.body.code} ${res.body.message}`);
    }
    t.same(takenFromDatabase, [], "no kind can take a database's appName: 409 CONFLICT naming it");
    const app = `app-${suffix()}`;
    t.equal((await client.post('application.create', { name: 'web', environmentId: environment.environmentId, appName: app })).status, 200);
    const takenFromApplication: string[] = [];
    for (const k of kinds) {
      const created = await client.post(`${k.kind}.create`, body(k, { environmentId: environment.environmentId, appName: app }));
      if (created.status !== 409) takenFromApplication.push(`${k.kind}.create: ${created.status}`);
      const updated = await client.post(`${k.kind}.update`, { [`${k.kind}Id`]: made[k.kind]![`${k.kind}Id`], appName: app });
      if (updated.status !== 409) takenFromApplication.push(`${k.kind}.update: ${updated.status}`);
    }
    t.same(takenFromApplication, [], "no kind can take an application's appName, by create or update (409)");
    t.equal((await client.post('application.create', { name: 'web2', environmentId: environment.environmentId, appName: shared })).status, 409, "an application cannot take a database's appName");
    const self = await client.post('redis.update', { redisId: made.redis!.redisId, appName: made.redis!.appName });
    t.equal(self.status, 200, 'keeping its own appName is no conflict');
  });

  t.test('an externalPort is held by one database of any kind', async t => {
    const port = 42000 + Math.floor(Math.random() * 1000);
    t.equal((await client.post('postgres.saveExternalPort', { postgresId: made.postgres!.postgresId, externalPort: port })).status, 200);
    t.equal((await client.post('postgres.saveExternalPort', { postgresId: made.postgres!.postgresId, externalPort: port })).status, 200, 'saving its own port again');
    const taken: string[] = [];
    for (const k of kinds.slice(1)) {
      const res = await client.post(`${k.kind}.saveExternalPort`, { [`${k.kind}Id`]: made[k.kind]![`${k.kind}Id`], externalPort: port });
      if (res.status !== 409 || !String(res.body.message).includes(String(port))) taken.push(`${k.kind}.saveExternalPort: ${res.status} ${res.body.message}`);
      const updated = await client.post(`${k.kind}.update`, { [`${k.kind}Id`]: made[k.kind]![`${k.kind}Id`], externalPort: port });
      if (updated.status !== 409) taken.push(`${k.kind}.update: ${updated.status}`);
    }
    t.same(taken, [], 'no other kind can take it, by saveExternalPort (409 naming the port) or update (409)');
    t.equal((await client.post('postgres.saveExternalPort', { postgresId: made.postgres!.postgresId, externalPort: null })).status, 200);
    t.equal((await client.post('mongo.saveExternalPort', { mongoId: made.mongo!.mongoId, externalPort: port })).status, 200, 'free again once released');
  });

  t.test('another organization gets NOT_FOUND for every operation', async t => {
    const answered: string[] = [];
    const created: string[] = [];
    const changed: string[] = [];
    const anonymous: string[] = [];
    for (const k of kinds) {
      const id = `${k.kind}Id`;
      const db = made[k.kind]!;
      const dbId = db[id] as string;
      const calls: [string, 'get' | 'post', Record<string, unknown>][] = [
        ['one', 'get', {}],
        ['readLogs', 'get', {}],
        ['start', 'post', {}],
        ['stop', 'post', {}],
        ['deploy', 'post', {}],
        ['rebuild', 'post', {}],
        ['reload', 'post', { appName: db.appName }],
        ['update', 'post', { name: 'stolen' }],
        ['saveEnvironment', 'post', { env: 'X=1' }],
        ['saveExternalPort', 'post', { externalPort: 43999 }],
        ['changeStatus', 'post', { applicationStatus: 'done' }],
        ['move', 'post', { targetEnvironmentId: foreign.environment.environmentId }],
        ['changePassword', 'post', { password: 'Other_pw-1' }],
        ['remove', 'post', {}],
      ];
      for (const [op, method, extra] of calls) {
        const res = method === 'get' ? await other.client.get(`${k.kind}.${op}`, { [id]: dbId, ...extra }) : await other.client.post(`${k.kind}.${op}`, { [id]: dbId, ...extra });
        if (res.status !== 404 || res.body.code !== 'NOT_FOUND') answered.push(`${k.kind}.${op}: ${res.status} ${res.body.code}`);
      }
      const creates: [string, Client, Record<string, unknown>][] = [
        ['in a foreign environment', other.client, { environmentId: environment.environmentId }],
        ['in a foreign project', other.client, { projectId: project.projectId }],
        ['into the other organization', client, { environmentId: foreign.environment.environmentId }],
      ];
      for (const [where, as, placement] of creates) {
        const res = await as.post(`${k.kind}.create`, body(k, placement));
        if (res.status !== 404) created.push(`${k.kind}.create ${where}: ${res.status}`);
      }
      const still = (await client.get(`${k.kind}.one`, { [id]: dbId })).body;
      const kept = { name: `${k.kind} db`, env: 'A=1\nB=${{project.X}}', databasePassword: 'Secret_pw-1', environmentId: environment.environmentId };
      const now = Object.fromEntries(Object.keys(kept).map(key => [key, still[key]]));
      if (JSON.stringify(now) !== JSON.stringify(kept)) changed.push(`${k.kind}: ${JSON.stringify(now)}`);
      const none = await new Client(server.url).get(`${k.kind}.one`, { [id]: dbId });
      if (none.status !== 401) anonymous.push(`${k.kind}.one: ${none.status}`);
    }
    t.same(answered, [], 'every operation of every kind answers another organization 404 NOT_FOUND');
    t.same(created, [], 'no kind is created across organizations (404)');
    t.same(changed, [], 'nothing changed');
    t.same(anonymous, [], 'no credential: 401');
  });

  t.test('remove answers the record and forgets it', async t => {
    const notRemoved: string[] = [];
    const remembered: string[] = [];
    const twice: string[] = [];
    for (const k of kinds) {
      const id = `${k.kind}Id`;
      const created = await client.post(`${k.kind}.create`, body(k, { environmentId: environment.environmentId, name: 'doomed' }));
      const removed = await client.post(`${k.kind}.remove`, { [id]: created.body[id] });
      if (removed.status !== 200 || removed.body[id] !== created.body[id] || removed.body.name !== 'doomed') notRemoved.push(`${k.kind}: ${removed.status} ${JSON.stringify(removed.body)}`);
      const one = await client.get(`${k.kind}.one`, { [id]: created.body[id] });
      if (one.status !== 404) remembered.push(`${k.kind}.one: ${one.status}`);
      const again = await client.post(`${k.kind}.remove`, { [id]: created.body[id] });
      if (again.status !== 404) twice.push(`${k.kind}.remove: ${again.status}`);
    }
    t.same(notRemoved, [], 'remove answers the removed record, for every kind');
    t.same(remembered, [], 'one is then a 404');
    t.same(twice, [], 'removing twice is a 404');
  });

  t.test('the OpenAPI document has every operation of every kind', async t => {
    const doc = (await client.get('settings.getOpenApiDocument')).body;
    const absent: string[] = [];
    const noSchema: string[] = [];
    const misnamed: string[] = [];
    for (const k of kinds) {
      for (const op of operations) {
        const method = ['one', 'search', 'readLogs'].includes(op) ? 'get' : 'post';
        const operation = doc.paths[`/${k.kind}.${op}`]?.[method];
        if (!operation) {
          absent.push(`${method.toUpperCase()} /${k.kind}.${op}`);
          continue;
        }
        const schema = operation.responses?.['200']?.content?.['application/json']?.schema;
        if (!(schema && (schema.type || schema.anyOf || schema.$ref))) noSchema.push(`${k.kind}.${op}`);
        if (operation.operationId !== `${k.kind}-${op}`) misnamed.push(`${k.kind}.${op}: ${operation.operationId}`);
      }
    }
    t.same(absent, [], 'every operation of every kind, by its method');
    t.same(noSchema, [], 'each has a 200 schema');
    t.same(misnamed, [], 'each operationId is <kind>-<operation>');

    const createSchema = (k: Kind) => doc.paths[`/${k.kind}.create`].post.requestBody.content['application/json'].schema;
    const offenders = (check: (k: Kind) => boolean) => kinds.filter(k => !check(k)).map(k => k.kind);
    t.same(
      offenders(k => Boolean(createSchema(k).properties.databaseName) === k.databaseName),
      [],
      'create: databaseName in the schema only where the kind has it',
    );
    t.same(
      offenders(k => Boolean(createSchema(k).properties.databaseRootPassword) === k.databaseRootPassword),
      [],
      'create: databaseRootPassword likewise',
    );
    t.same(
      offenders(k => createSchema(k).required.includes('name') && createSchema(k).required.includes('databasePassword')),
      [],
      'create requires name and databasePassword',
    );
    t.same(
      offenders(k => Boolean(createSchema(k).properties.environmentId && createSchema(k).properties.projectId)),
      [],
      'create takes both placements',
    );
    t.same(
      offenders(k => JSON.stringify(doc.paths[`/${k.kind}.one`].get.responses['200'].content['application/json'].schema).includes('internalConnectionUrl')),
      [],
      'one declares the connection URLs',
    );
  });
});
