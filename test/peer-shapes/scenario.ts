// One walk through the operations Berth serves that need no engine run: records of every
// namespace made, read, changed and removed. The shape test drives it with Berth's own client
// (and checks each real reply against the peer's shape); the SDK test drives it with the
// published dokploy-sdk (and checks that the SDK accepts each reply).

import { readFileSync } from 'node:fs';

/** The fields where "" means "not set" (generated from the peer's document), by operation. */
export const EMPTY_STRING_FIELDS: Record<string, string[]> = JSON.parse(readFileSync(new URL('../../core/src/empty-string-fields.json', import.meta.url), 'utf8')).fields;

/** Performs one operation; answers the reply's body (throws on a non-200). */
export type Call = (op: string, input: Record<string, unknown>) => Promise<any>;

export interface ScenarioOptions {
  /** the database kinds the registry serves, with whether their create takes databaseName/databaseUser */
  databases: { kind: string; idField: string; databaseName: boolean; databaseUser: boolean; databaseRootPassword: boolean }[];
  /** a host port nothing listens on */
  port: number;
  /** makes names unique on the shared engine */
  suffix: string;
  userId: string;
  organizationId: string;
  /** Records what the walk checks of the answers' meaning (beyond their shape): the deployments' wire status and state. */
  check(ok: boolean, what: string): void;
  /** Sends an input exactly as given, for the calls whose fields a client may predate (the published SDK drops what its schema lacks); default: call. */
  raw?: Call;
}

/** The deployments of an answer (a list, or a record's nested deployments) all answer the peer's status with Berth's state beside it. */
function checkDeployments(o: ScenarioOptions, where: string, deployments: any[], expected: { status: string; state: string; startedAt?: null; errorMessage?: string }) {
  o.check(deployments.length > 0, `${where}: lists deployments`);
  for (const d of deployments) {
    o.check(
      d.status === expected.status && d.state === expected.state,
      `${where}: a ${expected.state} deployment answers status ${expected.status} and state ${expected.state} (got ${d.status}/${d.state})`,
    );
    if ('startedAt' in expected) o.check(d.startedAt === null, `${where}: a queued deployment answers startedAt null`);
    if (expected.errorMessage) o.check(d.errorMessage === expected.errorMessage, `${where}: a cancelled deployment answers errorMessage "${expected.errorMessage}"`);
  }
}

export async function walk(call: Call, o: ScenarioOptions): Promise<void> {
  const { project, environment } = await call('project.create', { name: `shapes ${o.suffix}`, description: 'peer shapes' });
  const projectId = project.projectId;
  const environmentId = environment.environmentId;
  await call('project.one', { projectId });
  await call('project.all', {});
  await call('project.update', { projectId, description: 'peer shapes, changed' });
  // A tag on the project: project.one and project.all answer it in projectTags.
  const tag = await call('tag.create', { name: `shapes ${o.suffix}`, color: '#0ea5e9' });
  await call('tag.assignToProject', { projectId, tagId: tag.tagId });
  await call('project.one', { projectId });
  await call('project.all', {});
  await call('tag.one', { tagId: tag.tagId });
  await call('tag.all', {});
  await call('tag.update', { tagId: tag.tagId, color: null });
  await call('tag.removeFromProject', { projectId, tagId: tag.tagId });
  await call('tag.bulkAssign', { projectId, tagIds: [tag.tagId] });
  await call('project.one', { projectId });

  const staging = await call('environment.create', { projectId, name: 'staging', description: 'second' });
  await call('environment.one', { environmentId: staging.environmentId });
  await call('environment.byProjectId', { projectId });
  await call('environment.update', { environmentId: staging.environmentId, description: 'second, changed' });
  const qa = await call('environment.duplicate', { environmentId: staging.environmentId, name: 'qa' });

  const app = await call('application.create', { name: 'web', environmentId, appName: `shape-web-${o.suffix}` });
  const applicationId = app.applicationId;
  await call('application.saveEnvironment', { applicationId, env: 'GREETING=hello', buildArgs: null, buildSecrets: null, createEnvFile: true });
  await call('application.saveBuildType', {
    applicationId,
    buildType: 'dockerfile',
    dockerfile: 'Dockerfile',
    dockerContextPath: null,
    dockerBuildStage: null,
    herokuVersion: null,
    railpackVersion: null,
    publishDirectory: null,
    isStaticSpa: null,
  });
  await call('application.saveGitProvider', {
    applicationId,
    customGitUrl: 'https://example.com/me/web.git',
    customGitBranch: 'main',
    customGitBuildPath: '/',
    customGitSSHKeyId: null,
    watchPaths: null,
    enableSubmodules: false,
  });
  await call('application.saveGithubProvider', {
    applicationId,
    repository: 'web',
    owner: 'me',
    branch: 'main',
    buildPath: '/',
    githubId: null,
    triggerType: 'push',
    watchPaths: null,
    enableSubmodules: false,
  });
  await call('application.saveGitlabProvider', {
    applicationId,
    gitlabRepository: 'web',
    gitlabOwner: 'me',
    gitlabBranch: 'main',
    gitlabBuildPath: '/',
    gitlabId: null,
    gitlabProjectId: null,
    gitlabPathNamespace: 'me/web',
    watchPaths: null,
    enableSubmodules: false,
  });
  await call('application.saveBitbucketProvider', {
    applicationId,
    bitbucketRepository: 'web',
    bitbucketRepositorySlug: 'web',
    bitbucketOwner: 'me',
    bitbucketBranch: 'main',
    bitbucketBuildPath: '/',
    bitbucketId: null,
    watchPaths: null,
    enableSubmodules: false,
  });
  await call('application.saveGiteaProvider', {
    applicationId,
    giteaRepository: 'web',
    giteaOwner: 'me',
    giteaBranch: 'main',
    giteaBuildPath: '/',
    giteaId: null,
    watchPaths: null,
    enableSubmodules: false,
  });
  await call('application.disconnectGitProvider', { applicationId });
  await call('application.saveDockerProvider', { applicationId, dockerImage: 'berth-test/busybox:1', username: null, password: null, registryUrl: null });
  await call('application.update', { applicationId, description: 'the web', memoryLimit: '256m' });
  await call('application.refreshToken', { applicationId });
  await call('application.markRunning', { applicationId });
  await call('application.one', { applicationId });
  await call('application.search', { q: 'web' });
  await call('application.cleanQueues', { applicationId });
  await call('application.clearDeployments', { applicationId });
  await call('application.cancelDeployment', { applicationId });
  // Runs are queued (the test servers run no jobs) and answer the peer's body. A queued deployment
  // answers the peer's status running (its enum has no queued), not started, with state queued.
  for (const run of ['stop', 'start']) {
    await call(`application.${run}`, { applicationId });
    await call('application.cleanQueues', { applicationId });
    await call('application.clearDeployments', { applicationId });
  }
  await call('application.deploy', { applicationId });
  await call('application.redeploy', { applicationId });
  await call('application.reload', { applicationId, appName: app.appName });
  const queued = { status: 'running', state: 'queued', startedAt: null } as const;
  checkDeployments(o, 'application.one', (await call('application.one', { applicationId })).deployments, queued);
  checkDeployments(o, 'deployment.all', await call('deployment.all', { applicationId }), queued);
  checkDeployments(o, 'deployment.allByType', await call('deployment.allByType', { id: applicationId, type: 'application' }), queued);
  // The queued runs as the peer's queue jobs, and joined with their application.
  const jobs = await call('deployment.queueList', {});
  o.check(jobs.length >= 3 && jobs.every((j: any) => j.state === 'waiting'), 'deployment.queueList: the queued runs are waiting jobs');
  checkDeployments(
    o,
    'deployment.allCentralized',
    (await call('deployment.allCentralized', {})).filter((d: any) => d.applicationId === applicationId),
    queued,
  );
  // Cancelled: the peer's error, with the queue's message.
  await call('application.cancelDeployment', { applicationId });
  const cancelled = { status: 'error', state: 'cancelled', errorMessage: 'Deployment cancelled' } as const;
  checkDeployments(o, 'deployment.all (cancelled)', await call('deployment.all', { applicationId }), cancelled);
  checkDeployments(o, 'application.one (cancelled)', (await call('application.one', { applicationId })).deployments, cancelled);
  await call('application.cleanQueues', { applicationId });
  await call('application.clearDeployments', { applicationId });

  const port = await call('port.create', { applicationId, publishedPort: o.port, targetPort: 80, protocol: 'tcp', publishMode: 'host' });
  await call('port.one', { portId: port.portId });
  await call('port.update', { portId: port.portId, publishedPort: o.port, targetPort: 8080, protocol: 'tcp', publishMode: 'host' });

  const mount = await call('mounts.create', { type: 'volume', volumeName: `shape-data-${o.suffix}`, mountPath: '/data', serviceId: applicationId, serviceType: 'application' });
  await call('mounts.one', { mountId: mount.mountId });
  await call('mounts.update', { mountId: mount.mountId, mountPath: '/var/data' });
  await call('mounts.listByServiceId', { serviceId: applicationId, serviceType: 'application' });
  await call('application.one', { applicationId });
  await call('deployment.all', { applicationId });
  await call('deployment.allByType', { id: applicationId, type: 'application' });
  // domains, redirects, basic-auth users (the test server runs with proxy "none": stored, not served)
  const domain = await call('domain.create', { host: `shape-${o.suffix}.example.com`, port: 80, https: false, certificateType: 'none', applicationId, domainType: 'application' });
  await call('domain.one', { domainId: domain.domainId });
  await call('domain.update', { domainId: domain.domainId, host: `shape-${o.suffix}.example.com`, path: '/app', port: 8080 });
  await call('domain.byApplicationId', { applicationId });
  // "" in every field the peer types string | null without a minimum length (the committed list):
  // accepted, stored and read back as sent (the workload's own id field names the owner).
  const blank = (op: string) => Object.fromEntries(EMPTY_STRING_FIELDS[op]!.filter(f => f !== 'applicationId' && f !== 'composeId').map(f => [f, '']));
  const blanked = await (o.raw ?? call)('domain.create', { host: `blank-${o.suffix}.example.com`, applicationId, ...blank('domain.create') });
  const readBack = await call('domain.one', { domainId: blanked.domainId });
  for (const f of Object.keys(blank('domain.create'))) o.check(readBack[f] === '', `domain.create ${f}: "" is read back as sent (got ${JSON.stringify(readBack[f])})`);
  await (o.raw ?? call)('domain.update', { domainId: blanked.domainId, host: `blank-${o.suffix}.example.com`, port: 8080, ...blank('domain.update') });
  const updatedBack = await call('domain.one', { domainId: blanked.domainId });
  for (const f of Object.keys(blank('domain.update'))) o.check(updatedBack[f] === '', `domain.update ${f}: "" is read back as sent`);
  await call('domain.delete', { domainId: blanked.domainId });
  await call('domain.generateDomain', { appName: `shape-${o.suffix}` });
  await call('domain.canGenerateTraefikMeDomains', { serverId: '' });
  // create answers true, as the peer's does: the new records are listed in application.one
  await call('redirects.create', { applicationId, regex: '^http://old\\.example\\.com/(.*)', replacement: 'http://new.example.com/${1}', permanent: false });
  await call('security.create', { applicationId, username: 'shapes', password: 'open sesame' });
  const {
    redirects: [{ redirectId }],
    security: [{ securityId }],
  } = await call('application.one', { applicationId });
  await call('redirects.one', { redirectId });
  await call('redirects.update', { redirectId, regex: '^http://old\\.example\\.com/(.*)', replacement: 'http://new.example.com/$1', permanent: true });
  await call('security.one', { securityId });
  await call('security.update', { securityId, username: 'shapes', password: 'another sesame' });
  await call('redirects.delete', { redirectId });
  await call('security.delete', { securityId });
  await call('domain.delete', { domainId: domain.domainId });
  await call('mounts.remove', { mountId: mount.mountId });
  await call('port.delete', { portId: port.portId });
  await call('application.move', { applicationId, targetEnvironmentId: staging.environmentId });

  // a compose stack's records and files (its runs are the compose suites')
  const stackFile = 'services:\n  web:\n    image: berth-test/busybox:1\n    volumes:\n      - data:/data\nvolumes:\n  data: {}\n';
  const stack = await call('compose.create', { name: 'stack', environmentId, appName: `shape-stack-${o.suffix}`, composeType: 'docker-compose', composeFile: stackFile });
  const composeId = stack.composeId;
  await call('compose.one', { composeId });
  await call('compose.update', { composeId, description: 'changed' });
  await call('compose.saveEnvironment', { composeId, env: 'A=b' });
  await call('compose.loadServices', { composeId });
  await call('compose.getConvertedCompose', { composeId });
  await call('compose.getDefaultCommand', { composeId });
  // The suffix is `suffix`, or the older variant's `prefix` (suffix wins), else 8 random hex characters, as the peer's.
  o.check((await call('compose.randomizeCompose', { composeId, suffix: 'x1' })).includes('web-x1:'), 'randomizeCompose takes suffix');
  o.check((await (o.raw ?? call)('compose.randomizeCompose', { composeId, prefix: 'p2' })).includes('web-p2:'), "randomizeCompose takes the older variant's prefix as the suffix");
  o.check((await (o.raw ?? call)('compose.randomizeCompose', { composeId, suffix: 's3', prefix: 'p3' })).includes('web-s3:'), 'randomizeCompose: suffix wins over prefix');
  o.check(/\bweb-[0-9a-f]{8}:/.test(await call('compose.randomizeCompose', { composeId })), 'randomizeCompose without a suffix: 8 hex characters');
  await call('compose.isolatedDeployment', { composeId });
  await call('compose.fetchSourceType', { composeId });
  await call('compose.refreshToken', { composeId });
  await call('compose.deploy', { composeId });
  checkDeployments(o, 'compose.one', (await call('compose.one', { composeId })).deployments, queued);
  checkDeployments(o, 'deployment.allByCompose', await call('deployment.allByCompose', { composeId }), queued);
  await call('compose.cleanQueues', { composeId });
  await call('compose.search', { q: 'stack' });
  await call('compose.move', { composeId, targetEnvironmentId: staging.environmentId });
  await call('environment.one', { environmentId: staging.environmentId });
  await call('compose.delete', { composeId, deleteVolumes: false });

  // a backup destination on the local disk (no object store needed)
  const destination = await call('destination.create', {
    name: `shapes ${o.suffix}`,
    provider: 'local',
    bucket: `shapes-${o.suffix}`,
    endpoint: '',
    region: '',
    accessKey: '',
    secretAccessKey: '',
    additionalFlags: null,
  });
  const destinationId = destination.destinationId;
  await call('destination.one', { destinationId });
  await call('destination.all', {});
  await call('destination.update', {
    destinationId,
    name: `shapes ${o.suffix} changed`,
    provider: 'local',
    bucket: `shapes-${o.suffix}`,
    endpoint: '',
    region: '',
    accessKey: '',
    secretAccessKey: '',
    additionalFlags: null,
  });

  for (const db of o.databases) {
    const created = await call(`${db.kind}.create`, {
      name: `${db.kind} shapes`,
      appName: `shape-${db.kind}-${o.suffix}`,
      environmentId,
      databasePassword: 'Secret_pw-1',
      dockerImage: 'berth-test/redis:1',
      ...(db.databaseName ? { databaseName: 'app' } : {}),
      ...(db.databaseUser ? { databaseUser: 'appuser' } : {}),
      ...(db.databaseRootPassword ? { databaseRootPassword: 'Root_pw-1' } : {}),
    });
    const id = { [db.idField]: created[db.idField] };
    await call(`${db.kind}.one`, id);
    await call(`${db.kind}.update`, { ...id, description: 'changed' });
    await call(`${db.kind}.saveEnvironment`, { ...id, env: 'TZ=UTC' });
    await call(`${db.kind}.saveExternalPort`, { ...id, externalPort: null });
    await call(`${db.kind}.changeStatus`, { ...id, applicationStatus: 'idle' });
    await call(`${db.kind}.move`, { ...id, targetEnvironmentId: staging.environmentId });
    await call(`${db.kind}.search`, { q: 'shapes' });
    for (const run of ['deploy', 'stop', 'start', 'rebuild']) await call(`${db.kind}.${run}`, id);
    await call(`${db.kind}.reload`, { ...id, appName: created.appName });
    // The peer's database `one` nests deployments only under its backups, and its allByType takes no
    // database kind: the organization's list shows the database's runs.
    checkDeployments(
      o,
      `deployment.allCentralized (${db.kind})`,
      (await call('deployment.allCentralized', {})).filter((d: any) => d[db.idField] === created[db.idField]),
      queued,
    );
    if (db === o.databases[0]) {
      await call('backup.create', { schedule: '0 3 * * *', prefix: 'shapes', destinationId, database: 'app', databaseType: db.kind, ...id });
      const { backups } = await call(`${db.kind}.one`, id);
      const backupId = backups[0].backupId;
      await call('backup.one', { backupId });
      await call('backup.update', { backupId, schedule: '0 4 * * *', prefix: 'shapes', destinationId, database: 'app', databaseType: db.kind, serviceName: null, enabled: false, keepLatestCount: 3 });
      await call('backup.listBackupFiles', { destinationId, search: '' });
      await call('backup.remove', { backupId });
    }
    await call(`${db.kind}.remove`, id);
  }

  await call('destination.remove', { destinationId });

  const generated = await call('sshKey.generate', { type: 'ed25519' });
  await call('sshKey.create', { name: `shapes ${o.suffix}`, description: null, privateKey: generated.privateKey, publicKey: generated.publicKey, organizationId: o.organizationId });
  const keys = await call('sshKey.all', {});
  const key = keys.find((k: { name: string }) => k.name === `shapes ${o.suffix}`);
  await call('sshKey.one', { sshKeyId: key.sshKeyId });
  await call('sshKey.update', { sshKeyId: key.sshKeyId, description: 'changed' });
  await call('sshKey.remove', { sshKeyId: key.sshKeyId });

  // Channels: a sink nobody listens on is fine, nothing is sent (no event, no test operation).
  const toggles = { appBuildError: true, databaseBackup: false, dokployRestart: false, appDeploy: true, dockerCleanup: false, volumeBackup: false, dokployBackup: false, serverThreshold: false };
  const slack = await call('notification.createSlack', { name: `shapes ${o.suffix}`, ...toggles, webhookUrl: `http://127.0.0.1:${o.port}/slack/T0/B0/x`, channel: '#ops' });
  await call('notification.createEmail', {
    name: `shapes mail ${o.suffix}`,
    ...toggles,
    smtpServer: '127.0.0.1',
    smtpPort: o.port,
    username: 'u',
    password: 'p',
    fromAddress: 'berth@example.com',
    toAddresses: ['ops@example.com'],
  });
  await call('notification.one', { notificationId: slack.notificationId });
  await call('notification.all', {});
  await call('notification.getEmailProviders', {});
  await call('notification.updateSlack', { notificationId: slack.notificationId, slackId: slack.slackId, name: `shapes ${o.suffix} changed` });
  await call('notification.deliveries', { notificationId: slack.notificationId });
  for (const n of await call('notification.all', {})) await call('notification.remove', { notificationId: n.notificationId });

  await call('user.get', {});
  await call('user.one', { userId: o.userId });
  await call('user.haveRootAccess', {});
  await call('organization.all', {});
  const organization = await call('organization.create', { name: `shapes ${o.suffix}` });
  await call('organization.one', { organizationId: organization.id ?? organization.organizationId });
  await call('organization.update', { organizationId: organization.id ?? organization.organizationId, name: `shapes ${o.suffix} changed` });
  await call('organization.active', {});
  await call('organization.delete', { organizationId: organization.id ?? organization.organizationId });

  await call('application.delete', { applicationId });
  await call('environment.remove', { environmentId: qa.environmentId });
  await call('environment.remove', { environmentId: staging.environmentId });
  await call('tag.remove', { tagId: tag.tagId });
  await call('project.remove', { projectId });
}

/** The scenario's database kinds, with the create fields their schema takes. */
export function scenarioDatabases(doc: any, kinds: { kind: string; idField: string }[]): ScenarioOptions['databases'] {
  // The database kinds: the ones with an external port of their own.
  return kinds
    .filter(k => doc.paths[`/${k.kind}.create`] && doc.paths[`/${k.kind}.saveExternalPort`])
    .map(k => {
      const props = doc.paths[`/${k.kind}.create`].post.requestBody.content['application/json'].schema.properties;
      return { kind: k.kind, idField: k.idField, databaseName: 'databaseName' in props, databaseUser: 'databaseUser' in props, databaseRootPassword: 'databaseRootPassword' in props };
    });
}

export const uniqueSuffix = () => Math.random().toString(36).slice(2, 8);
