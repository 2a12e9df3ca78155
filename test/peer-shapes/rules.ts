// What the shape test accepts beyond the peer's shapes, each with its reason. Everything not
// listed here that differs from test/peer-shapes/reference.generated.json fails the test.

/** Fields Berth answers beyond the peer's, by name (anywhere in an answer), with why. */
export const ALLOWED_EXTRA: Record<string, string> = {
  organizationId: 'Berth records carry their organization (workloads, deployments): confinement is checked on the record itself',
  internalConnectionUrl: 'database `one`: the URL other workloads reach the database at',
  externalConnectionUrl: 'database `one`: the URL from outside through the external port (null without one)',
  targetType: 'deployments: what the deployment belongs to (any registered kind or target)',
  targetId: 'deployments: the id of what it belongs to',
  action: 'deployments: what the job does (deploy, start, stop, ...)',
  startedAt: 'deployments: when the job started running (the peer has only createdAt)',
  finishedAt: 'deployments: when the job ended (the peer has only createdAt)',
  backups: 'database `one`: every kind lists its backups (the peer\'s redis has no such relation); empty until backups come',
  isDefault: 'environments: a column of the peer at v0.30.2 that the older dokploy-sdk schemas do not list',
};

/** Berth's deployments answer the id field of every registered kind (`postgresId`, ...), as the older peer did. */
export const isKindIdField = (name: string, kindIdFields: string[]) => kindIdFields.includes(name);

/** Fields of the peer Berth does not answer, by `operation field` (or `* field`), with why. */
export const ALLOWED_MISSING: Record<string, string> = {
  '* privateKey': 'an SSH private key is never answered by Berth (secrets are sealed; the peer answers it in sshKey.one/all)',
};

/**
 * Operations whose answer differs from the peer's by design, with why. Their answers are
 * still checked against Berth's own declared schema by the transport; the shape test reports
 * the differences as comments.
 */
export const DEVIATIONS: Record<string, string> = {
  'user.generateToken': 'the peer answers the placeholder string "token"; Berth answers a real bearer token ({token})',
  'application.deploy': 'runs are queued durably: deploy answers the queued deployment (DESIGN.md), the peer answers true',
  'application.redeploy': 'runs are queued durably and answer the queued deployment; the peer answers true',
  'application.reload': 'runs are queued durably and answer the queued deployment; the peer answers true',
  'application.start': 'runs are queued durably and answer the queued deployment; the peer answers the record',
  'application.stop': 'runs are queued durably and answer the queued deployment; the peer answers the record',
};
/** Database kinds: the same runs, the same reason. */
export const RUNS_OF_DATABASES = ['deploy', 'start', 'stop', 'reload', 'rebuild'];
export const DATABASE_RUN_REASON = 'runs are queued durably and answer the queued deployment; the peer answers the record or true';

/** Operations Berth serves that the peer does not have, with why. */
export const BERTH_ONLY: Record<string, string> = {
  'settings.getOpenApiDocument': 'served at its peer path with Berth\'s own document',
};

/**
 * Relations of namespaces Berth does not serve yet: declared as always-empty lists or always
 * null, so their items' fields are not compared until their plugins come.
 */
export const NOT_SERVED: Record<string, string> = Object.fromEntries([
  'domains', 'redirects', 'security', 'previewDeployments', 'backups', 'compose', 'libsql', 'projectTags', 'rollback',
  'github', 'gitlab', 'bitbucket', 'gitea', 'server', 'registry', 'buildRegistry', 'rollbackRegistry',
].map(name => [name, 'its namespace has no plugin yet']));
