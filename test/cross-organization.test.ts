// The cross-organization matrix: no operation of the OpenAPI document lets one organization reach
// another's records. Organization A gets a real record of every kind (test/fuzz-records.ts), and so
// does organization B, whose admin is another account, no member of A. B then calls every
// operation whose input names one of A's records, once per such field, with an otherwise good
// input aimed at A's record (B's own records in the other id fields; again with only the required
// ones filled), on both wire forms (REST and tRPC). First, the positive control: B sends the same
// input with its own record in the aimed field, which must answer 2xx (or fail for a reason other
// than ownership, named in OWN_FAILS): a call that stops at its input's shape never reaches the
// ownership check, and its refusal would prove nothing. Then each call aimed at A's record must be
// refused (404, 403, an empty list, or a 400 where B's own record got past the input's checks)
// exactly as a call naming no record at all is, never answer A's ids or names, and
// write nothing of A's: every read A can make of its records answers the same before and after, so
// a remover left A's record in place and an engine operation (deploy, stop...) ran nothing. The
// few operations that answer 2xx are listed in NOT_REFUSED with why that reaches nothing of A's.
// Operations added later join the matrix on their own: it is driven by the document, not a list.
// B's calls (and A's reads) go a few at a time (AT_ONCE): none of them changes what another answers.
import t from 'tap';
import { appendFileSync } from 'node:fs';
import { startTestServer, signUpAdmin, addMember, otherOrganization, type Client, type Reply } from '@berth/core/testing';
import { fuzzRecords, fuzzStandIns, NO_RECORD } from './fuzz-records.ts';
import { AT_ONCE, documentOperations, goodValue, idFieldsOf, inPool, sendUpload, type Operation } from './openapi-operations.ts';

/** The same exception for both inputs (B's records in every other id field, and in the required ones only). */
const both = (key: string, why: string) => ({ [key]: why, [`${key} alone`]: why });

/**
 * Operations that answer 2xx to B aimed at A's record, each with why that reaches nothing of A's
 * (`operation field` → reason). The test fails when one of them is refused after all (remove it)
 * and when any other is not.
 */
const NOT_REFUSED: Record<string, string> = {
  'domain.generateDomain serverId': "accepted and ignored (the peer's input): the host is made from this instance's own address, the same for every organization; no server's record is read",
  'domain.canGenerateTraefikMeDomains serverId': "accepted and ignored (the peer's input): answers this instance's own address, the same for every organization",
  'compose.previewTemplate serverId': "accepted and ignored (the peer's input): the template is processed from the input alone, nothing is saved and no server is read",
  ...both('ai.suggest serverId', "accepted and ignored (the peer's input): a suggestion is asked of the organization's own AI configuration and reads no server"),
  // gitlab.create makes a new connection of the caller's (in B): the peer's input carries these ids, and Berth ignores them.
  ...both('gitlab.create authId', 'the owner the peer names; Berth makes the caller the owner whatever it names'),
  ...both('gitlab.create gitlabId', 'ignored: a create makes its own id'),
  ...both('gitlab.create gitProviderId', 'ignored: a create makes its own id'),
  ...both('gitlab.create applicationId', "the GitLab OAuth application's client id, not a record of Berth: stored as given on B's new connection"),
  ...both('bitbucket.create authId', 'the owner the peer names; Berth makes the caller the owner whatever it names'),
  ...both('bitbucket.create bitbucketId', 'ignored: a create makes its own id'),
  ...both('bitbucket.create gitProviderId', 'ignored: a create makes its own id'),
  ...both('registry.update organizationId', 'accepted and ignored (the schema says so): a registry stays in its organization'),
  'tag.update organizationId': "accepted and ignored (the peer's input): a tag stays in its organization",
  'notification.updateSlack organizationId': "accepted and ignored (the peer's input): a channel stays in its organization (the other kinds' updates answer 400: B's channel is a Slack one)",
  // The older variant's projectId is read only without an environmentId: with B's environment it is ignored (alone, it is refused).
  ...Object.fromEntries(
    ['application', 'compose', 'postgres', 'mysql', 'mariadb', 'mongo', 'redis', 'libsql'].map(k => [
      `${k}.create projectId`,
      "ignored beside environmentId (B's): the older variant's field, read only without one",
    ]),
  ),
  // A backup's kind (databaseType, serviceType) says which id field it reads; the other kinds' ids are ignored, not stored.
  ...Object.fromEntries(['composeId', 'mongoId', 'mysqlId', 'postgresId', 'redisId', 'libsqlId'].map(f => [`backup.create ${f}`, "ignored: databaseType (mariadb) reads mariadbId, B's"])),
  'backup.create userId': "the peer's field, ignored: a backup belongs to its database's organization",
  ...Object.fromEntries(
    ['applicationId', 'mariadbId', 'mongoId', 'mysqlId', 'postgresId', 'redisId', 'libsqlId'].map(f => [`volumeBackups.create ${f}`, "ignored: serviceType (compose) reads composeId, B's"]),
  ),
  ...Object.fromEntries(
    ['composeId', 'applicationId', 'mariadbId', 'mongoId', 'mysqlId', 'postgresId', 'redisId', 'libsqlId'].flatMap(f =>
      Object.entries(both(`volumeBackups.update ${f}`, 'ignored: a volume backup keeps the workload it was made for (serviceType cannot change)')),
    ),
  ),
};

/** Fields of an operation that share a name with one of A's records but name something else (`operation field` → what). */
const NOT_A_RECORD: Record<string, string> = {
  'gitlab.getGitlabBranches id': "the project's number on the GitLab server",
  'compose.deployTemplate id': "a template of the catalog's",
  'auth.createUser id': 'an invitation, accepted without a session by whoever holds its id (the link mailed; plugins/auth and plugins/organization test invitations)',
  'auth.verifyLogin2FA id': 'a pending password login, asked for without a session',
  'ai.deploy id': "the suggestion's slug, the new stack's name",
  'customRole.create roleName':
    "the name the caller gives a new role of its own organization: names are per organization, so B's role of that name is B's and reads nothing of A's (customRole.update, remove and membersByRole are aimed at A's)",
  'sso.register providerId':
    "the id a new SSO provider is to have: ids are the instance's, as the peer's (each names public sign-in URLs, /api/sso/<providerId>/sign-in, which answer anyone whether it exists), so B's register of a taken one is refused (400 naming providerId) and reads nothing of A's; sso.one, update and deleteProvider are aimed at A's",
  'scim.generateToken providerId':
    "the name the caller gives its own organization's SCIM provider (names are per organization: the peer's instance-wide ones would tell B A's): B's call makes, or renews, B's provider of that name and reads nothing of A's (plugins/scim/test/scim.test.ts); scim.deleteProvider's is aimed at A's",
};

/** A 2xx that reads nothing: an empty list, as a search or list filtered by a record the caller cannot see answers. */
function answersNothing(r: Reply): boolean {
  const body = r.body?.result?.data ? r.body.result.data.json : r.body;
  return (
    r.status === 200 &&
    ((Array.isArray(body) && body.length === 0) ||
      (Array.isArray(body?.items) && body.items.length === 0 && body.total === 0) ||
      // auditLog.all's page, as the peer's: { logs, total }
      (Array.isArray(body?.logs) && body.logs.length === 0 && body.total === 0))
  );
}

/**
 * Whether a refusal is one: not found, forbidden, a 400, or an empty list (a search or a list
 * filtered by a record the caller cannot see). A 400 may name the field aimed at (a rule of the
 * input, such as "a workload stays on its host"): what it must not do is answer differently for
 * A's record than for none at all, which every refusal is compared with (`shown`).
 */
function refused(r: Reply, own: Reply, named: boolean): boolean {
  return (r.status === 400 && (own.status !== 400 || named)) || r.status === 403 || r.status === 404 || answersNothing(r);
}

/** Operations that take away the record they are given: their positive control gets a new record of B's. */
const REMOVES = /delete|remove/i;

/**
 * Calls with B's own record (the positive control) that do not answer 2xx, each with why the
 * failure is not about ownership: the keys it covers (`operation field[ alone]`), the status and
 * what B's own call answers (its body), and why. A failure counts as named only when all three match
 * (a 404 "not found" for B's own record is what a broken ownership check answers: no rule names
 * one loosely). The test fails when a call with B's own record fails unnamed, and when a rule
 * names no failure any more (remove it). Of these keys a 400 for A's record still counts as
 * refused, being the answer for no record at all too (the oracle check), and is counted apart.
 */
const OWN_FAILS: { keys: RegExp; status: number; body: RegExp; why: string }[] = [
  {
    keys: /^sso\.register organizationId( alone)?$/,
    status: 400,
    body: /oidcConfig: give either oidcConfig \(OpenID Connect\) or samlConfig/,
    why: "the matrix's input gives neither configuration (both optional in the peer's schema; a provider needs one): B's own organizationId gets past the ownership check to this (plugins/sso/test/sso.test.ts registers real ones)",
  },
  {
    keys: /^forwardAuth\.deployOnServer (serverId|providerId)( alone)?$/,
    status: 400,
    body: /providerId: Berth answers the checks itself/,
    why: 'the input\'s providerId (x, or an SSO provider of B) is no provider of forward auth: Berth\'s own is "berth" (forwardAuth.listProviders)',
  },
  {
    keys: /^forwardAuth\.deployOnServer providerId alone$/,
    status: 403,
    body: /only the instance's operators/,
    why: "alone, serverId is left out: this machine's proxy, which only the instance operators may act on (B's admin is none)",
  },
  {
    keys: /^forwardAuth\.enable domainId( alone)?$/,
    status: 400,
    body: /has no auth domain served by Berth yet/,
    why: "B's domain is on this machine, whose auth domain only the instance operators set (A's setup sets none): forward auth is refused until one is served",
  },
  {
    keys: /^backup\.create \w+ alone$/,
    status: 400,
    body: /mariadbId is required for this backup/,
    why: "alone, the input leaves out the database's id: databaseType's first value (mariadb) needs mariadbId",
  },
  {
    keys: /^backup\.manualBackup(Compose|Mariadb|Mongo|MySql|Redis|Libsql|WebServer) backupId$/,
    status: 400,
    body: /is a postgres backup/,
    why: "B's backup is of its PostgreSQL: another kind's manual backup refuses it",
  },
  { keys: /^backup\.manualBackupPostgres backupId$/, status: 400, body: /is not running: start it before a dump/, why: "B's PostgreSQL is made, never deployed: nothing to dump" },
  {
    keys: /^backup\.restoreBackup (databaseId|destinationId)$/,
    status: 404,
    body: /"message":"MariaDB not found"/,
    why: "databaseType's first value (mariadb) reads databaseId as a MariaDB's, and B's databaseId is its PostgreSQL",
  },
  { keys: /^environment\.duplicate environmentId$/, status: 409, body: /already has an environment named \\"x\\"/, why: "the copy's name is the same for every call (x): the first made it" },
  { keys: /^mounts\.create serviceId$/, status: 400, body: /hostPath: required for a bind mount/, why: "type's first value (bind) needs a hostPath the input leaves out" },
  {
    keys: /^mounts\.listByServiceId serviceId$/,
    status: 404,
    body: /"message":"Compose not found"/,
    why: "serviceType's first value (compose) reads serviceId as a stack's, and B's serviceId is its application",
  },
  {
    keys: /^mounts\.update \w+( alone)?$/,
    status: 400,
    body: /the mount belongs to a application \(serviceType\); set serviceType to move it/,
    why: "the input names serviceType's first value (compose) beside B's mount of an application: a mount moves only with its serviceType set",
  },
  {
    keys: /^(application|settings)\.\w+ \w+( alone)?$/,
    status: 400,
    body: /the active proxy provider is none/,
    why: "the matrix's server runs no proxy (one would start on the shared engine): Traefik's files are not there to read or write",
  },
  { keys: /^registry\.enableSelfHostedRegistry serverId$/, status: 400, body: /no proxy runs/, why: 'the self-hosted registry is reached through the proxy, and the matrix runs none' },
  {
    keys: /^(server|cluster|swarm|registry|network|docker)\.\w+ \w+( alone)?$/,
    status: 400,
    body: /has no SSH key: attach one/,
    why: "B's servers have no key (nothing connects to their documentation-range addresses): the operation stops before connecting",
  },
  {
    keys: /^settings\.clean\w+ serverId$/,
    status: 500,
    body: /The cleanup failed: Server \S+ has no SSH key/,
    why: "B's server has no key; the cleanup answers this with a 500 where a 400 is due (a defect of the cleanup's error mapping, reported to the lead)",
  },
  {
    keys: /^(application|compose)\.update \w+( alone)?$/,
    status: 400,
    body: /serverId: a workload stays on the host it was created on/,
    why: "the input fills serverId with B's server, and B's workload was made on this machine",
  },
  {
    keys: /^(application|compose|postgres|mysql|mariadb|mongo|redis|libsql)\.create serverId alone$/,
    status: 400,
    body: /environmentId: is required \(or projectId, in the older API\)/,
    why: "alone, the input leaves out environmentId (optional in the schema beside the older variant's projectId)",
  },
  {
    keys: /^application\.readLogs applicationId$/,
    status: 404,
    body: /"message":"Service app-[\w-]+ not found"/,
    why: "B's application was never deployed: the engine has no service of it (the message names the engine's service, not the record)",
  },
  {
    keys: /^(application|postgres|mysql|mariadb|mongo|redis|libsql)\.reload \w+Id$/,
    status: 400,
    body: /appName: does not match the (application|database)/,
    why: "the input's appName is a made-up one, not B's workload's",
  },
  {
    keys: /^(postgres|mysql|mariadb|mongo|redis)\.saveExternalPort \w+Id$/,
    status: 409,
    body: /externalPort 1 is already used on this host/,
    why: "the input's port (1) is the same for every call: another of B's databases took it first",
  },
  {
    keys: /^libsql\.saveExternalPorts libsqlId$/,
    status: 400,
    body: /externalPort: Either externalPort, externalGRPCPort, externalAdminPort must be provided/,
    why: "the matrix sends the id alone: no port to set (the peer's update fails on an empty change; Berth answers 400 naming the field)",
  },
  { keys: /^(postgres|mysql|mariadb|mongo)\.changePassword \w+Id$/, status: 400, body: /password: must match pattern/, why: "the matrix's password has spaces, which a database's password may not" },
  { keys: /^redis\.changePassword redisId$/, status: 400, body: /is not running: start it before changing its password/, why: "B's Redis is made, never deployed" },
  { keys: /^(postgres|mysql|mariadb|mongo|redis|libsql)\.readLogs \w+Id$/, status: 400, body: /has never been deployed: there are no logs to read yet/, why: "B's database is made, never deployed" },
  { keys: /^notification\.update\w+ \w+( alone)?$/, status: 400, body: /notificationId: is a slack channel, not \w+/, why: "B's notificationId is a Slack channel: another kind's update refuses it" },
  { keys: /^auth\.(update|updateByAdmin) id$/, status: 400, body: /currentPassword: is required to change the password/, why: 'the input sets a password without the current one' },
  {
    keys: /^(bitbucket|gitea|github)\.get\w+Branches \w+$/,
    status: 400,
    body: /branches: \w+: not found/,
    why: "the repository the input names (x/x) is not on the provider's stand-in: B's connection reached it and was told so",
  },
  {
    keys: /^(gitlab|bitbucket|gitea)\.update \w+( alone)?$/,
    status: 404,
    body: /"message":"Git provider not found"/,
    why: "the input's gitProviderId is that of B's GitHub connection (the records' gitProviderId), not of the connection updated: a pair naming two connections is no connection",
  },
  { keys: /^certificates\.create \w+( alone)?$/, status: 400, body: /certificateData: not a PEM certificate/, why: "the input's certificate is a made-up string" },
  { keys: /^compose\.deployTemplate \w+( alone)?$/, status: 400, body: /id: no template \\"[\w-]+\\" in the catalog/, why: "the input's id is a record id, not a template of the catalog's" },
  {
    keys: /^compose\.readLogs (composeId|containerId)$/,
    status: 404,
    body: /"message":"Container \w+ of this stack not found"/,
    why: "the input's containerId is B's container of the records (docker.*), no container of B's stack, which was never deployed",
  },
  { keys: /^deployment\.allByType id$/, status: 404, body: /"message":"Compose not found"/, why: "type's first value (compose) reads id as a stack's, and the input's id is B's admin's user id" },
  {
    keys: /^patch\.(byEntityId|ensureRepo|readRepoDirectories|readRepoFile|saveFileAsPatch|markFileForDeletion) id$/,
    status: 404,
    body: /"message":"Compose not found"/,
    why: "type's first value (compose) reads id as a stack's, and the input's id is B's admin's user id",
  },
  {
    keys: /^patch\.create (applicationId|composeId)$/,
    status: 400,
    body: /give one of (applicationId, composeId|composeId, applicationId), not both/,
    why: 'a patch belongs to one workload: the full input names two (alone, each makes its patch)',
  },
  {
    keys: /^schedule\.list id$/,
    status: 404,
    body: /"message":"Application not found"/,
    why: "scheduleType's first value (application) reads id as an application's, and the input's id is B's admin's user id",
  },
  { keys: /^deployment\.killProcess deploymentId$/, status: 400, body: /is not running: it is error/, why: "B's deployment (of an application with nothing to deploy) has ended in error" },
  {
    keys: /^domain\.create \w+( alone)?$/,
    status: 400,
    body: /applicationId: (give one of composeId, applicationId, not both|the workload the record belongs to is required)/,
    why: 'a domain belongs to one workload: the full input names two, the input of a preview alone none',
  },
  {
    keys: /^domain\.update domainId$/,
    status: 409,
    body: /host x with path \/ is already routed by another domain/,
    why: "the input's host (x) is the same for every call: another of B's domains took it first",
  },
  { keys: /^gitea\.create \w+( alone)?$/, status: 400, body: /giteaUrl: is not a URL/, why: "the input's giteaUrl is a made-up string" },
  {
    keys: /^security\.update securityId$/,
    status: 409,
    body: /username x already exists for this workload/,
    why: "the input's username (x) is the same for every call: another of B's entries took it first",
  },
  {
    keys: /^volumeBackups\.(list|restore) \w+( alone)?$/,
    status: 404,
    body: /"message":"Compose not found"/,
    why: "serviceType's first value (compose) reads id as a stack's, and the input's id is B's admin's user id",
  },
  { keys: /^volumeBackups\.create \w+ alone$/, status: 400, body: /serviceType is required: the workload whose volume it is/, why: 'alone, the input leaves out serviceType' },
  { keys: /^volumeBackups\.runManually volumeBackupId$/, status: 400, body: /volume x does not exist on this host/, why: "B's volume backup names a volume (x) no workload of B's ever made" },
  {
    keys: /^tag\.assignToProject (projectId|tagId)$/,
    status: 409,
    body: /This tag is already assigned to this project/,
    why: "both keys' controls put B's tag on B's project: the first did, and the peer refuses a second time",
  },
  {
    keys: /^settings\.(checkGPUStatus|setupGPU) serverId$/,
    status: 400,
    body: /has no SSH key: attach one/,
    why: "B's server has no key: the GPU check stops before connecting (plugins/cleanup/test/host-status.test.ts reads a kit host's)",
  },
  {
    keys: /^user\.sendInvitation (invitationId|notificationId)( alone)?$/,
    status: 400,
    body: /is a slack channel: only a channel that mails/,
    why: "B's notificationId is a Slack channel: an invitation is mailed through a channel that mails (plugins/organization/test/invitations.test.ts sends one through an email channel)",
  },
  {
    keys: /^cluster\.joinServer serverId alone$/,
    status: 403,
    body: /Without managerServerId this acts on Berth's own machine, which only the instance's operators/,
    why: "alone, the input leaves out managerServerId: the call acts on this machine, the instance operators' (B's admin is none): its scope, not the record's owner",
  },
];

const ownFailRule = (key: string, r: Reply) => OWN_FAILS.find(rule => rule.keys.test(key) && rule.status === r.status && rule.body.test(JSON.stringify(r.body)));

/**
 * A reply with a value replaced, to compare the answer for A's record with the answer for a record
 * that does not exist (random names an answer makes, such as a probe's object key, masked).
 */
const shown = (r: Reply, value: string, by: string) =>
  `${r.status} ${JSON.stringify(r.body)
    .split(value)
    .join(by)
    .replace(/[0-9a-f]{12,}/g, '<random>')}`;

/** Fields of A's reads that change on A's own schedule (notification.deliveries: a failing delivery's retries). */
const RETRIES = ['tries', 'lastAttemptAt', 'nextAttemptAt'];
/** Reads that answer this machine's swarm nodes as the engine does, and the fields a relabel changes. */
const NODE_READS = ['cluster.getNodes', 'swarm.getNodeInfo'];
const NODE_STAMPS = ['Version', 'UpdatedAt'];
/**
 * Reads of this machine's whole engine, which A (the instance operators) may make: every test file
 * that runs beside the matrix changes what they answer, so they are no read of A's records.
 */
const ENGINE_READS: Record<string, string> = {
  'settings.getDockerDiskUsage': "the engine's `docker system df`: every image, container and volume of the shared engine",
  'settings.checkInfrastructureHealth': "the engine's proxy service and the database, whatever runs beside",
  'docker.getContainers': "every container of the shared engine (an operator's), with its uptime",
  'swarm.getContainerStats': "a reading of every running container of the shared engine (an operator's)",
};
/** The prefix of a node's placement label per organization (docs/swarm-nodes.md, placement by ownership). */
const PLACEMENT_LABEL = 'berth.org.';

/** A's records as A reads them: every read whose required input is ids of A's records, or nothing. */
async function readAll(c: Client, reads: { op: Operation; input: Record<string, unknown> }[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  // Reads change nothing: a few at a time.
  await inPool(
    AT_ONCE,
    reads.map(({ op, input }) => async () => {
      const r = await c.get(op.path, input);
      // A's own deliveries retry on their schedule while the matrix runs: their attempts are not B's
      // doing. Nor is a node of this machine's swarm gaining or losing an organization's placement
      // label (B's first deploy adds B's; other servers on the same engine add theirs), which bumps
      // the node's version: the node is compared without them. A domain's resolution check runs on
      // A's schedule too: under load the resolver times out where it answered "not found".
      const node = NODE_READS.includes(op.path);
      const kept = (k: string, v: unknown) => (RETRIES.includes(k) || (node && (NODE_STAMPS.includes(k) || k.startsWith(PLACEMENT_LABEL))) ? undefined : v);
      out.set(op.path, `${r.status} ${JSON.stringify(r.body, kept).replace(/does not resolve \(E[A-Z]+\)/g, 'does not resolve (<resolver>)')}`);
    }),
  );
  return out;
}

// The positive controls add a call per key: past 10 minutes on a loaded two-core machine.
t.setTimeout(1_500_000);

t.test("organization B reaches no record of organization A's through any operation", async t => {
  // No proxy: nothing here should reach one, and a domain change would start one on the shared engine.
  const standIns = await fuzzStandIns(t);
  const server = await startTestServer({ proxy: 'none', ...standIns.config });
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server);
  const a = admin.client;
  const records = await fuzzRecords(t, server, a, admin, { bitbucket: standIns.bitbucket });
  const ids = records.ids;
  // B's admin is another account: made in A, given an organization of its own, then removed from A.
  const stranger = await addMember(server, a, 'stranger@example.com');
  const other = await otherOrganization(server, stranger.userId);
  const b = other.client;
  t.equal((await a.post('user.remove', { userId: stranger.userId })).status, 200, "B's admin is no member of A");
  t.equal((await b.get('project.all')).status, 200, 'and acts in B');
  // B's own records fill every other id field, so a call gets past its input's shape to the record aimed at.
  const ownRecords = await fuzzRecords(t, server, b, { userId: stranger.userId, organizationId: other.organizationId }, { portBase: 21000, bitbucket: standIns.bitbucket });
  const own = ownRecords.ids;

  const operations = await documentOperations(a);
  const idFields = idFieldsOf(operations);
  // The fields aimed at: every id field with one of A's records behind it.
  const aimed = (op: Operation) => Object.keys(op.schema.properties ?? {}).filter(f => f in ids && !NO_RECORD[f] && !NOT_A_RECORD[`${op.path} ${f}`]);
  t.same(
    Object.keys(NOT_A_RECORD).filter(k => !operations.some(op => k === `${op.path} ${k.split(' ')[1]}` && k.split(' ')[1]! in (op.schema.properties ?? {}))),
    [],
    'NOT_A_RECORD names only fields of the document',
  );

  // A's reads: GET operations of one or more of A's ids or no input at all, answering 200, and the
  // same twice in a row (a read of the engine or the clock is left out, named in the output).
  const candidates = operations
    .filter(op => op.method === 'get')
    .map(op => ({ op, input: goodValue('', op.schema, ids) as Record<string, unknown> }))
    .filter(({ op }) => (op.schema.required ?? []).every((f: string) => f in ids && !NO_RECORD[f]) && !ENGINE_READS[op.path]);
  const first = await readAll(a, candidates);
  const second = await readAll(a, candidates);
  const unstable = candidates.filter(({ op }) => first.get(op.path) !== second.get(op.path)).map(({ op }) => op.path);
  const reads = candidates.filter(({ op }) => first.get(op.path)!.startsWith('200 ') && !unstable.includes(op.path));
  t.comment(`${reads.length} reads of A's records; left out, answering differently twice in a row: ${unstable.join(' ') || 'none'}`);
  const before = await readAll(a, reads);
  const seen = [...before.values()].join('\n');
  t.same(
    [...idFields].filter(f => f in ids && !NO_RECORD[f] && !seen.includes(ids[f]!)),
    [],
    "every record aimed at shows in one of A's reads (a remover that took it would be seen)",
  );

  // What B must never be answered: A's record ids and the names of A's records.
  const secrets = new Set<string>(Object.values(ids));
  // Names are taken from records only (objects with an id field), not from the document's own descriptions.
  const collect = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(collect);
    else if (v && typeof v === 'object') {
      const isRecord = Object.keys(v).some(k => /Id$|^id$/.test(k));
      for (const [k, x] of Object.entries(v)) {
        if (typeof x === 'string' && isRecord && /^(name|appName|host|email|username|registryName)$/.test(k) && x.length >= 8) secrets.add(x);
        else collect(x);
      }
    }
  };
  for (const value of before.values()) collect(JSON.parse(value.slice(value.indexOf(' ') + 1)));

  const leaks: string[] = [];
  const oracles: string[] = [];
  const notRefused: string[] = [];
  // The positive controls: B's call with its own record in the aimed field, by key.
  const controlled: string[] = [];
  const ownFailed: string[] = [];
  const named = new Map<(typeof OWN_FAILS)[number], number>();
  // Every key called, so the currency checks hold for a part of the document too (BERTH_FUZZ_ONLY).
  const calledKeys: string[] = [];
  let uncontrolled400 = 0;
  const controlledOperations = new Set<string>();
  const statuses = new Map<number, number>();
  let sent = 0;
  const started = Date.now();
  // Every call of B is refused or reaches only B's own records, so the calls are independent of
  // each other: a few at a time (one at a time leaves the server and PostgreSQL half idle). A
  // key's positive control, its call aimed at A's record and its twin naming no record go one
  // after the other.
  const calls: (() => Promise<void>)[] = [];
  const count = (r: Reply) => {
    sent++;
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
  };
  for (const op of operations) {
    const removes = REMOVES.test(op.path.split('.')[1] ?? '');
    for (const field of aimed(op)) {
      // Two inputs: B's records in every other id field, and in the required ones only (an optional
      // field is often read only when another is absent: projectId when no environmentId).
      // (goodValue takes a string for a field by its name: B's ids, the stand-ins' values, and GOOD's.)
      const alone: Record<string, unknown> = { ...(goodValue('', op.schema, { ...ownRecords.values, ...own }) as Record<string, unknown>), [field]: ids[field] };
      const full: Record<string, unknown> = { ...alone };
      for (const f of Object.keys(op.schema.properties ?? {})) if (f in own && !NO_RECORD[f] && !NOT_A_RECORD[`${op.path} ${f}`]) full[f] ??= own[f];
      for (const [variant, input] of [
        ['', full],
        [' alone', alone],
      ] as const) {
        if (variant && JSON.stringify(input) === JSON.stringify(full)) continue;
        const key = `${op.path} ${field}${variant}`;
        const forms = [
          // An upload goes as multipart/form-data on both forms, as the peer's clients send it.
          ['rest', (i: Record<string, unknown>) => (op.upload ? sendUpload(b, op, i) : op.method === 'get' ? b.get(op.path, i) : b.post(op.path, i))],
          ['trpc', (i: Record<string, unknown>) => (op.upload ? sendUpload(b, op, i, true) : b.trpc(op.method === 'get' ? 'query' : 'mutation', op.path, i))],
        ] as const;
        calledKeys.push(key);
        calls.push(async () => {
          // The positive control: the same input with B's own record (a new one, of an operation
          // that removes what it is given) must get past the ownership check.
          const mine = removes && ownRecords.has(field) ? await ownRecords.fresh(field) : own[field];
          const control = await forms[0][1]({ ...input, [field]: mine });
          count(control);
          const rule = control.status >= 300 ? ownFailRule(key, control) : undefined;
          if (control.status >= 200 && control.status < 300) {
            controlled.push(key);
            controlledOperations.add(op.path);
          } else if (rule) named.set(rule, (named.get(rule) ?? 0) + 1);
          else {
            ownFailed.push(`${key} (${control.status} ${JSON.stringify(control.body).slice(0, 200)})`);
            // BERTH_FUZZ_REPORT=<file> keeps the unnamed failed positive controls in full as they come, to chase them.
            if (process.env.BERTH_FUZZ_REPORT) appendFileSync(process.env.BERTH_FUZZ_REPORT, `${ownFailed.at(-1)}\n`);
          }
          for (const [form, reply] of forms) {
            const r = await reply(input);
            count(r);
            if (r.status === 400 && control.status === 400 && rule) uncontrolled400++;
            if (!refused(r, control, !!rule)) notRefused.push(`${key} (${form} ${r.status} ${JSON.stringify(r.body).slice(0, 160)})`);
            else {
              // B cannot tell A's record from none: the same answer for a record that does not exist.
              // (of the id's own alphabet: a lowercase one, such as a SCIM provider id, would be a 400 of its pattern in capitals)
              const missing = (/^[a-z0-9-]+$/.test(ids[field]!) ? 'm' : 'M').repeat(ids[field]!.length);
              const none = await reply({ ...input, [field]: missing });
              sent++;
              const [mine, nothing] = [shown(r, ids[field]!, '<id>'), shown(none, missing, '<id>')];
              if (mine !== nothing) oracles.push(`${key} (${form}): ${mine.slice(0, 160)} ≠ ${nothing.slice(0, 160)}`);
            }
            const text = JSON.stringify(r.body);
            const sentValues = new Set(Object.values(input).filter(v => typeof v === 'string'));
            const leaked = [...secrets].filter(s => !sentValues.has(s) && text.includes(s));
            if (leaked.length) leaks.push(`${key} (${form} ${r.status}): ${leaked.join(', ')}`);
          }
        });
      }
    }
  }
  await inPool(AT_ONCE, calls);
  const figures = [...statuses.entries()]
    .sort(([x], [y]) => x - y)
    .map(([s, n]) => `${s}×${n}`)
    .join(', ');
  t.comment(`${sent} requests of B in ${((Date.now() - started) / 1000).toFixed(1)} s: ${figures}`);

  const namedCount = [...named.values()].reduce((x, y) => x + y, 0);
  t.comment(
    `positive controls: ${controlledOperations.size} operations answered B's own records (${controlled.length} of ${controlled.length + namedCount + ownFailed.length} calls); ${namedCount} failed for a reason OWN_FAILS names (${uncontrolled400} of their refusals of A's record a 400)`,
  );
  t.same(ownFailed.sort().slice(0, 60), [], `every call with B's own record in the aimed field answers 2xx (the positive control), or OWN_FAILS says why not (${ownFailed.length} did not)`);
  t.same(
    OWN_FAILS.filter(rule => !named.has(rule) && calledKeys.some(k => rule.keys.test(k))).map(rule => rule.why),
    [],
    "every rule of OWN_FAILS still names a failing call with B's own record (else remove it)",
  );
  const unexpected = notRefused.filter(n => !NOT_REFUSED[n.slice(0, n.indexOf(' ('))]);
  t.same(unexpected.sort(), [], 'every call of B aimed at a record of A is refused');
  t.same(
    Object.keys(NOT_REFUSED).filter(k => calledKeys.includes(k) && !notRefused.some(n => n.startsWith(`${k} (`))),
    [],
    'every exception of NOT_REFUSED is still answered 2xx (else remove it)',
  );
  t.same(leaks.sort(), [], "no answer to B holds A's record ids or names");
  t.same(oracles.sort(), [], "every refusal answers B as for a record that does not exist (B cannot tell A's records from none)");

  // The positive controls ran B's deploys, starts and reloads on the shared engine: B's workloads
  // go, and their services and containers with them.
  for (const [op, field] of [
    ['application.delete', 'applicationId'],
    ['compose.delete', 'composeId'],
    ...['postgres', 'mysql', 'mariadb', 'mongo', 'redis', 'libsql'].map(k => [`${k}.remove`, `${k}Id`]),
  ] as const) {
    const r = await b.post(op, { [field]: own[field], ...(op === 'compose.delete' ? { deleteVolumes: true } : {}) });
    t.equal(r.status, 200, `B's ${field} removed (${op})`);
  }

  const after = await readAll(a, reads);
  // What changed, to chase a finding.
  for (const { op } of reads) if (before.get(op.path) !== after.get(op.path)) t.comment(`${op.path} before: ${before.get(op.path)!.slice(0, 2000)}\nafter: ${after.get(op.path)!.slice(0, 2000)}`);
  t.same(
    reads.map(({ op }) => op.path).filter(p => before.get(p) !== after.get(p)),
    [],
    "every read of A's records answers as before: B wrote, removed and ran nothing of A's",
  );
});
