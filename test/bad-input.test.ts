// No input gets a 500: every operation of the OpenAPI document, driven with bad inputs (wrong
// types, nulls, NUL bytes, unpaired surrogates, huge numbers, long strings, deep nesting, wrong
// content types, malformed bodies), answers a 4xx. A real record stands behind every id field the
// document names (test/fuzz-records.ts; those that cannot exist yet are listed there with why), so
// a bad field of an otherwise good request reaches the services and the database: updates and reads
// aim at the run's records, and an operation that removes what it is given gets a new record
// whenever the one before may be gone. Billing is on (the Stripe stand-in).
// The positive control: each operation's good base request (goodValue's body with the records, and
// what BASES adds for the operation) must succeed, or BASE_FAILS names why it cannot here (today
// 397 of 443 operations pass, 38 fail as BASE_FAILS says). Operations that would act on the shared
// engine or on this instance while other files run are named in ACTS_HERE with why (35): those
// with a BASES entry get records that cannot act (workloads on a server without a key, a dry run)
// and their base must succeed too; the 8 others get ids of no record, and every request to them
// must be refused. An operation's requests go a few at a time (AT_ONCE), a remover's one at a
// time; the operations one after another.
import t from 'tap';
import { createHmac } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startTestServer, signUpAdmin, addMember, startHttpSink, startSmtp, makeCertificate, Client, type Reply } from '@berth/core/testing';
import { totp } from '../plugins/auth/test/totp.ts';
import { buyServers, fuzzRecords, fuzzStandIns, NO_RECORD } from './fuzz-records.ts';
import { AT_ONCE, documentOperations, goodValue, idFieldsOf, inPool, sendUpload } from './openapi-operations.ts';

/** Operations that take away the record they are given. */
const REMOVES = /delete|remove/i;

const KINDS = ['application', 'compose', 'postgres', 'mysql', 'mariadb', 'mongo', 'redis', 'libsql'];
const DATABASE_KINDS = KINDS.slice(2);
/** The kinds with the kit's changePassword and saveExternalPort (libsql has the peer's saveExternalPorts instead, and no changePassword). */
const KIT_PORT_KINDS = DATABASE_KINDS.filter(k => k !== 'libsql');
const CHANNELS = ['Slack', 'Discord', 'Telegram', 'Email', 'Resend', 'Gotify', 'Ntfy', 'Mattermost', 'Custom', 'Lark', 'Teams', 'Pushover'];
const onServerWhy = "gets the run's workload on a server without a key: its deployment is queued and fails before any engine is reached";

/**
 * Operations that would act on the shared Docker engine or on this instance while other test files
 * run, by exact name, with why. Those with a BASES entry are sent records that cannot act (said
 * here); the others get ids of no record, and every request to them must be refused (4xx).
 */
const ACTS_HERE: Record<string, string> = {
  'application.deploy': `builds and runs the application on this machine; ${onServerWhy}`,
  'application.redeploy': `as application.deploy; ${onServerWhy}`,
  'application.dropDeployment': `keeps the uploaded archive as the application's source and deploys it as application.deploy does; ${onServerWhy}`,
  'compose.deploy': `runs the stack on this machine; ${onServerWhy}`,
  'compose.redeploy': `as compose.deploy; ${onServerWhy}`,
  'compose.isolatedDeployment': `as compose.deploy; ${onServerWhy}`,
  'compose.deployTemplate': "makes a stack of a template of the catalog and runs it; the fuzz's is made on a server without a key, so its deployment fails before any engine is reached",
  'ai.deploy': "makes a stack of the suggestion and runs it; the fuzz's is made on a server without a key, so its deployment fails before any engine is reached",
  ...Object.fromEntries(DATABASE_KINDS.flatMap(k => [`${k}.deploy`, `${k}.rebuild`].map(op => [op, `starts the database (rebuild: afresh, its volume removed) on this machine; ${onServerWhy}`]))),
  'libsql.saveExternalPorts': `publishes the ports and deploys the database, as the peer's; ${onServerWhy}`,
  'volumeBackups.restore': "writes a volume on the workload's engine through a helper container; the fuzz's workload is on a server without a key, so the restore fails before any engine is reached",
  'deploy/{refreshToken}': `a push queues a deployment of the application; the path names the run's application on a server without a key: it fails before any engine is reached`,
  'deploy/{hookPath}/{refreshToken}': `a push queues a deployment of the stack; the path names the run's stack on a server without a key: it fails before any engine is reached`,
  ...Object.fromEntries(
    ['cleanUnusedImages', 'cleanUnusedVolumes', 'cleanStoppedContainers', 'cleanDockerBuilder', 'cleanDockerPrune', 'cleanAll'].map(op => [
      `settings.${op}`,
      "removes images, volumes or containers of this machine's engine, which every test file shares: sent as a dry run (dryRun: true), which only lists them; a real one is refused by the test servers' cleanupThisMachine: false",
    ]),
  ),
  'settings.reloadServer': 'restarts this Berth: refused (409) since no test server is started by `berth start`',
  'settings.reloadTraefik': 'restarts the proxy service: refused, the fuzz runs no proxy (one would be a service on the shared engine)',
  'settings.toggleDashboard': 'recreates the proxy service with its dashboard port: refused, the fuzz runs no proxy',
  'settings.updateTraefikPorts': 'recreates the proxy service with more host ports: refused, the fuzz runs no proxy',
  'settings.writeTraefikEnv': 'recreates the proxy service with its environment: refused, the fuzz runs no proxy',
  'registry.enableSelfHostedRegistry': 'starts a registry service on this machine, behind the proxy: refused, the fuzz runs no proxy',
  'cluster.joinServer': "joins a server to this machine's swarm, which every test file shares",
  'cluster.removeWorker': "removes a node from this machine's swarm, which every test file shares",
};

/**
 * Operations that change an instance-wide setting which the operations after them need as it was:
 * the body that puts it back, sent once their requests are answered.
 */
const RESTORE_AFTER: Record<string, { body: Record<string, unknown>; why: string }> = {
  'settings.updateRemoteServersOnly': { body: { remoteServersOnly: false }, why: "on, it refuses every deploy on this machine (409 before it is queued), which later operations' bases make" },
};

/** What an operation's base needs beyond goodValue's body. */
interface Base {
  /** fields merged into goodValue's body */
  body?: Record<string, unknown>;
  /** values of the path's {parameters} */
  path?: Record<string, string>;
  /** headers of the base request alone (a signature over its body) */
  headers?: (body: string) => Record<string, string>;
  /** a bearer token in place of the admin's API key, for every request of the operation */
  token?: string;
}

/** Why an operation's base cannot succeed here (for a reason other than the fuzz): the status and what the body says (both must match). */
interface Fails {
  status: number;
  body: RegExp;
  why: string;
}

const noProxy: Fails = { status: 400, body: /the active proxy provider is none/, why: "Traefik's files: the fuzz runs no proxy (one would be a service on the shared engine)" };
const noKey: Fails = { status: 400, body: /has no SSH key: attach one/, why: "the fuzz's servers have no key (kit hosts are not the fuzz's): the operation stops before connecting" };
const neverDeployed = (why: string): Fails => ({ status: 400, body: /has never been deployed|is not running/, why });

/** Bases that cannot succeed here, by operation (the test fails when one succeeds after all, or fails otherwise: update it). */
const BASE_FAILS: Record<string, Fails> = {
  ...Object.fromEntries(
    [
      'application.readTraefikConfig',
      'application.updateTraefikConfig',
      'settings.readTraefikConfig',
      'settings.updateTraefikConfig',
      'settings.readWebServerTraefikConfig',
      'settings.updateWebServerTraefikConfig',
      'settings.readMiddlewareTraefikConfig',
      'settings.updateMiddlewareTraefikConfig',
      'settings.readTraefikFile',
      'settings.updateTraefikFile',
      'settings.readDirectories',
      'settings.readTraefikEnv',
      'settings.haveTraefikDashboardPortEnabled',
      'settings.getTraefikPorts',
    ].map(op => [op, noProxy]),
  ),
  'settings.assignDomainServer': { status: 400, body: /No proxy is configured/, why: "Berth's own domain is served by the proxy, and the fuzz runs none" },
  'settings.updateServer': { status: 409, body: /Berth does not upgrade itself from the API/, why: 'Berth never upgrades itself from the API: the operation answers how to' },
  'settings.setupGPU': { status: 409, body: /NVIDIA drivers not installed on Berth's own machine/, why: 'this machine has no GPU: the setup names the missing driver' },
  ...Object.fromEntries(
    ['settings.cleanRedis', 'settings.reloadRedis'].map(op => [
      op,
      { status: 404, body: /Redis container not found\. Berth runs no Redis/, why: 'Berth runs no Redis: a self-hosted peer without one answers so' },
    ]),
  ),
  'server.setup': noKey,
  'server.security': noKey,
  'application.readLogs': { status: 404, body: /Service app-[\w-]+ not found/, why: "the run's application is never deployed: the engine has no service of it" },
  'compose.readLogs': { status: 404, body: /Container \w+ of this stack not found/, why: "the run's stack is never deployed: it has no container (the input's is the records' container, docker.*'s)" },
  ...Object.fromEntries(DATABASE_KINDS.map(k => [`${k}.readLogs`, neverDeployed("the run's databases are never deployed: no logs")])),
  ...Object.fromEntries(
    ['Compose', 'Mariadb', 'Mongo', 'MySql', 'Postgres', 'Redis', 'Libsql'].map(k => [`backup.manualBackup${k}`, neverDeployed("the run's databases and stack are never deployed: nothing to dump")]),
  ),
  ...Object.fromEntries(KIT_PORT_KINDS.map(k => [`${k}.changePassword`, neverDeployed("the password is changed inside the running database, and the run's are never deployed")])),
  'volumeBackups.runManually': { status: 400, body: /volume [\w-]+ does not exist on this host/, why: "the run's workloads are never deployed: their volumes do not exist" },
  'deployment.killProcess': { status: 400, body: /is not running: it is error/, why: "the run's deployments fail at once (nothing to build, no key to reach a server): none runs to kill" },
};

const nested = (depth: number): unknown => {
  let v: unknown = 'deep';
  for (let i = 0; i < depth; i++) v = { a: [v] };
  return v;
};

/** The bad values each property gets, by label. */
const badValues: Record<string, unknown> = {
  null: null,
  nul: 'a\u0000b',
  loneHigh: 'a\ud800b',
  loneLow: '\udc00',
  long: 'y'.repeat(70_000),
  longish: 'z'.repeat(300),
  huge: 1e20,
  negHuge: -1e20,
  fraction: 0.5,
  negative: -1,
  number: 12,
  bool: true,
  object: { a: 'b\u0000' },
  array: ['a\ud800'],
  deep: nested(200),
};

// Every field of every operation, each with every bad value: past tap's default limit since the compose namespace came.
t.setTimeout(1_500_000);

t.test('every operation of the OpenAPI document answers bad input with a 4xx, never a 500', async t => {
  const standIns = await fuzzStandIns(t, { billing: true });
  const stripe = standIns.stripe!;
  // The loopback services the notification channels' tests reach.
  const sink = await startHttpSink(t);
  // What Telegram (ok) and Pushover (status) answer a message they took.
  sink.setDefault({ status: 200, body: '{"ok":true,"status":1}' });
  const smtp = await startSmtp(t, makeCertificate(t), 'none');
  // A template catalog of one template (compose.templates, deployTemplate).
  const templates = t.testdir();
  mkdirSync(path.join(templates, 'blueprints', 'fuzz'), { recursive: true });
  writeFileSync(path.join(templates, 'meta.json'), JSON.stringify([{ id: 'fuzz', name: 'Fuzz', description: 'one service', version: '1', logo: null, links: {}, tags: [] }]));
  writeFileSync(path.join(templates, 'blueprints', 'fuzz', 'docker-compose.yml'), 'services:\n  web:\n    image: berth-test/busybox:1\n');
  writeFileSync(path.join(templates, 'blueprints', 'fuzz', 'template.toml'), '[variables]\n');
  // No proxy: a domain change would otherwise start one (host ports 80/443) on the shared engine;
  // with none the domain operations still store and validate everything they are given.
  const server = await startTestServer({
    proxy: 'none',
    ...standIns.config,
    providers: { ...standIns.config.providers, notify: Object.fromEntries(['telegram', 'pushover', 'resend'].map(k => [k, { options: { apiUrl: `${sink.url}/${k}` } }])) },
    templatesSource: templates,
    backupPassphrase: 'the fuzz keeps this passphrase',
  } as never); // cast: the plugins' own config keys (billing, compose, backups) are theirs to declare, not BerthConfig's
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server);
  const c = admin.client;
  // Billing is on: the run's servers are paid for first.
  await buyServers(server, c, stripe, 1000);
  const records = await fuzzRecords(t, server, c, admin, { bitbucket: standIns.bitbucket, stripe });
  const ids = records.ids;

  let n = 0;
  const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++n}`;
  const ok = async (what: string, reply: Promise<Reply>) => {
    const r = await reply;
    if (r.status >= 300) throw new Error(`fuzz base of ${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    return r.body;
  };
  /** A member with two-factor login on, signed in within the last minute (bearer token). */
  const twoFactorMember = async () => {
    const email = `${unique('twofactor')}@example.com`;
    const member = await addMember(server, c, email);
    const as = new Client(server.url, { token: member.token });
    const { secret } = await ok('auth.generate2FASecret', as.get('auth.generate2FASecret'));
    await ok('auth.verify2FASetup', as.post('auth.verify2FASetup', { secret, pin: totp(secret) }));
    return { ...member, email, secret };
  };
  const backupOf = (databaseType: string) => ({ schedule: '0 3 * * *', prefix: unique('b'), destinationId: ids.destinationId, database: 'db', databaseType, enabled: false });
  const refreshTokenOf = async (kind: string, field: string) => (await ok(`${kind}.one`, c.get(`${kind}.one`, { [field]: await records.onServer(field) }))).refreshToken as string;
  const appNameOf = async (kind: string, field: string) => (await ok(`${kind}.one`, c.get(`${kind}.one`, { [field]: ids[field] }))).appName as string;
  // One server of the run's monitored (its samples are read over a connection it never gets: it has no key).
  // An application of the fuzz's Gitea repository (a new connection: gitea.update's bad values changed the run's), for patch.*'s checkout.
  let patched: Promise<string> | undefined;
  const patchedApp = () =>
    (patched ??= (async () => {
      const { applicationId } = await ok('application.create', c.post('application.create', { name: unique('patched'), environmentId: ids.environmentId }));
      const source = { giteaId: await records.fresh('giteaId'), giteaOwner: records.gitea.owner, giteaRepository: records.gitea.repositoryName, giteaBranch: 'main', giteaBuildPath: '/' };
      await ok('application.saveGiteaProvider', c.post('application.saveGiteaProvider', { applicationId, ...source }));
      return applicationId as string;
    })());
  let monitored: Promise<{ url: string; token: string }> | undefined;
  const monitoring = () =>
    (monitored ??= (async () => {
      const token = 'fuzz-metrics-token';
      const metricsConfig = {
        server: { refreshRate: 60, port: 4500, token, urlCallback: `${server.url}/api/notification.receiveNotification`, retentionDays: 1, cronJob: '0 3 * * *', thresholds: { cpu: 0, memory: 0 } },
        containers: { refreshRate: 60, services: {} },
      };
      await ok('server.setupMonitoring', c.post('server.setupMonitoring', { serverId: await records.fresh('serverId'), metricsConfig }));
      return { url: 'http://192.0.2.10:4500', token };
    })());

  /** What an operation's base needs beyond goodValue's body (the schema's required fields, the records' ids and GOOD's values), by operation. */
  const BASES: Record<string, (schema: Record<string, unknown>) => Base | Promise<Base>> = {
    // A saved default key would have the server probe connect to the run's keyless servers (off this machine): null removes it.
    'settings.saveSSHPrivateKey': () => ({ body: { sshPrivateKey: null } }),
    'settings.updateServerIp': () => ({ body: { serverIp: '127.0.0.1' } }),
    ...Object.fromEntries(KINDS.map(k => [`${k}.create`, () => ({ body: { environmentId: ids.environmentId } })])),
    'domain.create': () => ({ body: { host: `${unique('fuzz')}.example.com`, applicationId: ids.applicationId, port: 80 } }),
    'security.update': () => ({ body: { username: unique('user') } }),
    'certificates.create': () => ({ body: { certificateData: records.cert, privateKey: records.key } }),
    'sshKey.create': async () => ({ body: await ok('sshKey.generate', c.post('sshKey.generate', { type: 'ed25519' })) }),
    'environment.create': () => ({ body: { name: unique('env') } }),
    'environment.duplicate': () => ({ body: { name: unique('env') } }),
    'ai.getModels': () => ({ body: { apiUrl: records.llm.url, apiKey: records.llm.apiKey } }),
    'ai.testConnection': () => ({ body: { apiUrl: records.llm.url, apiKey: records.llm.apiKey, model: records.llm.model } }),
    // A new configuration: ai.update's bad values changed the run's key.
    'ai.suggest': async () => ({ body: { aiId: await records.fresh('aiId') } }),
    'ai.analyzeLogs': async () => ({ body: { aiId: await records.fresh('aiId') } }),
    // The run's servers stay paid for: the subscription moves to hobby prices for as many as were bought.
    'stripe.upgradeSubscription': () => ({ body: { serverQuantity: 1000 } }),
    // A new registry: registry.update's bad values changed the run's password.
    'registry.testRegistryById': async () => ({ body: { registryId: await records.fresh('registryId') } }),
    'ai.deploy': () => ({ body: { serverId: ids.serverId, id: unique('ai'), name: unique('ai') } }),
    'auth.createAdmin': () => ({ body: { email: `${unique('admin')}@example.com` } }),
    'auth.createUser': async () => {
      const invitation = await ok('organization.inviteMember', c.post('organization.inviteMember', { email: `${unique('invited')}@example.com`, role: 'member' }));
      return { body: { id: invitation.id, token: invitation.token } };
    },
    // The caller's own e-mail kept and no new password (a new one needs the current one).
    'auth.update': () => ({ body: { email: 'admin@example.com', password: null } }),
    'auth.updateByAdmin': () => ({ body: { id: ids.userId, email: `${unique('member')}@example.com`, password: null } }),
    // Two-factor login: its operations as members, each signed in within the last minute.
    'auth.verify2FASetup': async () => {
      const member = await addMember(server, c, `${unique('twofactor')}@example.com`);
      const { secret } = await ok('auth.generate2FASecret', new Client(server.url, { token: member.token }).get('auth.generate2FASecret'));
      return { body: { secret, pin: totp(secret) }, token: member.token };
    },
    'auth.verifyLogin2FA': async () => {
      const member = await twoFactorMember();
      const login = await ok('auth.login', new Client(server.url).post('auth.login', { email: member.email, password: member.password }));
      // The next time step's code: the setup's took this one.
      return { body: { id: login.id, pin: totp(member.secret, Date.now() + 30_000) } };
    },
    'auth.disable2FA': async () => ({ token: (await twoFactorMember()).token }),
    'auth.generateRecoveryCodes': async () => ({ token: (await twoFactorMember()).token }),
    'registry.testRegistry': () => ({ body: { registryUrl: records.registry.url, username: records.registry.username, password: records.registry.password, registryType: 'cloud' } }),
    'swarm.getNodeInfo': async () => ({ body: { nodeId: (await ok('swarm.getNodes', c.get('swarm.getNodes')))[0].ID } }),
    'gitlab.testConnection': () => ({ body: { gitlabId: ids.gitlabId } }),
    'gitea.testConnection': () => ({ body: { giteaId: ids.giteaId } }),
    'gitea.getGiteaBranches': () => ({ body: { giteaId: ids.giteaId, owner: records.gitea.owner, repositoryName: records.gitea.repositoryName } }),
    ...Object.fromEntries(
      ['gitlab', 'bitbucket', 'gitea'].map(k => [
        `${k}.update`,
        async () => ({ body: { gitProviderId: (await ok(`${k}.one`, c.get(`${k}.one`, { [`${k}Id`]: ids[`${k}Id`] }))).gitProviderId, ...(k === 'gitea' ? { giteaUrl: records.gitea.url } : {}) } }),
      ]),
    ),
    'gitea.create': () => ({ body: { giteaUrl: records.gitea.url } }),
    // A name of the run's own: the network is made on the engine every test file shares (and removed with the server's organizations).
    'network.create': () => ({ body: { name: unique('fuzz-net') } }),
    // Forward auth: an auth domain of the run's own (a host nothing routes: the fuzz runs no proxy), and Berth answering its checks, before a domain is guarded.
    'forwardAuth.deployOnServer': async () => {
      await ok('forwardAuth.setAuthDomain', c.post('forwardAuth.setAuthDomain', { serverId: null, authDomain: `${unique('auth')}.example.com`, https: false }));
      return { body: { serverId: null, providerId: 'berth' } };
    },
    'forwardAuth.enable': async () => {
      await ok('forwardAuth.setAuthDomain', c.post('forwardAuth.setAuthDomain', { serverId: null, authDomain: `${unique('auth')}.example.com`, https: false }));
      await ok('forwardAuth.deployOnServer', c.post('forwardAuth.deployOnServer', { serverId: null, providerId: 'berth' }));
      return {};
    },
    // A new custom role: the record's name is taken (names are per organization, one each).
    'customRole.create': () => ({ body: { roleName: unique('role') } }),
    // A new SSO provider (the record's id is taken: ids are the instance's), a SAML one: nothing to reach.
    'sso.register': () => ({ body: { providerId: unique('sso'), samlConfig: { entryPoint: 'https://example.com/sso', cert: 'x', callbackUrl: 'https://example.com/acs', spMetadata: {} } } }),
    'deployment.allByType': () => ({ body: { id: ids.composeId, type: 'compose' } }),
    'volumeBackups.list': () => ({ body: { id: ids.composeId, volumeBackupType: 'compose' } }),
    'schedule.create': () => ({ body: { applicationId: ids.applicationId, enabled: false } }),
    'schedule.list': () => ({ body: { id: ids.applicationId, scheduleType: 'application' } }),
    // patch.*: the peer's id and type name the run's application; the checkout's operations, an application of the fuzz's Gitea repository, fetched afresh.
    ...Object.fromEntries(['byEntityId', 'saveFileAsPatch', 'markFileForDeletion'].map(op => [`patch.${op}`, () => ({ body: { id: ids.applicationId, type: 'application' } })])),
    'patch.create': () => ({ body: { applicationId: ids.applicationId, filePath: `${unique('fuzz')}.txt` } }),
    'patch.ensureRepo': async () => ({ body: { id: await patchedApp(), type: 'application' } }),
    'patch.readRepoDirectories': async () => {
      const id = await patchedApp();
      return { body: { id, type: 'application', repoPath: await ok('patch.ensureRepo', c.post('patch.ensureRepo', { id, type: 'application' })) } };
    },
    'patch.readRepoFile': async () => {
      const id = await patchedApp();
      await ok('patch.ensureRepo', c.post('patch.ensureRepo', { id, type: 'application' }));
      return { body: { id, type: 'application', filePath: 'docker-compose.yml' } };
    },
    'mounts.create': () => ({ body: { type: 'volume', volumeName: unique('volume'), serviceType: 'application' } }),
    'mounts.listByServiceId': () => ({ body: { serviceType: 'application' } }),
    'backup.create': () => ({ body: { databaseType: 'postgres', postgresId: ids.postgresId, prefix: unique('b') } }),
    'backup.restoreBackup': () => ({ body: { databaseId: ids.mariadbId } }),
    // A backup of each kind: its run finds the workload never deployed.
    ...Object.fromEntries(
      ['mariadb', 'mongo', 'mysql', 'redis', 'libsql'].map(k => [
        `backup.manualBackup${k === 'mysql' ? 'MySql' : k[0]!.toUpperCase() + k.slice(1)}`,
        async () => ({ body: { backupId: (await ok('backup.create', c.post('backup.create', { ...backupOf(k), [`${k}Id`]: ids[`${k}Id`] }))).backupId } }),
      ]),
    ),
    'backup.manualBackupCompose': async () => ({
      body: { backupId: (await ok('backup.create', c.post('backup.create', { ...backupOf('postgres'), backupType: 'compose', serviceName: 'web', composeId: ids.composeId }))).backupId },
    }),
    ...Object.fromEntries(['postgres', 'mysql', 'mariadb', 'mongo'].map(k => [`${k}.changePassword`, () => ({ body: { password: 'aNewPassword42' } })])),
    'backup.manualBackupWebServer': async () => ({
      body: {
        backupId: (
          await ok(
            'backup.create',
            c.post('backup.create', { schedule: '0 3 * * *', prefix: 'instance', destinationId: ids.destinationId, database: 'berth', databaseType: 'web-server', enabled: false }),
          )
        ).backupId,
      },
    }),
    'volumeBackups.create': () => ({ body: { serviceType: 'compose', composeId: ids.composeId } }),
    'volumeBackups.restore': async () => ({ body: { id: await records.onServer('composeId'), serviceType: 'compose' } }),
    'compose.deployTemplate': () => ({ body: { id: 'fuzz', environmentId: ids.environmentId, serverId: ids.serverId } }),
    ...Object.fromEntries(
      [
        ['application', 'applicationId', ['deploy', 'redeploy', 'dropDeployment']],
        ['compose', 'composeId', ['deploy', 'redeploy', 'isolatedDeployment']],
        ...DATABASE_KINDS.map(k => [k, `${k}Id`, ['deploy', 'rebuild']] as const),
      ].flatMap(([kind, field, ops]) => (ops as string[]).map(op => [`${kind}.${op}`, async () => ({ body: { [field as string]: await records.onServer(field as string) } })])),
    ),
    ...Object.fromEntries(['application', ...DATABASE_KINDS].map(k => [`${k}.reload`, async () => ({ body: { appName: await appNameOf(k, `${k}Id`) } })])),
    'application.readAppMonitoring': async () => ({ body: { appName: await appNameOf('application', 'applicationId') } }),
    ...Object.fromEntries(KIT_PORT_KINDS.map((k, i) => [`${k}.saveExternalPort`, () => ({ body: { externalPort: 25400 + i } })])),
    'libsql.saveExternalPorts': async () => ({ body: { libsqlId: await records.onServer('libsqlId'), externalPort: 25410, externalGRPCPort: 25411, externalAdminPort: 25412 } }),
    ...Object.fromEntries(
      ['cleanUnusedImages', 'cleanUnusedVolumes', 'cleanStoppedContainers', 'cleanDockerBuilder', 'cleanDockerPrune', 'cleanAll'].map(op => [`settings.${op}`, () => ({ body: { dryRun: true } })]),
    ),
    'deploy/{refreshToken}': async () => ({ path: { refreshToken: await refreshTokenOf('application', 'applicationId') } }),
    'deploy/{hookPath}/{refreshToken}': async () => ({ path: { hookPath: 'compose', refreshToken: await refreshTokenOf('compose', 'composeId') } }),
    // A GitHub App's ping, signed with the webhook secret of the run's GitHub connection.
    'deploy/github': () => ({
      body: { zen: 'fuzz', hook: { app_id: Number(records.github.appId) } },
      headers: body => ({ 'x-github-event': 'ping', 'x-hub-signature-256': `sha256=${createHmac('sha256', records.github.webhookSecret).update(body).digest('hex')}` }),
    }),
    'server.getServerMetrics': async () => {
      const m = await monitoring();
      return { body: { url: `${m.url}/metrics`, token: m.token, dataPoints: 'all' } };
    },
    'user.getContainerMetrics': async () => {
      const m = await monitoring();
      return { body: { url: m.url, token: m.token, dataPoints: 'all', appName: await appNameOf('application', 'applicationId') } };
    },
    'notification.receiveNotification': async () => ({ body: { Token: (await monitoring()).token, ServerType: 'Remote', Timestamp: new Date().toISOString() } }),
    // A token of a new invitation (public: no credentials needed), and an invitation mailed through an email channel to the SMTP server.
    'user.getUserByToken': async () => ({
      body: { token: (await ok('organization.inviteMember', c.post('organization.inviteMember', { email: `${unique('invited')}@example.com`, role: 'member' }))).token },
    }),
    'user.sendInvitation': async () => {
      const mail = { smtpServer: '127.0.0.1', smtpPort: smtp.port, username: 'berth', password: 'mail-secret', fromAddress: 'fuzz@example.com', toAddresses: ['fuzz@example.com'], tlsMode: 'none' };
      const channel = await ok(
        'notification.createEmail',
        c.post('notification.createEmail', { name: unique('mail'), appBuildError: false, databaseBackup: false, dokployRestart: false, appDeploy: false, dockerCleanup: false, ...mail }),
      );
      return { body: { notificationId: channel.notificationId } };
    },
    // The channels: their create and test aimed at the loopback sink (and SMTP server), their update at a channel of their kind.
    ...Object.fromEntries(
      CHANNELS.flatMap(kind => {
        const settings: Record<string, unknown> = {
          webhookUrl: `${sink.url}/${kind}`,
          serverUrl: `${sink.url}/${kind}`,
          endpoint: `${sink.url}/${kind}`,
          fromAddress: 'fuzz@example.com',
          toAddresses: ['fuzz@example.com'],
          ...(kind === 'Email' ? { smtpServer: '127.0.0.1', smtpPort: smtp.port, username: 'berth', password: 'mail-secret', tlsMode: 'none' } : {}),
        };
        const own = (schema: Record<string, unknown>) => Object.fromEntries(Object.entries(settings).filter(([k]) => k in schema));
        return [
          [`notification.create${kind}`, (schema: Record<string, unknown>) => ({ body: { ...own(schema), dokployRestart: false } })],
          [`notification.test${kind}Connection`, (schema: Record<string, unknown>) => ({ body: own(schema) })],
          [
            `notification.update${kind}`,
            async () => {
              const channel = await records.channel(kind.toLowerCase());
              return { body: { notificationId: channel.notificationId, [`${kind.toLowerCase()}Id`]: channel[`${kind.toLowerCase()}Id`] } };
            },
          ],
        ];
      }),
    ),
  };

  // BERTH_FUZZ_ONLY=<regex> drives only the matching operations (to chase a finding).
  const operations = await documentOperations(c);
  if (!process.env.BERTH_FUZZ_ONLY) {
    t.ok(operations.length > 100, `${operations.length} operations in the document`);
    const names = new Set(operations.map(op => op.path));
    t.same(
      [...Object.keys(ACTS_HERE), ...Object.keys(BASES), ...Object.keys(BASE_FAILS)].filter(name => !names.has(name)),
      [],
      'ACTS_HERE, BASES and BASE_FAILS name operations of the document',
    );
  }
  t.comment(`${Object.keys(ACTS_HERE).length} operations act on the shared engine or the instance (ACTS_HERE), ${Object.keys(ACTS_HERE).filter(op => !BASES[op]).length} of them sent only refusals`);
  const idFields = idFieldsOf(operations);
  if (!process.env.BERTH_FUZZ_ONLY) {
    t.same([...idFields].filter(f => !(f in ids) && !NO_RECORD[f]).sort(), [], 'every id field of the document has a real record, or a reason in NO_RECORD why it cannot');
    t.same(
      Object.keys(NO_RECORD).filter(f => f in ids || !idFields.has(f)),
      [],
      'NO_RECORD lists only id fields the document names and no record stands behind',
    );
  }
  t.comment(
    `real records for ${[...idFields].filter(f => f in ids).length} id fields: ${[...idFields]
      .filter(f => f in ids)
      .sort()
      .join(' ')}`,
  );

  const statuses = new Map<number, number>();
  const failures: string[] = [];
  const unnamed: string[] = [];
  // The positive controls: bases that succeeded, failed as BASE_FAILS says, or neither.
  const passed: string[] = [];
  const namedFails = new Set<string>();
  const baseFailures: string[] = [];
  // Requests to an operation of ACTS_HERE sent only refusals that were not refused.
  const acted: string[] = [];
  let sent = 0;
  const record = (what: string, r: Reply, refusedOnly = false) => {
    sent++;
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    if (r.status >= 500) failures.push(`${what} → ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    else if (refusedOnly && r.status < 400) acted.push(`${what} → ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
  };
  const fakeIds = Object.fromEntries(Object.keys(ids).map(k => [k, 'fuzzmissing0000000000000000000']));
  const started = Date.now();
  let freshRecords = 0;

  // BERTH_FUZZ_TIMES=<file> keeps each operation's time (ms, slowest first): where the fuzz's minutes go.
  const times: [string, number][] = [];
  for (const op of operations) {
    const opStarted = Date.now();
    const name = op.path;
    const refusedOnly = name in ACTS_HERE && !BASES[name];
    const removes = REMOVES.test(name.split('.')[1] ?? '') && !refusedOnly;
    const props: Record<string, any> = op.schema.properties ?? {};
    const recordFields = Object.keys(props).filter(f => records.has(f));
    // A remover gets new records of its own, again after any request that may have removed them.
    const freshIds = async () => {
      freshRecords += recordFields.length;
      return { ...ids, ...Object.fromEntries(await Promise.all(recordFields.map(async f => [f, await records.fresh(f)]))) };
    };
    const opIds = refusedOnly ? fakeIds : removes ? await freshIds() : ids;
    const extra = (await BASES[name]?.(props)) ?? {};
    const baseOf = (idsOf: Record<string, string>) => ({ ...(goodValue('', op.schema, { ...records.values, ...idsOf }) as Record<string, unknown>), ...extra.body });
    let base = baseOf(opIds);
    const url = `/api/${name.replace(/\{(\w+)\}/g, (whole, param: string) => extra.path?.[param] ?? whole)}`;
    const caller: Record<string, string> = extra.token ? { authorization: `Bearer ${extra.token}` } : { 'x-api-key': admin.apiKey };
    const post = (body: string, headers: Record<string, string> = {}) => {
      // An upload's object bodies go as multipart/form-data, its base too, as the peer's clients send them.
      const value = op.upload ? JSON.parse(body) : undefined;
      if (value && typeof value === 'object' && !Array.isArray(value)) return sendUpload(c, op, value);
      return c.raw(url, { method: 'POST', headers: { ...caller, 'content-type': 'application/json', ...headers }, body });
    };
    // The positive control: the base succeeds (or fails as BASE_FAILS says); of an operation sent only refusals, it is refused.
    const baseRequest = async () => {
      const body = JSON.stringify(base);
      const reply = await post(body, extra.headers?.(body));
      record(`POST ${name} base`, reply, refusedOnly);
      const fails = BASE_FAILS[name];
      if (refusedOnly) return reply;
      if (reply.status < 300) passed.push(name);
      else if (fails && fails.status === reply.status && fails.body.test(JSON.stringify(reply.body))) namedFails.add(name);
      else baseFailures.push(`${name} → ${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`);
      return reply;
    };
    if (!removes) await baseRequest();
    const bodies: [string, (b: Record<string, unknown>) => unknown][] = [];
    for (const field of Object.keys(props)) {
      for (const [label, bad] of Object.entries(badValues)) bodies.push([`${field}=${label}`, b => ({ ...b, [field]: bad })]);
    }
    for (const [label, bad] of Object.entries(badValues)) bodies.push([`body=${label}`, () => bad]);
    bodies.push(['extra field', b => ({ ...b, 'x\u0000y': 'a\ud800' })]);
    const send = async (label: string, bodyOf: (b: Record<string, unknown>) => unknown) => {
      const r = await post(JSON.stringify(bodyOf(base)));
      record(`POST ${name} ${label}`, r, refusedOnly);
      if (removes && r.status < 300) base = baseOf(await freshIds());
      const [field, kind] = label.split('=');
      // A string the database could not hold is refused naming its field, whatever layer noticed
      // it (a 400 that is the operation's own base failure, as BASE_FAILS says, is not about the value).
      const fails = BASE_FAILS[name];
      if (
        r.status === 400 &&
        field !== 'body' &&
        ['nul', 'loneHigh', 'loneLow', 'long', 'huge', 'negHuge'].includes(kind!) &&
        !(r.body.issues ?? []).some((i: any) => i.path?.[0] === field) &&
        !(fails?.status === 400 && fails.body.test(JSON.stringify(r.body)))
      ) {
        unnamed.push(`POST ${name} ${label} → ${JSON.stringify(r.body).slice(0, 200)}`);
      }
    };
    // A remover's requests go one at a time (each may take the record the next one aims at); the
    // others' are independent of each other and go a few at a time.
    const requests: (() => Promise<void>)[] = [];
    for (const [label, bodyOf] of bodies) requests.push(() => send(label, bodyOf));
    // the tRPC form and the query string of reads
    requests.push(async () => {
      const trpc = await c.raw(`/api/trpc/${name}`, {
        method: 'POST',
        headers: { ...caller, 'content-type': 'application/json' },
        body: JSON.stringify({ json: { ...base, [Object.keys(props)[0] ?? 'x']: 'a\u0000' } }),
      });
      record(`trpc ${name} nul`, trpc, refusedOnly);
      if (op.upload) {
        // The base on the tRPC form, multipart too: it must succeed as the REST form's does.
        const form = await sendUpload(c, op, base, true);
        record(`trpc ${name} multipart`, form, refusedOnly);
        if (!refusedOnly && !BASE_FAILS[name] && form.status >= 300) baseFailures.push(`${name} (tRPC, multipart) → ${form.status} ${JSON.stringify(form.body).slice(0, 300)}`);
      }
    });
    if (op.method === 'get') {
      for (const field of Object.keys(props)) {
        for (const raw of ['%00', '%ED%A0%80', '1e20', '-1e400', 'x'.repeat(5000), '%FF', '[]', '{"a":1}']) {
          requests.push(async () => {
            const qs = Object.entries({ ...base, [field]: undefined })
              .filter(([, v]) => v !== undefined && typeof v !== 'object')
              .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
            qs.push(`${encodeURIComponent(field)}=${raw}`);
            record(`GET ${name} ${field}=${raw.slice(0, 12)}`, await c.raw(`${url}?${qs.join('&')}`, { headers: caller }), refusedOnly);
          });
        }
      }
    }
    // wrong content types and malformed bodies
    for (const [ct, body] of [
      ['text/plain', 'hello'],
      ['application/x-www-form-urlencoded', 'a=b'],
      ['application/json', '{"a":'],
      ['application/json', '\u0000'],
      ['application/octet-stream', '\u00ff\u00fe'],
    ]) {
      requests.push(async () => record(`POST ${name} ${ct}`, await c.raw(url, { method: 'POST', headers: { ...caller, 'content-type': ct! }, body }), refusedOnly));
    }
    // BERTH_FUZZ_BASES_ONLY=1 sends each operation its base alone (to chase a failing base).
    if (!process.env.BERTH_FUZZ_BASES_ONLY) await inPool(removes ? 1 : AT_ONCE, requests);
    if (removes) await baseRequest();
    const restore = RESTORE_AFTER[name];
    if (restore) t.equal((await c.post(name, restore.body)).status, 200, `${name} put back: ${restore.why}`);
    times.push([name, Date.now() - opStarted]);
  }
  if (process.env.BERTH_FUZZ_TIMES)
    writeFileSync(
      process.env.BERTH_FUZZ_TIMES,
      times
        .sort(([, a], [, b]) => b - a)
        .map(([n, ms]) => `${ms}\t${n}`)
        .join('\n'),
    );
  t.comment(`${freshRecords} records made for the operations that remove them`);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const figures = [...statuses.entries()]
    .sort(([a], [b]) => a - b)
    .map(([s, n]) => `${s}×${n}`)
    .join(', ');
  t.comment(`${operations.length} operations, ${sent} requests in ${seconds} s: ${figures}`);
  const sentOnlyRefusals = operations.filter(op => op.path in ACTS_HERE && !BASES[op.path]).length;
  t.comment(
    `positive controls: ${passed.length} of ${operations.length} operations passed their base; ${namedFails.size} failed as BASE_FAILS says, ${sentOnlyRefusals} were sent only refusals (ACTS_HERE)`,
  );
  // BERTH_FUZZ_REPORT=<file> keeps every finding, not only the first 40 the assertions show.
  if (process.env.BERTH_FUZZ_REPORT) writeFileSync(process.env.BERTH_FUZZ_REPORT, [...baseFailures, ...failures, ...unnamed, ...acted].join('\n'));
  t.same(baseFailures.sort(), [], `every base request succeeds, or BASE_FAILS says why it cannot here (${baseFailures.length} did not)`);
  t.same(
    Object.keys(BASE_FAILS).filter(op => operations.some(o => o.path === op) && !namedFails.has(op)),
    [],
    'every operation of BASE_FAILS still fails as it says (else update it)',
  );
  t.same(acted.sort().slice(0, 40), [], `every request to an operation of ACTS_HERE sent only refusals is refused (${acted.length} were not)`);
  t.same(unnamed.sort().slice(0, 40), [], `every 400 for an unstorable value names its field (${unnamed.length} did not)`);
  t.same(failures.sort().slice(0, 40), [], `no 500 among ${sent} requests (${failures.length} failed)`);
});

t.test('the inputs of the report: each a 400 naming its field, and application.search by repository works', async t => {
  const server = await startTestServer();
  t.teardown(() => server.destroy());
  const { client: c } = await signUpAdmin(server);
  const named = (r: Reply, field: string) => r.status === 400 && r.body.issues.some((i: any) => i.path[0] === field && i.message.startsWith(`${field}:`));
  t.ok(named(await c.post('project.create', { name: 'a\u0000b' }), 'name'), 'a NUL byte in a stored string');
  t.ok(named(await c.post('project.create', { name: 'a\ud800b' }), 'name'), 'an unpaired surrogate');
  t.ok(named(await c.get('project.search', { offset: '1e20' }), 'offset'), 'a huge offset');
  t.ok(named(await c.post('organization.create', { name: 'o'.repeat(300) }), 'name'), 'a name longer than its column');
  const project = await c.post('project.create', { name: 'p' });
  const app = await c.post('application.create', { name: 'a', environmentId: project.body.environment.environmentId });
  await c.post('application.saveGitProvider', { applicationId: app.body.applicationId, customGitUrl: 'https://example.com/me/shop.git', customGitBranch: 'main' });
  await c.post('application.saveDockerProvider', { applicationId: app.body.applicationId, dockerImage: 'berth-test/busybox:1' });
  const found = await c.get('application.search', { dockerImage: 'busybox' });
  t.equal(found.status, 200, 'search by a setting answers');
  t.same(
    found.body.items.map((a: any) => a.applicationId),
    [app.body.applicationId],
    'and finds the application by its image',
  );
  t.same((await c.get('application.search', { dockerImage: 'nginx' })).body.items, [], 'and not by another');
  t.equal((await c.get('application.search', { repository: 'x', owner: 'y' })).status, 200, 'repository and owner too');
});
