// The relations a workload's `one` (and the peer's other record answers) carries, in the peer's
// shapes: where it lives (its environment and project), what hangs off it (mounts, ports,
// deployments, domains, redirects, basic-auth users: item schemas from their plugins, an empty
// list when a plugin is disabled) and
// the relations of namespaces Berth does not serve yet (always an empty list or null).
import Type, { type TObject, type TProperties } from 'typebox';
import { Placement, optionalService, schema, type Cradle, type EntityManager } from '@berth/core';
const { Nullable, Timestamp } = schema;

/** A list of a namespace no plugin serves yet: always empty. */
export const NotServedList = (what: string) => Type.Array(Type.Object({}), { maxItems: 0, description: `${what}: empty until a plugin serves them` });
/** A relation to a namespace no plugin serves yet: always null. */
export const NotServedOne = (what: string) => Type.Null({ description: `${what}: null until a plugin serves it` });

/** The server a workload's serverId names, as its answers join it (null without one, or when no plugin keeps servers). */
export async function serverRelation(cradle: Cradle, serverId: unknown, organizationId: string, em: EntityManager) {
  return (await optionalService(cradle, 'workloadServers')?.relation(serverId, organizationId, em)) ?? null;
}

/** A registry a workload's id field names (no password), as its answers join it; null without one, or when no plugin keeps registries. */
export async function registryRelation(cradle: Cradle, registryId: unknown, organizationId: string, em: EntityManager) {
  return (await optionalService(cradle, 'workloadRegistries')?.relation(registryId, organizationId, em)) ?? null;
}

/** What became of the push webhook Berth registers on the workload's linked repository (null without the deploy-hook plugin, or when none was asked for). */
export async function webhookRegistration(cradle: Cradle, kind: string, id: string, em: EntityManager): Promise<string | null> {
  return (await optionalService(cradle, 'workloadHooks')?.webhookRegistration(kind, id, em)) ?? null;
}

/**
 * The git connections a workload's settings name, under each forge's id (the peer's github,
 * gitlab, bitbucket, gitea; a forge's own), as its answers join them; each null without one.
 * `git`: the git provider plugin's service, which the kind looks up (undefined when that plugin is
 * disabled: then every forge's is null); `forges`: the enabled forges' ids.
 */
export async function gitRelations(git: Cradle['gitProviders'] | undefined, forges: readonly string[], settings: Record<string, unknown>, organizationId: string, em: EntityManager) {
  return git ? git.relations(settings, organizationId, em) : Object.fromEntries(forges.map(id => [id, null]));
}

/**
 * The schemas of a workload's relations (made once every plugin is set up). `git`: the git provider
 * plugin's service, for a kind that deploys from forges (it looks it up; undefined when that plugin
 * is disabled, or for a kind that does not: then each enabled forge's relation is always null).
 */
export function relationSchemas(cradle: Cradle, git?: Cradle['gitProviders']) {
  const mounts = optionalService(cradle, 'mounts');
  const ports = optionalService(cradle, 'ports');
  const deployments = optionalService(cradle, 'workloadDeployments');
  const backups = optionalService(cradle, 'backupDirectory');
  const proxied = optionalService(cradle, 'domains')?.viewSchemas();
  const servers = optionalService(cradle, 'workloadServers');
  const registries = optionalService(cradle, 'workloadRegistries');
  return {
    environment: Placement,
    mounts: mounts ? Type.Array(mounts.viewSchema()) : NotServedList('mounts'),
    ports: ports ? Type.Array(ports.viewSchema()) : NotServedList('ports'),
    deployments: deployments ? Type.Array(deployments.viewSchema()) : NotServedList('deployments'),
    server: servers ? Nullable(servers.relationSchema()) : NotServedOne('the remote server'),
    registry: registries ? Nullable(registries.relationSchema()) : NotServedOne('the registry'),
    /** Per enabled forge (under its id), the connection the workload deploys from. */
    git: git ? git.relationSchemas() : Object.fromEntries(cradle.providers.ids('git').map(id => [id, NotServedOne(`the ${id} connection`)])),
    backups: backups ? Type.Array(backups.viewSchema()) : NotServedList('backups'),
    domains: proxied ? Type.Array(proxied.domains) : NotServedList('domains'),
    redirects: proxied ? Type.Array(proxied.redirects) : NotServedList('redirects'),
    security: proxied ? Type.Array(proxied.security) : NotServedList('basic-auth entries'),
    /** Berth's own: the linked repository's push webhook, registered or why not (the delivery log keeps every such line). */
    webhookRegistration: Nullable(
      Type.String({
        description:
          "Berth's own: the push webhook Berth registers on the linked repository — where it was registered, or why none was (no publicUrl: how to add one by hand); null when the source asks for none",
      }),
    ),
  };
}

/**
 * A workload as environment and project reads list it: the peer's columns of a service
 * (name, appName, description, createdAt, serverId and its status — applicationStatus, or the
 * kind's own status field) under its id field, and its server (null until remote servers come).
 * `extra`: a kind's own listed columns (icon...).
 */
export const workloadSummary = (idField: string, extra: TProperties = {}, statusField = 'applicationStatus') =>
  Type.Object({
    [idField]: Type.String(),
    name: Type.String(),
    appName: Type.String(),
    description: Nullable(Type.String()),
    createdAt: Timestamp(),
    serverId: Nullable(Type.String()),
    [statusField]: Type.String(),
    ...extra,
    server: NotServedOne('the remote server'),
  });

/** The summary's fields of a workload's view. */
export function summaryOf(view: Record<string, unknown>, summary: TObject): Record<string, unknown> {
  return Object.fromEntries(Object.keys(summary.properties).map(k => [k, k === 'server' ? null : (view[k] ?? null)]));
}

/** The peer's lists of services that no kind of Berth serves yet: always empty until one registers under that key. */
export const peerListKeys = ['compose', 'libsql']; // kind-names: the peer's keys, empty lists while no registered kind serves them (the compose plugin can be disabled)
