// Writes test/peer-shapes/reference.generated.json: the shape (field names, JSON types,
// nullability) of each answer of the peer's API at one release, from two sources:
//  - router+schema: the peer's table definitions at that tag (read with `git show` from a clone
//    of its repository) joined along the relations its routers load (RETURNS below, written
//    from reading the routers: which tables, which relations, which columns left out);
//  - sdk: the response schemas of the published `dokploy-sdk` package (zod), for every other
//    operation that package knows.
// Nothing of the peer's code is copied: only names, types and nullability are kept.
//
//   node --experimental-strip-types test/peer-shapes/generate.ts <peer git dir> [tag] [peer-openapi.json]
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Shape, ShapeReference } from './shape.ts';

const [gitDir, tag = 'v0.30.2', openapiPath = new URL('../../../shared/reference/peer-openapi.json', import.meta.url).pathname] = process.argv.slice(2);
if (!gitDir) {
  console.error('usage: generate.ts <peer git dir> [tag] [peer-openapi.json]');
  process.exit(2);
}
const out = new URL('./reference.generated.json', import.meta.url).pathname;

// ---- the peer's tables at the tag ------------------------------------------------------------
const SCHEMA_DIR = 'packages/server/src/db/schema';
const git = (...args: string[]) => execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });

const STRING = new Set(['text', 'varchar', 'char', 'uuid', 'encryptedText', 'timestamp', 'date', 'numeric', 'decimal']);
const NUMBER = new Set(['integer', 'bigint', 'smallint', 'serial', 'bigserial', 'real', 'doublePrecision']);
const JSONISH = new Set(['json', 'jsonb']);

/** The text between the bracket at `open` and its match, skipping strings and comments. */
function balanced(src: string, open: number): string {
  const pairs: Record<string, string> = { '(': ')', '{': '}', '[': ']' };
  const stack: string[] = [];
  for (let i = open; i < src.length; i++) {
    const c = src[i]!;
    if (c === '/' && src[i + 1] === '/') {
      i = src.indexOf('\n', i);
      continue;
    }
    if (c === '/' && src[i + 1] === '*') {
      i = src.indexOf('*/', i) + 1;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') {
      for (i++; i < src.length && src[i] !== c; i++) if (src[i] === '\\') i++;
      continue;
    }
    if (pairs[c]) stack.push(pairs[c]);
    else if (c === stack[stack.length - 1]) {
      stack.pop();
      if (!stack.length) return src.slice(open + 1, i);
    }
  }
  throw new Error(`unbalanced bracket at ${open}`);
}

/** Top-level `key: expression` entries of an object literal's body. */
function entries(body: string): [string, string][] {
  const result: [string, string][] = [];
  let depth = 0,
    start = 0;
  const push = (end: number) => {
    const text = body
      .slice(start, end)
      .replace(/^\s*(\/\/[^\n]*\n\s*)*/g, '')
      .trim();
    const m = /^([A-Za-z_$][\w$]*)\s*:\s*([\s\S]*)$/.exec(text);
    if (m) result.push([m[1]!, m[2]!]);
  };
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '/' && body[i + 1] === '/') {
      i = body.indexOf('\n', i);
      if (i < 0) break;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') {
      for (i++; i < body.length && body[i] !== c; i++) if (body[i] === '\\') i++;
      continue;
    }
    if ('({['.includes(c)) depth++;
    else if (')}]'.includes(c)) depth--;
    else if (c === ',' && depth === 0) {
      push(i);
      start = i + 1;
    }
  }
  push(body.length);
  return result;
}

function column(expr: string, enums: Set<string>, where: string): Shape {
  const fn = /^([A-Za-z_$][\w$]*)\s*\(/.exec(expr)?.[1] ?? '';
  let shape: Shape;
  if (STRING.has(fn) || enums.has(fn)) shape = { t: 'string' };
  else if (NUMBER.has(fn)) shape = { t: 'number' };
  else if (fn === 'boolean') shape = { t: 'boolean' };
  else if (JSONISH.has(fn)) shape = { t: 'any' };
  else throw new Error(`${where}: unknown column type ${fn}`);
  if (/\.array\(\)/.test(expr)) shape = { t: 'array', items: shape };
  if (!/\.notNull\(\)|\.primaryKey\(\)/.test(expr)) shape.null = true;
  return shape;
}

const tables = new Map<string, Record<string, Shape>>();
const files = git('ls-tree', '--name-only', `${tag}:${SCHEMA_DIR}`)
  .split('\n')
  .filter(f => f.endsWith('.ts'));
const sources = new Map(files.map(f => [f, git('show', `${tag}:${SCHEMA_DIR}/${f}`)]));
const enums = new Set<string>();
for (const src of sources.values()) for (const m of src.matchAll(/export const (\w+)\s*=\s*pgEnum\(/g)) enums.add(m[1]!);
for (const [file, src] of sources) {
  for (const m of src.matchAll(/pgTable\(\s*"([^"]+)"\s*,\s*/g)) {
    const open = src.indexOf('{', m.index! + m[0].length - 1);
    const cols: Record<string, Shape> = {};
    for (const [key, expr] of entries(balanced(src, open))) cols[key] = column(expr, enums, `${file} ${m[1]!}.${key}`);
    tables.set(m[1]!, cols);
  }
}

// ---- what the routers answer (written from reading them at the tag) ------------------------------
interface Spec {
  table: string;
  omit?: string[];
  pick?: string[];
  with?: Record<string, Rel>;
  extra?: Record<string, Shape>;
}
type Rel = { many: Spec } | { one: Spec; nullable?: true };
const many = (s: Spec | string): Rel => ({ many: typeof s === 'string' ? { table: s } : s });
const one = (s: Spec | string): Rel => ({ one: typeof s === 'string' ? { table: s } : s });
const maybe = (s: Spec | string): Rel => ({ one: typeof s === 'string' ? { table: s } : s, nullable: true });

/** The peer's owners of a volume backup (their table names are their relation names). */
const VOLUME_OWNERS = ['application', 'postgres', 'mysql', 'mariadb', 'mongo', 'redis', 'compose', 'libsql'];
const environmentWithProject = one({ table: 'environment', with: { project: one('project') } });
const backups = many({ table: 'backup', with: { destination: one({ table: 'destination', omit: ['accessKey', 'secretAccessKey'] }), deployments: many('deployment') } });
const database = (table: string, withBackups = true): Spec => ({
  table,
  with: { environment: environmentWithProject, mounts: many('mount'), server: maybe('server'), ...(withBackups ? { backups } : {}) },
});
const gitRelations = {
  gitlab: maybe({ table: 'gitlab', omit: ['secret', 'accessToken', 'refreshToken'] }),
  github: maybe({ table: 'github', omit: ['githubClientSecret', 'githubPrivateKey', 'githubWebhookSecret'] }),
  bitbucket: maybe({ table: 'bitbucket', omit: ['appPassword', 'apiToken'] }),
  gitea: maybe({ table: 'gitea', omit: ['clientSecret', 'accessToken', 'refreshToken'] }),
};
/** findApplicationById: the record the application router answers from most operations */
const applicationFound: Spec = {
  table: 'application',
  with: {
    environment: environmentWithProject,
    domains: many('domain'),
    deployments: many('deployment'),
    mounts: many('mount'),
    redirects: many('redirect'),
    security: many('security'),
    ports: many('port'),
    ...gitRelations,
    server: maybe('server'),
    previewDeployments: many('preview_deployments'),
    registry: maybe({ table: 'registry', omit: ['password'] }),
    buildRegistry: maybe({ table: 'registry', omit: ['password'] }),
    rollbackRegistry: maybe({ table: 'registry', omit: ['password'] }),
  },
};
/** findComposeById */
const composeFound: Spec = {
  table: 'compose',
  with: { environment: environmentWithProject, deployments: many('deployment'), mounts: many('mount'), domains: many('domain'), ...gitRelations, server: maybe('server'), backups },
};
const TRUE: Shape = { t: 'boolean' };
const TEXT: Shape = { t: 'string' };
/** a procedure that returns nothing: tRPC answers no value */
const VOID: Shape = { t: 'any', null: true, opt: true };
const search = (table: string): Shape => ({ t: 'object', fields: { items: { t: 'array', items: fromSpec({ table }, table) }, total: { t: 'number' } } });

const serverName = maybe({ table: 'server', pick: ['name', 'serverId'] });
const listed = (table: string, id: string, status = 'applicationStatus', more: string[] = []): Rel =>
  many({ table, pick: [id, 'name', 'createdAt', status, 'description', 'serverId', ...more], with: { server: serverName } });
/** findEnvironmentById: the environment with a short entry per service */
const environmentFound: Spec = {
  table: 'environment',
  pick: ['name', 'description', 'environmentId', 'isDefault', 'projectId', 'env'],
  with: {
    applications: listed('application', 'applicationId', 'applicationStatus', ['icon']),
    mariadb: listed('mariadb', 'mariadbId'),
    mongo: listed('mongo', 'mongoId'),
    mysql: listed('mysql', 'mysqlId'),
    postgres: listed('postgres', 'postgresId'),
    redis: listed('redis', 'redisId'),
    compose: listed('compose', 'composeId', 'composeStatus', ['icon']),
    libsql: listed('libsql', 'libsqlId'),
    project: one('project'),
  },
};

// findEnvironmentsByProjectId and findProjectById: the peer's service columns of each workload
const serviceColumns = ['name', 'description', 'appName', 'createdAt', 'serverId', 'applicationStatus'];
const serverOnlyName = maybe({ table: 'server', pick: ['name'] });
const summary = (table: string, id: string, more: string[] = [], status = 'applicationStatus'): Rel =>
  many({ table, pick: [...serviceColumns.filter(c => c !== 'applicationStatus'), status, id, ...more], with: { server: serverOnlyName } });
const workloadLists = {
  applications: summary('application', 'applicationId', ['icon']),
  mariadb: summary('mariadb', 'mariadbId'),
  mongo: summary('mongo', 'mongoId'),
  mysql: summary('mysql', 'mysqlId'),
  postgres: summary('postgres', 'postgresId'),
  redis: summary('redis', 'redisId'),
  compose: summary('compose', 'composeId', ['icon'], 'composeStatus'),
  libsql: summary('libsql', 'libsqlId'),
};
const projectTags = many({ table: 'project_tag', with: { tag: one('tag') } });
/** project.all (owner and admin): each environment's name and id, the workloads' ids (applications' names and status too) */
const idOnly = (table: string, id: string, more: string[] = []): Rel => many({ table, pick: [id, ...more] });

/** findNotificationById: the notification with every channel's record (null but its own) */
const NOTIFICATION_CHANNELS = ['slack', 'telegram', 'discord', 'email', 'resend', 'gotify', 'ntfy', 'mattermost', 'custom', 'lark', 'pushover', 'teams'];
const notificationFound: Spec = { table: 'notification', with: Object.fromEntries(NOTIFICATION_CHANNELS.map(c => [c, maybe(c)])) };
const NOTIFICATION_SUFFIXES = ['Slack', 'Telegram', 'Discord', 'Email', 'Resend', 'Gotify', 'Ntfy', 'Mattermost', 'Custom', 'Lark', 'Teams', 'Pushover'];

/** Per operation: a table joined along relations, or a plain shape. */
const RETURNS: Record<string, Spec | (() => Shape)> = {
  'notification.one': notificationFound,
  'notification.all': () => ({ t: 'array', items: fromSpec(notificationFound, 'notification.all') }),
  'notification.getEmailProviders': () => ({ t: 'array', items: fromSpec({ table: 'notification', with: { email: maybe('email'), resend: maybe('resend') } }, 'notification.getEmailProviders') }),
  'notification.remove': { table: 'notification' },
  'notification.receiveNotification': () => VOID,
  // create and update answer nothing (update's transaction returns no value); tests answer true
  ...Object.fromEntries(
    NOTIFICATION_SUFFIXES.flatMap(s => [
      [`notification.create${s}`, () => VOID],
      [`notification.update${s}`, () => VOID],
      [`notification.test${s}Connection`, () => TRUE],
    ]),
  ),
  'application.create': { table: 'application' },
  'application.one': { ...applicationFound, extra: { hasGitProviderAccess: TRUE, unauthorizedProvider: { t: 'string', null: true } } },
  'application.start': applicationFound,
  'application.stop': applicationFound,
  'application.delete': applicationFound,
  'application.move': { table: 'application' },
  'application.search': () => search('application'),
  'application.readLogs': () => TEXT,
  ...Object.fromEntries(
    [
      'reload',
      'redeploy',
      'deploy',
      'saveEnvironment',
      'saveBuildType',
      'saveGithubProvider',
      'saveGitlabProvider',
      'saveBitbucketProvider',
      'saveGiteaProvider',
      'saveDockerProvider',
      'saveGitProvider',
      'saveGitProdiver',
      'disconnectGitProvider',
      'update',
      'refreshToken',
      'clearDeployments',
      'cleanQueues',
      'killBuild',
      'markRunning',
    ].map(p => [`application.${p}`, () => TRUE]),
  ),
  ...Object.fromEntries(
    ['postgres', 'mysql', 'mariadb', 'mongo', 'redis'].flatMap(kind => {
      const found = database(kind, kind !== 'redis');
      return [
        [`${kind}.create`, { table: kind }],
        [`${kind}.move`, { table: kind }],
        ...['one', 'start', 'stop', 'deploy', 'saveExternalPort', 'changeStatus', 'remove'].map(p => [`${kind}.${p}`, found]),
        ...['saveEnvironment', 'reload', 'update', 'changePassword', 'rebuild'].map(p => [`${kind}.${p}`, () => TRUE]),
        [`${kind}.search`, () => search(kind)],
        [`${kind}.readLogs`, () => TEXT],
      ];
    }),
  ),
  // libsql: create answers true; saveExternalPorts (its three ports) the record found; no changePassword, no search
  ...Object.fromEntries([
    ['libsql.move', { table: 'libsql' }],
    ...['one', 'start', 'stop', 'deploy', 'saveExternalPorts', 'changeStatus', 'remove'].map(p => [`libsql.${p}`, database('libsql')]),
    ...['create', 'saveEnvironment', 'reload', 'update', 'rebuild'].map(p => [`libsql.${p}`, () => TRUE]),
    ['libsql.readLogs', () => TEXT],
  ]),
  // compose stacks (findComposeById: the record the compose router answers from one and delete)
  'compose.create': { table: 'compose' },
  'compose.one': { ...composeFound, extra: { hasGitProviderAccess: TRUE, unauthorizedProvider: { t: 'string', null: true } } },
  'compose.delete': composeFound,
  'compose.update': { table: 'compose' },
  'compose.move': { table: 'compose' },
  'compose.deployTemplate': { table: 'compose' },
  'compose.search': () => ({
    t: 'object',
    fields: {
      items: {
        t: 'array',
        items: fromSpec({ table: 'compose', pick: ['composeId', 'name', 'appName', 'description', 'environmentId', 'composeStatus', 'sourceType', 'createdAt'] }, 'compose.search'),
      },
      total: { t: 'number' },
    },
  }),
  ...Object.fromEntries(['saveEnvironment', 'clearDeployments', 'stop', 'start', 'refreshToken', 'disconnectGitProvider'].map(p => [`compose.${p}`, () => TRUE])),
  ...Object.fromEntries(['randomizeCompose', 'isolatedDeployment', 'getConvertedCompose', 'getDefaultCommand', 'readLogs', 'fetchSourceType'].map(p => [`compose.${p}`, () => TEXT])),
  'compose.killBuild': () => VOID,
  ...Object.fromEntries(['cleanQueues', 'cancelDeployment', 'import'].map(p => [`compose.${p}`, () => ({ t: 'object', fields: { success: TRUE, message: TEXT } })])),
  // deploy and redeploy answer true on the peer's cloud, this object otherwise
  ...Object.fromEntries(['deploy', 'redeploy'].map(p => [`compose.${p}`, () => ({ t: 'object', fields: { success: TRUE, message: TEXT, composeId: TEXT } })])),
  'compose.loadServices': () => ({ t: 'array', items: TEXT }),
  // the engine's own mount entries of the service's container
  'compose.loadMountsByService': () => ({ t: 'array', items: { t: 'any' } }),
  'compose.getTags': () => ({ t: 'array', items: TEXT }),
  'compose.templates': () => ({
    t: 'array',
    items: { t: 'object', fields: { id: TEXT, name: TEXT, description: TEXT, version: TEXT, logo: TEXT, links: { t: 'any' }, tags: { t: 'array', items: TEXT } } },
  }),
  ...Object.fromEntries(
    ['previewTemplate', 'processTemplate'].map(p => [
      `compose.${p}`,
      () => ({
        t: 'object',
        fields: {
          compose: TEXT,
          template: {
            t: 'object',
            fields: {
              envs: { t: 'array', items: TEXT },
              mounts: { t: 'array', items: { t: 'object', fields: { filePath: TEXT, content: TEXT } } },
              domains: { t: 'array', items: { t: 'object', fields: { serviceName: TEXT, port: { t: 'number' }, path: { t: 'string', opt: true }, host: TEXT } } },
            },
          },
        },
      }),
    ]),
  ),
  'environment.one': environmentFound,
  'environment.byProjectId': () => ({
    t: 'array',
    items: fromSpec({ table: 'environment', pick: ['name', 'description', 'environmentId', 'isDefault'], with: { ...workloadLists, project: one('project') } }, 'environment.byProjectId'),
  }),
  'project.one': { table: 'project', with: { environments: many({ table: 'environment', with: workloadLists }), projectTags } },
  'project.all': () => ({
    t: 'array',
    items: fromSpec(
      {
        table: 'project',
        with: {
          environments: many({
            table: 'environment',
            pick: ['name', 'environmentId', 'isDefault'],
            with: {
              applications: idOnly('application', 'applicationId', ['name', 'applicationStatus']),
              mariadb: idOnly('mariadb', 'mariadbId'),
              mongo: idOnly('mongo', 'mongoId'),
              mysql: idOnly('mysql', 'mysqlId'),
              postgres: idOnly('postgres', 'postgresId'),
              redis: idOnly('redis', 'redisId'),
              compose: idOnly('compose', 'composeId', ['name', 'composeStatus']),
              libsql: idOnly('libsql', 'libsqlId'),
            },
          }),
          projectTags,
        },
      },
      'project.all',
    ),
  }),
  'project.create': () => ({ t: 'object', fields: { project: fromSpec({ table: 'project' }, 'project.create'), environment: fromSpec({ table: 'environment' }, 'project.create') } }),
  'project.update': { table: 'project' },
  'project.remove': { table: 'project' },
  'deployment.all': () => ({ t: 'array', items: fromSpec({ table: 'deployment' }, 'deployment.all') }),
  'deployment.allByCompose': () => ({ t: 'array', items: fromSpec({ table: 'deployment' }, 'deployment.allByCompose') }),
  'deployment.allByServer': () => ({ t: 'array', items: fromSpec({ table: 'deployment' }, 'deployment.allByServer') }),
  'deployment.allByType': () => ({ t: 'array', items: fromSpec({ table: 'deployment', with: { rollback: maybe('rollback') } }, 'deployment.allByType') }),
  'environment.create': { table: 'environment' },
  'environment.update': { table: 'environment' },
  'environment.remove': { table: 'environment' },
  'environment.duplicate': { table: 'environment' },
  'sshKey.create': () => VOID,
  'sshKey.one': { table: 'ssh-key' },
  'sshKey.all': () => ({ t: 'array', items: fromSpec({ table: 'ssh-key' }, 'sshKey.all') }),
  'sshKey.update': { table: 'ssh-key' },
  'sshKey.remove': { table: 'ssh-key' },
  'sshKey.allForApps': () => ({ t: 'array', items: fromSpec({ table: 'ssh-key', pick: ['sshKeyId', 'name'] }, 'sshKey.allForApps') }),
  'gitProvider.allForPermissions': () => ({ t: 'array', items: fromSpec({ table: 'git_provider', pick: ['gitProviderId', 'name', 'providerType'] }, 'gitProvider.allForPermissions') }),
  // allForPermissions: each project's id and name, its environments' id, name and isDefault, and each workload's id, names, creation, status and server
  'project.allForPermissions': () => ({
    t: 'array',
    items: fromSpec(
      {
        table: 'project',
        pick: ['projectId', 'name'],
        with: {
          environments: many({
            table: 'environment',
            pick: ['environmentId', 'name', 'isDefault'],
            with: Object.fromEntries(
              [
                ['applications', 'application', 'applicationId', 'applicationStatus'],
                ['mariadb', 'mariadb', 'mariadbId', 'applicationStatus'],
                ['postgres', 'postgres', 'postgresId', 'applicationStatus'],
                ['mysql', 'mysql', 'mysqlId', 'applicationStatus'],
                ['mongo', 'mongo', 'mongoId', 'applicationStatus'],
                ['redis', 'redis', 'redisId', 'applicationStatus'],
                ['compose', 'compose', 'composeId', 'composeStatus'],
                ['libsql', 'libsql', 'libsqlId', 'applicationStatus'],
              ].map(([key, table, id, status]) => [key!, idOnly(table!, id!, ['appName', 'name', 'createdAt', status!, 'description', 'serverId'])]),
            ),
          }),
        },
      },
      'project.allForPermissions',
    ),
  }),
  'project.homeStats': () => {
    const count: Shape = { t: 'number' };
    const counts = Object.fromEntries(['projects', 'environments', 'applications', 'compose', 'databases', 'services'].map(k => [k, count]));
    return { t: 'object', fields: { ...counts, status: { t: 'object', fields: { running: count, error: count, idle: count } } } };
  },
  'sshKey.generate': () => ({ t: 'object', fields: { privateKey: TEXT, publicKey: TEXT } }),
  // the tag router: create and update answer the row (returning), all and one the rows, assignToProject the link's row; the rest { success: true }
  'tag.create': { table: 'tag' },
  'tag.update': { table: 'tag' },
  'tag.one': { table: 'tag' },
  'tag.all': () => ({ t: 'array', items: fromSpec({ table: 'tag' }, 'tag.all') }),
  'tag.assignToProject': { table: 'project_tag' },
  ...Object.fromEntries(['remove', 'removeFromProject', 'bulkAssign'].map(p => [`tag.${p}`, () => ({ t: 'object', fields: { success: TRUE } })])),
  'port.create': { table: 'port' },
  'port.one': { table: 'port', with: { application: one({ table: 'application', pick: ['applicationId'] }) } },
  'port.update': { table: 'port' },
  'port.delete': { table: 'port' },
  'mounts.create': { table: 'mount' },
  'mounts.one': { table: 'mount' },
  'mounts.update': { table: 'mount' },
  'mounts.remove': { table: 'mount' },
  'deployment.readLogs': () => TEXT,
  'deployment.removeDeployment': { table: 'deployment' },
  'deployment.killProcess': () => VOID,
  'user.haveRootAccess': () => TRUE,
  'user.generateToken': () => TEXT,
  'user.deleteApiKey': () => TRUE,
  'organization.create': { table: 'organization' },
  'organization.one': { table: 'organization' },
  'organization.update': { table: 'organization' },
  // the peer answers the database driver's result of the delete; the SDK, the organization as it was
  'organization.delete': { table: 'organization' },
  'organization.inviteMember': { table: 'invitation' },
  'organization.allInvitations': () => ({ t: 'array', items: fromSpec({ table: 'invitation' }, 'organization.allInvitations') }),
  // the database driver's result of the delete
  'organization.removeInvitation': () => ({ t: 'any' }),
  'project.search': () => ({
    t: 'object',
    fields: {
      items: { t: 'array', items: fromSpec({ table: 'project', pick: ['projectId', 'name', 'description', 'createdAt', 'organizationId', 'env'] }, 'project.search') },
      total: { t: 'number' },
    },
  }),
  'environment.search': () => ({
    t: 'object',
    fields: {
      items: { t: 'array', items: fromSpec({ table: 'environment', pick: ['environmentId', 'name', 'description', 'createdAt', 'env', 'projectId', 'isDefault'] }, 'environment.search') },
      total: { t: 'number' },
    },
  }),
  'project.duplicate': { table: 'project' },
  'organization.setDefault': () => ({ t: 'object', fields: { success: TRUE } }),
  'organization.active': () => ({ ...fromSpec({ table: 'organization' }, 'organization.active'), null: true }),
  'application.cancelDeployment': () => ({ t: 'object', fields: { success: TRUE, message: TEXT } }),
  'user.one': { table: 'member', with: { user: one('user') } },
  'user.all': () => ({ t: 'array', items: fromSpec({ table: 'member', with: { user: one('user') } }, 'user.all') }),
  'organization.updateMemberRole': () => TRUE,
  // user.update answers the updated user row; remove answers nothing (removeUserById returns no value)
  'user.update': { table: 'user' },
  'user.remove': () => VOID,
  // the API-key plugin's new key: the row with the plain key in `key`, its metadata and permissions parsed
  'user.createApiKey': { table: 'apikey', extra: { metadata: { t: 'any', null: true }, permissions: { t: 'any', null: true } } },
  'user.createUserWithCredentials': () => ({ t: 'object', fields: { userId: TEXT, email: TEXT, role: TEXT } }),
  // findAllDeploymentsCentralized: every deployment of the organization's applications and compose
  // stacks, with a few columns of each, its place, and its servers
  'deployment.allCentralized': () => ({
    t: 'array',
    items: fromSpec(
      {
        table: 'deployment',
        with: {
          application: maybe({
            table: 'application',
            pick: ['applicationId', 'name', 'appName', 'icon'],
            with: {
              environment: one({ table: 'environment', pick: ['environmentId', 'name'], with: { project: one({ table: 'project', pick: ['projectId', 'name'] }) } }),
              server: maybe({ table: 'server', pick: ['serverId', 'name', 'serverType'] }),
              buildServer: maybe({ table: 'server', pick: ['serverId', 'name', 'serverType'] }),
            },
          }),
          compose: maybe({
            table: 'compose',
            pick: ['composeId', 'name', 'appName', 'icon'],
            with: {
              environment: one({ table: 'environment', pick: ['environmentId', 'name'], with: { project: one({ table: 'project', pick: ['projectId', 'name'] }) } }),
              server: maybe({ table: 'server', pick: ['serverId', 'name', 'serverType'] }),
            },
          }),
          server: maybe({ table: 'server', pick: ['serverId', 'name', 'serverType'] }),
          buildServer: maybe({ table: 'server', pick: ['serverId', 'name', 'serverType'] }),
        },
      },
      'deployment.allCentralized',
    ),
  }),
  // the deploy queue's jobs (the queue library's fields), each with the path of its service in the UI
  'deployment.queueList': () => ({
    t: 'array',
    items: {
      t: 'object',
      fields: {
        id: TEXT,
        name: { t: 'string', opt: true },
        data: { t: 'object' },
        timestamp: { t: 'number', opt: true },
        processedOn: { t: 'number', opt: true },
        finishedOn: { t: 'number', opt: true },
        failedReason: { t: 'string', opt: true },
        state: TEXT,
        servicePath: { t: 'object', fields: { href: { t: 'string', null: true }, label: TEXT } },
      },
    },
  }),
  'user.get': {
    table: 'member',
    with: {
      user: one({
        table: 'user',
        pick: [
          'id',
          'firstName',
          'lastName',
          'email',
          'image',
          'allowImpersonation',
          'twoFactorEnabled',
          'stripeCustomerId',
          'stripeSubscriptionId',
          'serversQuantity',
          'isEnterpriseCloud',
          'sendInvoiceNotifications',
        ],
        with: { apiKeys: many({ table: 'apikey', pick: ['id', 'name', 'prefix', 'enabled', 'expiresAt', 'createdAt'] }) },
      }),
    },
  },
  'mounts.listByServiceId': () => ({ t: 'array', items: fromSpec({ table: 'mount' }, 'mounts.listByServiceId') }),
  // the engine's own mount entries of the running container
  'mounts.allNamedByApplicationId': () => ({ t: 'array', items: { t: 'any' } }),
  'settings.getOpenApiDocument': () => ({ t: 'object' }),

  // domains (findDomainById joins a few columns of the application; byComposeId, of the compose)
  'domain.create': { table: 'domain' },
  'domain.one': { table: 'domain', with: { application: maybe({ table: 'application', pick: ['applicationId', 'appName', 'name'] }) } },
  'domain.byApplicationId': () => ({
    t: 'array',
    items: fromSpec({ table: 'domain', with: { application: maybe({ table: 'application', pick: ['applicationId', 'appName', 'name'] }) } }, 'domain.byApplicationId'),
  }),
  'domain.byComposeId': () => ({ t: 'array', items: fromSpec({ table: 'domain', with: { compose: maybe({ table: 'compose', pick: ['composeId', 'appName', 'name'] }) } }, 'domain.byComposeId') }),
  'domain.update': { table: 'domain' },
  'domain.delete': { table: 'domain' },
  'domain.generateDomain': () => TEXT,
  'domain.canGenerateTraefikMeDomains': () => TEXT,
  'domain.validateDomain': () => ({ t: 'object', fields: { isValid: TRUE, resolvedIp: { t: 'string', opt: true }, cdnProvider: { t: 'string', opt: true }, error: { t: 'string', opt: true } } }),
  // redirects and basic-auth entries: create answers true; security.update answers nothing
  'redirects.create': () => TRUE,
  'redirects.one': { table: 'redirect' },
  'redirects.update': { table: 'redirect' },
  'redirects.delete': { table: 'redirect' },
  'security.create': () => TRUE,
  'security.one': { table: 'security' },
  'security.update': () => VOID,
  'security.delete': { table: 'security' },
  // certificates: remove answers true; all joins the server
  'certificates.create': { table: 'certificate' },
  'certificates.one': { table: 'certificate' },
  'certificates.update': { table: 'certificate' },
  'certificates.remove': () => TRUE,
  'certificates.all': () => ({ t: 'array', items: fromSpec({ table: 'certificate', with: { server: maybe('server') } }, 'certificates.all') }),
  // the proxy's settings
  'settings.getWebServerSettings': () => ({ ...fromSpec({ table: 'webServerSettings' }, 'settings.getWebServerSettings'), null: true }),
  'settings.assignDomainServer': { table: 'webServerSettings' },
  'settings.reloadTraefik': () => TRUE,
  'settings.toggleDashboard': () => TRUE,
  'settings.readTraefikConfig': () => ({ t: 'string', null: true }),
  'settings.readWebServerTraefikConfig': () => ({ t: 'string', null: true }),
  'settings.readMiddlewareTraefikConfig': () => ({ t: 'string', null: true }),
  'settings.updateTraefikConfig': () => TRUE,
  'settings.updateWebServerTraefikConfig': () => TRUE,
  'settings.updateMiddlewareTraefikConfig': () => TRUE,
  'settings.readTraefikFile': () => ({ t: 'string', null: true }),
  'settings.updateTraefikFile': () => TRUE,
  // the directory tree of the proxy's configuration (nested entries)
  'settings.readDirectories': () => ({ t: 'array', items: { t: 'any' } }),
  'settings.readTraefikEnv': () => TEXT,
  'settings.writeTraefikEnv': () => TRUE,
  'settings.haveTraefikDashboardPortEnabled': () => TRUE,
  'settings.updateTraefikPorts': () => TRUE,
  'settings.getTraefikPorts': () => ({ t: 'array', items: { t: 'object', fields: { targetPort: { t: 'number' }, publishedPort: { t: 'number' }, protocol: { t: 'string', opt: true } } } }),
  'application.readTraefikConfig': () => ({ t: 'string', null: true }),
  'application.updateTraefikConfig': () => TRUE,
  // backup destinations: the rows as stored (the peer answers its keys too)
  'destination.create': { table: 'destination' },
  'destination.one': { table: 'destination' },
  'destination.update': { table: 'destination' },
  'destination.remove': { table: 'destination' },
  'destination.all': () => ({ t: 'array', items: fromSpec({ table: 'destination' }, 'destination.all') }),
  'destination.testConnection': () => VOID,
  // backups: create and update answer nothing; findBackupById joins the databases and the destination without its keys
  'backup.create': () => VOID,
  'backup.update': () => VOID,
  'backup.one': {
    table: 'backup',
    with: {
      postgres: maybe('postgres'),
      mysql: maybe('mysql'),
      mariadb: maybe('mariadb'),
      mongo: maybe('mongo'),
      libsql: maybe('libsql'),
      destination: one({ table: 'destination', omit: ['accessKey', 'secretAccessKey'] }),
      compose: maybe('compose'),
    },
  },
  'backup.remove': { table: 'backup' },
  // the object store's listing (rclone lsjson entries), at most 100
  'backup.listBackupFiles': () => ({
    t: 'array',
    items: {
      t: 'object',
      fields: {
        Path: TEXT,
        Name: TEXT,
        Size: { t: 'number' },
        IsDir: TRUE,
        Tier: { t: 'string', opt: true },
        Hashes: { t: 'object', opt: true, fields: { MD5: { t: 'string', opt: true }, SHA1: { t: 'string', opt: true } } },
      },
    },
  }),
  ...Object.fromEntries(['Postgres', 'MySql', 'Mariadb', 'Mongo', 'Compose', 'Libsql', 'WebServer'].map(k => [`backup.manualBackup${k}`, () => TRUE])),
  // volume backups: list joins each owner's id, appName and serverId; findVolumeBackupById joins the owners with their
  // environment and project, and the destination without its keys; create and update answer the row; delete answers the
  // driver's result; runManually answers nothing, or false when the run failed
  'volumeBackups.list': () => ({
    t: 'array',
    items: fromSpec({ table: 'volume_backup', with: Object.fromEntries(VOLUME_OWNERS.map(o => [o, maybe({ table: o, pick: [`${o}Id`, 'appName', 'serverId'] })])) }, 'volumeBackups.list'),
  }),
  'volumeBackups.create': { table: 'volume_backup' },
  'volumeBackups.update': { table: 'volume_backup' },
  'volumeBackups.one': {
    table: 'volume_backup',
    with: {
      ...Object.fromEntries(
        VOLUME_OWNERS.map(o => [o, maybe({ table: o, ...(o === 'application' ? { pick: ['applicationId', 'appName', 'serverId'] } : {}), with: { environment: environmentWithProject } })]),
      ),
      destination: one({ table: 'destination', omit: ['accessKey', 'secretAccessKey'] }),
    },
  },
  'volumeBackups.delete': () => VOID,
  'volumeBackups.runManually': () => ({ t: 'boolean', null: true, opt: true }),
};
function fromSpec(spec: Spec, where: string): Shape {
  const cols = tables.get(spec.table);
  if (!cols) throw new Error(`${where}: no table ${spec.table}`);
  const fields: Record<string, Shape> = {};
  for (const [name, shape] of Object.entries(cols)) {
    if (spec.omit?.includes(name) || (spec.pick && !spec.pick.includes(name))) continue;
    fields[name] = structuredClone(shape);
  }
  for (const [name, rel] of Object.entries(spec.with ?? {})) {
    if ('many' in rel) fields[name] = { t: 'array', items: fromSpec(rel.many, `${where}.${name}`) };
    else fields[name] = { ...fromSpec(rel.one, `${where}.${name}`), ...(rel.nullable ? { null: true as const } : {}) };
  }
  Object.assign(fields, structuredClone(spec.extra ?? {}));
  return { t: 'object', fields };
}

// ---- the SDK's response schemas --------------------------------------------------------------
const require = createRequire(new URL('../package.json', import.meta.url));
const sdkVersion: string = JSON.parse(readFileSync(require.resolve('dokploy-sdk/package.json'), 'utf8')).version;
const sdkOps: Record<string, any> = await import('dokploy-sdk/models/operations');
const sdkModels: Record<string, any> = await import('dokploy-sdk/models');
const isError = (z: any): boolean => z === sdkModels.ErrorT$inboundSchema || (z._def.typeName === 'ZodLazy' && isError(z._def.getter()));

function fromZod(z: any, seen = 0): Shape {
  if (seen > 12) return { t: 'any' };
  const d = z._def;
  switch (d.typeName) {
    case 'ZodOptional':
      return { ...fromZod(d.innerType, seen + 1), opt: true };
    case 'ZodNullable':
      return { ...fromZod(d.innerType, seen + 1), null: true };
    case 'ZodDefault':
      return fromZod(d.innerType, seen + 1);
    case 'ZodLazy':
      return fromZod(d.getter(), seen + 1);
    case 'ZodEffects':
      return fromZod(d.schema, seen + 1);
    case 'ZodPipeline':
      return fromZod(d.in, seen + 1);
    case 'ZodString':
    case 'ZodEnum':
    case 'ZodNativeEnum':
    case 'ZodDate':
      return { t: 'string' };
    case 'ZodLiteral':
      return { t: typeof d.value === 'number' ? 'number' : typeof d.value === 'boolean' ? 'boolean' : 'string' };
    case 'ZodNumber':
    case 'ZodBigInt':
      return { t: 'number' };
    case 'ZodBoolean':
      return { t: 'boolean' };
    case 'ZodArray':
      return { t: 'array', items: fromZod(d.type, seen + 1) };
    case 'ZodRecord':
      return { t: 'object' };
    case 'ZodObject':
      return { t: 'object', fields: Object.fromEntries(Object.entries(d.shape()).map(([k, v]) => [k, fromZod(v, seen + 1)])) };
    default:
      return { t: 'any' };
  }
}

/** The SDK's answer for `router.procedure`: its response union less the error member. */
function sdkShape(op: string): Shape | undefined {
  const pascal = op
    .split('.')
    .map(p => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
  const response = sdkOps[`${pascal}Response$inboundSchema`];
  if (!response) return undefined;
  const options: any[] = response._def.typeName === 'ZodUnion' ? response._def.options : [response];
  const body = options.find(o => !isError(o));
  return body ? fromZod(body) : undefined;
}

// Operations whose SDK name lacks an answer but whose peer answer is plain.
const peerOps: string[] = Object.keys(JSON.parse(readFileSync(openapiPath, 'utf8')).paths)
  .map(p => p.replace(/^\//, ''))
  .sort();
const reference: ShapeReference = {
  $generated: `GENERATED by test/peer-shapes/generate.ts from the peer at ${tag} and dokploy-sdk ${sdkVersion} — do not edit; run the generator again.`,
  peer: tag,
  sdk: sdkVersion,
  operations: {},
  unknown: [],
};
for (const op of peerOps) {
  const spec = RETURNS[op];
  if (spec) reference.operations[op] = { source: 'router+schema', shape: typeof spec === 'function' ? spec() : fromSpec(spec, op) };
  else {
    const shape = sdkShape(op);
    if (shape) reference.operations[op] = { source: 'sdk', shape };
    else reference.unknown.push(op);
  }
}
writeFileSync(out, JSON.stringify(reference, null, 1) + '\n');
console.log(`${out}: ${Object.keys(reference.operations).length} operations, ${reference.unknown.length} unknown`);
