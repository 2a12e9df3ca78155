// What the shape test accepts beyond the peer's shapes, each with its reason. Everything not
// listed here that differs from test/peer-shapes/reference.generated.json fails the test.
import { readFileSync } from 'node:fs';
import type { ShapeReference } from './shape.ts';

/** The peer's operations the reference knows no answer shape for (its `unknown`): a namespace's whole list is derived from it, never copied. */
const peerWithoutShape = (namespace: string) =>
  (JSON.parse(readFileSync(new URL('./reference.generated.json', import.meta.url), 'utf8')) as ShapeReference).unknown.filter(op => op.startsWith(`${namespace}.`));

/** Fields Berth answers beyond the peer's, by name (anywhere in an answer), with why. */
export const ALLOWED_EXTRA: Record<string, string> = {
  webhookSecret: 'applications and compose stacks: the secret their push hook deliveries must be signed with (write-only: always null)',
  hasWebhookSecret: 'applications and compose stacks: whether deliveries to their push hook must be signed',
  webhookRegistration:
    "applications and compose stacks (`one`): the push webhook Berth registers on the linked repository — where, or why none was and how to add one (the peer's users learn it from its UI)",
  previewDomainTemplate: "applications: Berth's template of a preview's host (${prNumber}, ${appName}, ${branch}), in place of previewWildcard's label",
  organizationId: 'Berth records carry their organization (workloads, deployments): confinement is checked on the record itself',
  internalConnectionUrl: 'database `one`: the URL other workloads reach the database at',
  externalConnectionUrl: 'database `one`: the URL from outside through the external port (null without one)',
  targetType: 'deployments: what the deployment belongs to (any registered kind or target)',
  targetId: 'deployments: the id of what it belongs to',
  action: 'deployments: what the job does (deploy, start, stop, ...)',
  startedAt: 'deployments: when the job started running (the peer has only createdAt); null while queued',
  state: "deployments: Berth's own state (queued, running, done, error, cancelled) beside the peer's status (running, done, error); restores answer it too",
  finishedAt: 'deployments: when the job ended (the peer has only createdAt)',
  backups: "database `one`: every kind lists its backups (the peer's redis has no such relation)",
  invitationId: 'invitations: the id also under invitationId (as organization.removeInvitation takes it)',
  defaultRole: 'organizations: a column of the peer at v0.30.2 that the older dokploy-sdk schemas (organization.all) do not list',
  isDefault: 'environments: a column of the peer at v0.30.2 that the older dokploy-sdk schemas do not list',
  restoreId: 'deployments: the restore a deployment ran (Berth queues a restore as a deployment; the peer streams it)',
  encrypted: 'backups: whether Berth encrypts its files (the peer has no encryption of its own)',
  lastRunAt: 'backups: when the schedule last ran (Berth checks missed windows)',
  lastError: 'backups: why the last run failed; null after a success',
  missedWindows: 'backups: scheduled windows that passed without a run',
  lastMissedAt: 'backups: when a window was last missed',
  hostKeyFingerprint: "servers (server.*, and a workload's joined server): the host key Berth pinned (SHA256:…), null until the first connection",
};

/** Operations where a deployment carries its workload under the kind's name for every registered kind (the peer: application and compose), with why. */
export const KIND_RELATIONS_IN: Record<string, string> = {
  'deployment.allCentralized': "Berth deploys every kind: a database's deployment joins its database under the kind's name, as an application's joins its application",
};

/** Berth's deployments answer the id field of every registered kind (`postgresId`, ...), as the older peer did. */
export const isKindIdField = (name: string, kindIdFields: string[]) => kindIdFields.includes(name);

/** Fields Berth answers beyond the peer's in one operation only (anywhere in its answer), with why. */
export const ALLOWED_EXTRA_IN: Record<string, { fields: string[]; reason: string }> = {
  'previewDeployment.all': { fields: ['deployments', 'domain'], reason: "the peer's query joins each preview's deployments and domain; the SDK's type shows only the row" },
  'previewDeployment.one': { fields: ['deployments', 'domain'], reason: 'as previewDeployment.all: its deployments and its domain joined' },
  'environment.one': {
    fields: ['createdAt', 'appName'],
    reason: "environment reads share one shape: the environment's createdAt, and each workload's appName as the peer's byProjectId and project.one list it",
  },
  'environment.byProjectId': { fields: ['createdAt', 'env', 'projectId'], reason: 'environment reads answer every field of the environment' },
  'project.all': {
    fields: ['createdAt', 'description', 'env', 'projectId', 'name', 'appName', 'server', 'serverId', 'applicationStatus', 'icon'],
    reason: 'project.all lists each environment and workload as project.one does (the peer lists fewer of their fields here)',
  },
  'compose.deploy': { fields: ['deploymentId'], reason: 'the queued deployment, to follow with deployment.one' },
  'compose.redeploy': { fields: ['deploymentId'], reason: 'the queued deployment, to follow with deployment.one' },
  'organization.inviteMember': { fields: ['token'], reason: "the invitation's token, shown once (the peer has none: its link carries the invitation's id; user.sendInvitation mails Berth's)" },
  'user.get': { fields: ['createdAt', 'updatedAt'], reason: 'Berth answers the same user fields in user.get as in user.one' },
  'project.duplicate': { fields: ['environments', 'projectTags'], reason: 'Berth answers the new project with its copied environments, as project.one does (the peer answers the row)' },
  ...Object.fromEntries(
    ['all', 'create', 'one', 'update'].map(p => [
      `certificates.${p}`,
      { fields: ['expiresAt', 'subjects', 'createdAt'], reason: 'Berth reads the leaf: when it expires and the names it covers; and when the record was made' },
    ]),
  ),
  'domain.one': { fields: ['preflight'], reason: "Berth's own: why the domain would not answer (DNS, the proxy's port, the workload, the certificate)" },
  'domain.validateDomain': { fields: ['preflight', 'isCloudflare'], reason: "Berth's preflight of the host, and whether it resolves to a CDN in front (always false: not detected)" },
  'backup.listBackupFiles': {
    fields: ['ModTime', 'backupId', 'checksum', 'verification', 'verified'],
    reason: 'what Berth recorded of each file it wrote: when, by which backup, its checksum and whether it was verified',
  },
  'user.createApiKey': { fields: ['apiKeyId', 'userId', 'lastUsedAt'], reason: 'Berth answers the new key as user.getApiKeys lists it too: its id under apiKeyId, its user, when it was last used' },
  'backup.one': {
    fields: ['redis', 'args', 'ulimitsSwarm'],
    reason: "Berth backs redis up too: a redis backup joins its database's record under redis, as the other kinds; a libsql record has the kit's args and ulimitsSwarm (below)",
  },
  ...Object.fromEntries(
    [...['one', 'changeStatus', 'remove', 'saveExternalPorts', 'deploy', 'start', 'stop', 'move'].map(p => `libsql.${p}`), 'volumeBackups.one'].map(op => [
      op,
      {
        fields: ['args', 'ulimitsSwarm'],
        reason: "every database record has the kit's Swarm settings: a libsql record too has args and ulimitsSwarm, which the peer's libsql table lacks (its other kinds have them)",
      },
    ]),
  ),
  'deployment.allCentralized': {
    fields: ['description', 'createdAt', 'serverId', 'applicationStatus', 'composeStatus', 'buildServer'],
    reason:
      "each workload is joined as environment reads list it (its description, createdAt, serverId and status besides the peer's name, appName and icon), and with its build server (null) whatever its kind",
  },
  ...Object.fromEntries(
    [
      'one',
      'all',
      'remove',
      'getEmailProviders',
      ...['Slack', 'Telegram', 'Discord', 'Email', 'Resend', 'Gotify', 'Ntfy', 'Mattermost', 'Custom', 'Lark', 'Teams', 'Pushover'].flatMap(s => [`create${s}`, `update${s}`]),
    ].map(p => [
      `notification.${p}`,
      {
        fields: ['platformRestart', 'appHealth', 'tlsMode', 'signingSecret'],
        reason:
          "Berth's: the older variant's name of dokployRestart (the same value), the appHealth toggle, email's tlsMode, and a signed channel's secret answered once by the create or rotation that made it",
      },
    ]),
  ),
  ...Object.fromEntries(
    [
      'gitProvider.getAll',
      'github.one',
      'github.githubProviders',
      'gitlab.one',
      'gitlab.gitlabProviders',
      'bitbucket.one',
      'bitbucket.bitbucketProviders',
      'bitbucket.update',
      'gitea.one',
      'gitea.giteaProviders',
    ].map(op => [
      op,
      {
        fields: ['sharedWithOrganization', 'githubUrl', 'isOwner', 'isConfigured', 'gitlabInternalUrl', 'bitbucketEmail', 'apiToken', 'giteaInternalUrl', 'giteaUsername', 'organizationName'],
        reason:
          "the peer at v0.30.2 answers them (its git_provider.sharedWithOrganization, github.githubUrl, gitlab.gitlabInternalUrl, bitbucket.bitbucketEmail and bitbucket.apiToken columns — the token always null in Berth —, gitea.giteaInternalUrl, giteaUsername and organizationName, getAll's isOwner and isConfigured); the older dokploy-sdk schemas the reference comes from do not list them",
      },
    ]),
  ),
  'backup.remove': { fields: ['destination'], reason: 'Berth answers the removed backup as backup.one does (the peer answers the row)' },
};

/** The operations that answer a record with its backups (the peer's findXById): the databases', and a compose stack's one and delete. */
const BACKUP_LISTING_OPS = [
  ...['postgres', 'mysql', 'mariadb', 'mongo', 'redis'].flatMap(kind => ['one', 'changeStatus', 'remove', 'saveExternalPort', 'deploy', 'start', 'stop'].map(p => `${kind}.${p}`)),
  ...['one', 'changeStatus', 'remove', 'saveExternalPorts', 'deploy', 'start', 'stop'].map(p => `libsql.${p}`),
  'compose.one',
  'compose.delete',
];

/** Fields of the peer Berth does not answer, by `operation field` (or `* field`), with why. */
export const ALLOWED_MISSING: Record<string, string> = {
  '* privateKey': 'an SSH private key is never answered by Berth (secrets are sealed; the peer answers it in sshKey.one/all)',
  '* inviterId': "organization.*'s invitations leave out who sent them (user.getInvitations and user.getUserByToken answer it)",
  '* teamId': "teams are not served (the peer's members and invitations may belong to one)",
  // user.one: the peer's full user row carries its admin panel's and licensing fields.
  ...Object.fromEntries(
    [
      'banned',
      'banReason',
      'banExpires',
      'bookmarkedTemplates',
      'createdAt2',
      'emailVerified',
      'enableEnterpriseFeatures',
      'enablePaidFeatures',
      'expirationDate',
      'isRegistered',
      'isValidEnterpriseLicense',
      'licenseKey',
      'role',
      'trustedOrigins',
    ].flatMap(f => ['user.one', 'user.all', 'user.update'].map(op => [`${op} ${f}`, "the peer's admin-panel, template and licensing fields of a user are not served"])),
  ),
  // backups: by design
  ...Object.fromEntries(
    ['backup.one', 'backup.remove', ...BACKUP_LISTING_OPS].map(op => [
      `${op} includeEncryptionKey`,
      "Berth keeps a backup's key sealed in Berth, never beside its files (the peer's flag says whether to store it there)",
    ]),
  ),
};

/**
 * Operations whose answer differs from the peer's by design, with why. Their answers are
 * still checked against Berth's own declared schema by the transport; the shape test reports
 * the differences as comments.
 */
export const DEVIATIONS: Record<string, string> = {
  'user.generateToken': 'the peer answers the placeholder string "token"; Berth answers a real bearer token ({token})',
  'settings.getWebServerSettings': "Berth's own settings: its proxy, ports, server address and generated-domain base (the peer answers its web-server settings row: cleanup, SSO, whitelabeling, ...)",
  'settings.assignDomainServer': "answers Berth's own settings, as settings.getWebServerSettings does",
};

/** Operations Berth serves that the peer (v0.30.2) does not have, with why. */
export const BERTH_ONLY: Record<string, string> = {
  ...Object.fromEntries(
    [
      'createAdmin',
      'createUser',
      'login',
      'get',
      'logout',
      'update',
      'generateToken',
      'one',
      'updateByAdmin',
      'generate2FASecret',
      'verify2FASetup',
      'verifyLogin2FA',
      'disable2FA',
      'verifyToken',
    ].map(p => [`auth.${p}`, "the older API variant's accounts and sessions (bearer tokens)"]),
  ),
  'application.saveGitProdiver': "the older variant's spelling of saveGitProvider",
  'user.getApiKeys': "lists the caller's API keys (the peer lists them inside user.get)",
  'deployment.one': 'one deployment record, for following a queued run',
  'registry.enableSelfHostedRegistry':
    "the spec's older variant's operation (the peer's current router no longer has it): answers the selfHosted registry it stores, as registry.one does (docs/registries.md#self-hosted-registry)",
  'compose.getIgnoredKeys': "what the stack's compose type ignores or refuses in its file, before anything runs (the peer says nothing)",
  'auth.generateRecoveryCodes': 'one-time recovery codes for two-factor login (the peer has none)',
  'backup.manualBackupRedis': 'Berth backs redis up too (the peer has no redis backups)',
  'backup.restoreBackup': 'queues a restore as a deployment and answers its id (the peer streams it through a subscription, restoreBackupWithLogs)',
  'notification.deliveries': "the delivery log of a channel: each event sent through it, its tries, state and the provider's answer (the peer keeps none)",
  'github.setupState': "the GitHub App manifest flow's state, sealed and bound to the caller's organization (the peer's client writes an unsigned one)",
  'github.installState':
    "the GitHub App's installation page with a state sealed and bound to the caller and the connection (the peer's client writes gh_setup:<githubId> unsigned, which Berth refuses)",
  'gitlab.authorization': "GitLab's authorization page with a state sealed and bound to the caller's organization and the connection (the peer's client builds the URL with no state)",
  // The delivery logs the deploy-hook plugin gives each kind that deploys from pushes.
  ...Object.fromEntries(['application', 'compose'].map(k => [`${k}.webhookDeliveries`, 'the deliveries its push hook received and why each deployed or not (the peer keeps none)'])), // kind-names: the peer's namespaces
  'deploy/{refreshToken}': "the peer's push hook (an API route outside its routers, so no reference): answers its own status codes, 202 queued, 200 with the reason, 401",
  'deploy/{hookPath}/{refreshToken}': "the peer's compose push hook (/api/deploy/compose/{refreshToken}, outside its routers): as deploy/{refreshToken}",
  'deploy/github': "the peer's GitHub App hook (/api/deploy/github, outside its routers): as deploy/{refreshToken}, with what each workload deploying the repository did",
  'volumeBackups.restore': 'queues a volume restore as a deployment and answers its id (the peer streams it through a subscription, restoreVolumeBackupWithLogs, with the same input)',
  ...Object.fromEntries(
    ['getProducts', 'createCheckoutSession', 'createCustomerPortalSession', 'canCreateMoreServers'].map(op => [
      `billing.${op}`,
      "the spec's name of the peer's stripe.* router: the same procedure as stripe." + op,
    ]),
  ),
  'settings.getPlatformVersion': "the older API variant's name of getDokployVersion: Berth's version (plugins/platform)",
  'settings.checkAndUpdateImage': "the older API variant's update check: answers as getUpdateData, nothing pulled (plugins/platform)",
  'cluster.joinServer':
    'Berth joins a server to a swarm itself, over its own connection, so that no join token is ever answered (the peer answers the token in addWorker/addManager for the user to run)',
  'rollback.one': 'one kept release with its context (the peer answers them only inside deployment.allByType)',
};

/**
 * Served operations of the peer whose answer the reference does not know yet (their routers
 * answer joins not derived in the generator), with why. The test fails if this list is not
 * exactly the served operations without a reference, so it only shrinks.
 */
export const NO_REFERENCE: Record<string, string> = {
  'previewDeployment.redeploy': 'the peer answers true once its job is queued (no row); so does Berth, with the deployment in its header (plugins/preview/test/previews.test.ts)',
  'application.dropDeployment':
    'the peer answers true once the archive is unpacked and its job queued (no row); so does Berth, with the deployment in its header (plugins/application/test/drop.test.ts)',
  'server.getServerMetrics': "the peer answers its agent's JSON (not a row of its schema); Berth answers the agent's shape from its own store (plugins/monitoring/test/monitoring.test.ts)",
  'user.getContainerMetrics': "the peer answers its agent's JSON (not a row of its schema); Berth answers the agent's shape from its own store (plugins/monitoring/test/monitoring.test.ts)",
  // The peer's user.* reads of one's own account and its invitations: the generator has no recipe for them
  // (literals, counts, and joins it does not derive); Berth's answers are declared in plugins/user,
  // plugins/organization and plugins/monitoring, and checked by their tests named here.
  'user.session': 'the peer answers the literal {user: {id}, session: {activeOrganizationId}} or null (plugins/user/test/account.test.ts)',
  'user.checkUserOrganizations': "the peer answers a count of the user's memberships (plugins/user/test/account.test.ts)",
  'user.getServerMetrics': "the peer answers the caller's user row; Berth answers its account as user.one does (plugins/user/test/account.test.ts)",
  'user.getBackups':
    "the peer answers the caller's user row with its backups and API keys; Berth lists the organization's web-server backups, and the keys as user.get does (plugins/user/test/account.test.ts)",
  'user.getBookmarkedTemplates': "the peer answers its user row's text array (plugins/user/test/account.test.ts)",
  'user.toggleTemplateBookmark': 'the peer answers the literal {isBookmarked} (plugins/user/test/account.test.ts)',
  'user.getInvitations': 'the peer answers its invitation rows joined with their organization (plugins/organization/test/invitations.test.ts)',
  'user.getUserByToken': 'the peer answers a literal made of its invitation row (plugins/organization/test/invitations.test.ts)',
  'user.sendInvitation': "the peer answers the invitation's link, a string (plugins/organization/test/invitations.test.ts)",
  'user.getMetricsToken': 'the peer answers the literal {serverIp, enabledFeatures, metricsConfig} (plugins/monitoring/test/metrics-token.test.ts)',
  'server.setupMonitoring': 'the peer answers the server row after its agent is set up; Berth answers the server record as server.update does',
  'settings.cleanMonitoring': 'the peer answers true (no row)',
  'admin.setupMonitoring': 'the peer answers its web-server settings row, which Berth does not keep; Berth answers serverIp and the stored metricsConfig (plugins/monitoring/test/monitoring.test.ts)',
  'gitProvider.toggleShare': "the peer answers its update's result (the git_provider row), which the generator does not derive",
  'github.getGithubRepositories': "the peer answers GitHub's own repository objects (octokit), not a row of its schema",
  'github.getGithubBranches': "the peer answers GitHub's own branch objects (octokit), not a row of its schema",
  // The generator has no recipe for ai.* yet (its routers answer the `ai` table with its key, a
  // drizzle insert result, the AI SDK's model list); Berth's answers are documented in
  // docs/ai-and-billing.md and checked by plugins/ai/test/ai-api.test.ts.
  ...Object.fromEntries(
    ['create', 'delete', 'deploy', 'get', 'getAll', 'getModels', 'one', 'suggest', 'testConnection', 'update'].map(op => [
      `ai.${op}`,
      'no reference recipe for ai.* yet (the peer answers its table with the key, which Berth never answers)',
    ]),
  ),
  ...Object.fromEntries(
    ['analyzeLogs', 'getEnabledProviders', 'getCustomProviders', 'saveCustomProviders'].map(op => [
      `ai.${op}`,
      "the peer answers literals the generator does not derive ({ analysis }, a mapping of its ai rows to { aiId, name, model }, its organization metadata's aiProviders): Berth declares them in plugins/ai/src/schemas.ts, checked by plugins/ai/test/ai-logs-and-providers.test.ts",
    ]),
  ),
  ...Object.fromEntries(
    ['all', 'allForPermissions', 'buildServers', 'count', 'create', 'one', 'remove', 'update', 'updateBuildsConcurrency', 'withSSHKey'].map(p => [
      `server.${p}`,
      "the generator does not derive the server router's answers (its row with hostKeyFingerprint added, totalSum in all, deployments and the key in one and remove): Berth declares them from the peer's server table",
    ]),
  ),
  // Every docker.* operation of the peer (none has a shape): the test fails if Berth does not serve one.
  ...Object.fromEntries(
    peerWithoutShape('docker').map(op => [
      op,
      "the peer answers rows split from Docker CLI lines (docker ps, service ps, stack ps), `docker inspect`'s object, nothing, or a literal { success, message }: Berth declares them in plugins/docker/src/schemas.ts, checked by plugins/docker/test/docker.test.ts",
    ]),
  ),
  'swarm.getContainerStats':
    "the peer answers `docker stats --no-stream`'s JSON lines (not a row of its schema): Berth declares its strings in plugins/docker/src/stats.ts, checked by plugins/docker/test/docker.test.ts",
  ...Object.fromEntries(
    [
      'checkGPUStatus',
      'setupGPU',
      'checkInfrastructureHealth',
      'cleanAllDeploymentQueue',
      'cleanRedis',
      'reloadRedis',
      'getDockerDiskUsage',
      'getDokployCloudIps',
      'getLogCleanupStatus',
      'updateLogCleanup',
      'getReleaseTag',
      'haveActivateRequests',
      'toggleRequests',
      'health',
      'isCloud',
      'isUserSubscribed',
      'updateBuildsConcurrency',
      'updateRemoteServersOnly',
    ].map(op => [
      `settings.${op}`,
      'the peer answers literals, command output or service status (no row of its schema), which the generator has no recipe for: Berth declares them in plugins/platform, plugins/cleanup, plugins/deployment and plugins/domain (docs/host-care.md, docs/api.md), checked by their tests',
    ]),
  ),
  ...Object.fromEntries(
    ['all', 'one', 'create', 'remove', 'inspect', 'import', 'recreate', 'networksToSync'].map(op => [
      `network.${op}`,
      "the generator has no recipe for network.* (the peer's network row, Docker's own inspect object, literal {imported, errors} and {importable, missing}): Berth declares them in plugins/network/src/schemas.ts, checked by plugins/network/test/network.test.ts",
    ]),
  ),
  ...Object.fromEntries(
    ['create', 'update', 'delete', 'list', 'one', 'runManually'].map(op => [
      `schedule.${op}`,
      "the generator has no recipe for schedule.* (the peer's schedule row, its joins, true, runManually's { status, deploymentId, logPath }): Berth declares them in plugins/schedule/src/schemas.ts (docs/schedules.md), checked by plugins/schedule/test/schedule.test.ts",
    ]),
  ),
  ...Object.fromEntries(
    ['create', 'one', 'byEntityId', 'update', 'delete', 'toggleEnabled', 'ensureRepo', 'readRepoDirectories', 'readRepoFile', 'saveFileAsPatch', 'markFileForDeletion', 'cleanPatchRepos'].map(op => [
      `patch.${op}`,
      "the generator has no recipe for patch.* (the peer's patch row, the checkout's path, a tree of { name, path, type, children }, a file's text, true): Berth declares them in plugins/patch/src/schemas.ts (docs/deploying.md#file-patches), checked by plugins/patch/test/patch.test.ts",
    ]),
  ),
  // The peer's stripe.* answers Stripe's own objects (products, subscriptions, sessions) and a
  // boolean; Berth's are declared in plugins/billing/src/schemas.ts and checked by
  // plugins/billing/test/billing.test.ts.
  ...Object.fromEntries(
    ['getProducts', 'createCheckoutSession', 'createCustomerPortalSession', 'canCreateMoreServers'].map(op => [`stripe.${op}`, "the peer answers Stripe's own objects, not a row of its schema"]),
  ),
  ...Object.fromEntries(
    ['getCurrentPlan', 'getInvoices', 'upgradeSubscription', 'updateInvoiceNotifications'].map(op => [
      `stripe.${op}`,
      "the peer answers literals the generator does not derive (a plan's name or null, a mapping of Stripe's invoice objects, { ok: true }): Berth declares them in plugins/billing/src/schemas.ts, checked by plugins/billing/test/stripe-peer.test.ts",
    ]),
  ),
  ...Object.fromEntries(
    ['cleanAll', 'cleanDockerBuilder', 'cleanDockerPrune', 'cleanStoppedContainers', 'cleanUnusedImages', 'cleanUnusedVolumes', 'updateDockerCleanup'].map(op => [
      `settings.${op}`,
      "the generator does not derive the settings router's literal answers (true; nothing for cleanDockerBuilder; cleanAll's {status, message}): Berth declares them, each or the dryRun report (docs/host-care.md)",
    ]),
  ),
  ...Object.fromEntries(
    ['setup', 'validate', 'security', 'publicIp', 'getServerTime', 'getDefaultCommand', 'setupMonitoring', 'getServerMetrics'].map(p => [
      `server.${p}`,
      'the peer declares these answers as TypeScript casts or none (setup answers nothing, validate and security cast ssh output), which the generator does not derive: Berth declares them from its router (docs/servers.md#setup-and-audit)',
    ]),
  ),
  ...Object.fromEntries(
    ['all', 'create', 'one', 'remove', 'testRegistry', 'testRegistryById', 'update'].map(op => [
      `registry.${op}`,
      'the generator has no recipe for registry.* (the peer answers its registry row with the password, update and tests true): Berth declares the row without the password (docs/registries.md) and plugins/registry/test checks the answers',
    ]),
  ),
  'gitlab.create': "the peer answers nothing (its transaction's result is not returned); Berth answers the new record as gitlab.one does, its secret and tokens null",
  'gitlab.getGitlabRepositories': "the peer answers a mapping of GitLab's project objects ({ id, name, url, owner: { username } }), not a row of its schema",
  'gitlab.getGitlabBranches': "the peer answers GitLab's own branch objects, not a row of its schema",
  'gitea.getGiteaRepositories': "the peer answers a mapping of Gitea's repository objects ({ id, name, url: full_name, owner: { username } }), not a row of its schema",
  'gitea.getGiteaBranches': "the peer answers a mapping of Gitea's branch objects ({ id, name, commit: { id } }), not a row of its schema",
  'bitbucket.create': "the peer answers its create's result, which the generator does not derive; Berth answers the new record as bitbucket.one does, its API token and app password null",
  'bitbucket.getBitbucketRepositories': "the peer answers a mapping of Bitbucket's repository objects ({ name, url, slug, owner: { username } }), not a row of its schema",
  'bitbucket.getBitbucketBranches': "the peer answers a mapping of Bitbucket's branch objects ({ name, commit: { sha } }), not a row of its schema",
  // The peer answers the Docker CLI's JSON lines and the engine's node objects: plugins/cluster/test/cluster.test.ts compares Berth's with the CLI's on a real swarm.
  'swarm.getNodes': "the peer answers `docker node ls --format '{{json .}}'` lines, not a row of its schema",
  'swarm.getNodeInfo': "the peer answers the engine's node object (`docker node inspect`), not a row of its schema",
  'swarm.getNodeApps': "the peer answers `docker service ls --format '{{json .}}'` lines (Berth adds nodes to each), not a row of its schema",
  'cluster.getNodes': "the peer answers the engine's node objects (dockerode listNodes), not a row of its schema",
  'cluster.addWorker': 'the peer answers { command, version } (its join command, the token in it: Berth answers a placeholder)',
  'cluster.addManager': 'the peer answers { command, version } (its join command, the token in it: Berth answers a placeholder)',
  'cluster.removeWorker': 'the peer answers true; Berth answers { removed: true, nodeId, hostname, moved } (where each drained task went)',
  'settings.getIp': 'the peer answers its settings row\'s serverIp (a string, "" when unset): Berth answers serverIp, else the default route\'s address (plugins/domain/test/server-ip.test.ts)',
  'settings.updateServerIp': 'the peer answers its web-server settings row, which Berth does not keep; Berth answers its own settings, as getWebServerSettings does',
  ...Object.fromEntries(['saveSSHPrivateKey', 'cleanSSHPrivateKey'].map(op => [`settings.${op}`, 'the peer answers true (no row)'])),
  'settings.getDokployVersion': "the peer answers its package's version (a string); Berth answers its own (plugins/platform/test/platform.test.ts)",
  'settings.getUpdateData': 'the peer answers { latestVersion, updateAvailable } (an interface the generator does not derive); Berth adds currentVersion and message',
  'settings.updateServer': 'the peer answers true after it replaced its image; Berth always refuses (409) with the upgrade steps',
  'settings.reloadServer': 'the peer answers true (no row) once its service update is asked; so does Berth once its restart is under way (test/reload-server.test.ts)',
  // Every licenseKey.* and whitelabeling.* operation of the peer (none has a shape): the test fails if Berth does not serve one.
  ...Object.fromEntries(
    peerWithoutShape('licenseKey').map(op => [
      op,
      'the peer answers literals ({ success: true }, true, a boolean, { enableEnterpriseFeatures, licenseKey }) the generator does not derive: Berth declares them in plugins/license-key/src/schemas.ts, checked by plugins/license-key/test/license-key.test.ts',
    ]),
  ),
  ...Object.fromEntries(
    peerWithoutShape('forwardAuth').map(op => [
      op,
      'the peer answers its forward-auth settings, its SSO providers, { ok: true } or a literal { callbackUrl } / { enabled }, which the generator does not derive: Berth declares them in plugins/forward-auth/src/schemas.ts (status adds role), checked by plugins/forward-auth/test/forward-auth.test.ts',
    ]),
  ),
  ...Object.fromEntries(
    peerWithoutShape('sso').map(op => [
      op,
      "the peer answers rows of its sso_provider table picked by column (oidcConfig and samlConfig as JSON text), its owner's trustedOrigins, a boolean or { success: true }, which the generator does not derive: Berth declares them in plugins/sso/src/schemas.ts (the secrets in the configuration masked), checked by plugins/sso/test/sso.test.ts",
    ]),
  ),
  'settings.updateEnforceSSO': 'the peer answers true once its web-server settings row is changed; so does Berth (per organization: plugins/sso/test/sso.test.ts)',
  'auditLog.all':
    "the peer answers its audit_log rows as drizzle returns them ({ logs, total }), which the generator does not derive: Berth declares the same fields in plugins/audit-log/src/schemas.ts (its own detail inside the peer's metadata text), checked by plugins/audit-log/test/audit-log.test.ts",
  ...Object.fromEntries(
    peerWithoutShape('whitelabeling').map(op => [
      op,
      "the peer answers its web-server settings row's whitelabelingConfig (a typed JSON column), a part of it, or { success: true }, which the generator does not derive: Berth declares them in plugins/whitelabeling/src/schemas.ts, checked by plugins/whitelabeling/test/whitelabeling.test.ts",
    ]),
  ),
  ...Object.fromEntries(
    peerWithoutShape('customRole').map(op => [
      op,
      'the peer answers its organization_role rows (the statement as JSON text), { deleted }, its members picked by column or its access-control statements, which the generator does not derive: Berth declares them in plugins/custom-role/src/schemas.ts, checked by plugins/custom-role/test/custom-role.test.ts',
    ]),
  ),
  'user.assignPermissions': 'the peer answers no value (its mutation returns nothing); so does Berth (null), checked by plugins/custom-role/test/custom-role.test.ts',
  'user.getPermissions':
    'the peer answers its resolvePermissions object (resource → action → boolean), which the generator does not derive: Berth declares the same in plugins/user/src/grant-procedures.ts, checked by plugins/custom-role/test/custom-role.test.ts',
  ...Object.fromEntries(
    peerWithoutShape('scim').map(op => [
      op,
      'the peer answers rows of its scim_provider table picked by column ({ id, providerId, organizationId }), a generated token ({ scimToken, providerId }) or { success: true }, which the generator does not derive: Berth declares them in plugins/scim/src/schemas.ts, checked by plugins/scim/test/scim.test.ts',
    ]),
  ),
  'rollback.rollback':
    'the peer answers no value once its service is updated; Berth queues the rollback as a deployment and answers the release rolled back to, the deployment in its header (plugins/rollback/test/rollback.test.ts)',
  'rollback.delete': 'the peer answers the rollback row with its deployment joined; Berth answers the release as it was, as deployment.allByType does (plugins/rollback/test/rollback.test.ts)',
};

/**
 * Relations of namespaces Berth does not serve yet, each with its namespace: declared as
 * always-empty lists or always null, so their items' fields are not compared until their plugins
 * come. The shape test fails when Berth serves one of these namespaces (the exemption is stale).
 */
export const NOT_SERVED_NAMESPACE: Record<string, string> = {};
/**
 * Relations of a namespace Berth serves that the records answering them do not join yet: always
 * null, their fields not compared, with why. Shrinks as the joins come.
 */
export const NOT_JOINED: Record<string, string> = {
  buildServer: "a workload's build server: null until build servers are served (the registries issue)",
  registry: "an application's registry: null until the application's answers join it (registryId is answered; the peer's row carries the password, which Berth never answers)",
  buildRegistry: "an application's build registry: null until build servers are served (the registries issue)",
  rollbackRegistry: "an application's rollback registry: null until the application's answers join it (rollbackRegistryId is answered)",
};
/**
 * Where a relation Berth joins elsewhere still answers null in one operation (its fields not
 * compared there), with why. Shrinks as the joins come.
 */
export const NOT_JOINED_IN: Record<string, { relations: string[]; reason: string }> = {
  ...Object.fromEntries(
    ['environment.one', 'environment.byProjectId', 'project.one'].map(op => [
      op,
      { relations: ['server'], reason: "each listed workload's server ({name, serverId}): null in the summaries until they join it (the workload's own answers do)" },
    ]),
  ),
  'deployment.allCentralized': { relations: ['server'], reason: "a deployment's server and its workload's: null until the deployment reads join them (serverId is answered)" },
  'certificates.all': { relations: ['server'], reason: "a certificate's server: certificates live on this machine only" },
};

export const NOT_SERVED: Record<string, string> = {
  ...Object.fromEntries(Object.entries(NOT_SERVED_NAMESPACE).map(([relation, namespace]) => [relation, `its namespace (${namespace}) has no plugin yet`])),
  ...NOT_JOINED,
};

/**
 * Where dokploy-sdk 0.2.0 (generated from an older peer) rejects the answer of the peer at
 * v0.30.2 itself: Berth answers as the peer at v0.30.2 does, and the SDK test expects exactly
 * these rejections.
 */
export const SDK_REJECTS_PEER: Record<string, string> = {
  ...Object.fromEntries(['postgres', 'mysql', 'mariadb', 'mongo'].map(kind => [`${kind}.create`, 'the SDK expects true; the peer at v0.30.2 answers the new record'])),
  'environment.one': 'the SDK expects every column of each workload in the lists; the peer at v0.30.2 lists a summary of each',
  'redirects.create': 'the SDK expects the new redirect; the peer at v0.30.2 answers true',
  'security.create': 'the SDK expects the new basic-auth user; the peer at v0.30.2 answers true',
};
