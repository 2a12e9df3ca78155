// The organization-wide reads of deployments in the peer's shapes: allCentralized (each
// deployment joined with the workload it deployed, where it lives, and its servers) and queueList
// (the unfinished deployments as the peer's queue library lists its jobs, with the path of each
// service's page). The joins are derived from the workload registry: every registered kind
// answers its workloads under its own name; the peer's kinds that are not registered are null.
import { optionalService, Type, schema, type Cradle, type EntityManager, type EnvironmentDirectory, type TSchema } from '@berth/core';
import type { WorkloadKind, WorkloadRegistry } from '@berth/plugin-workloads';
import type { DeploymentView, TargetField } from './schemas.ts';

const { Nullable } = schema;
/** An object schema's fields. */
type Fields = { properties: Record<string, TSchema> };

/** The peer's owners of a deployment in allCentralized: null while no registered kind serves them. */
const PEER_OWNERS = ['application', 'compose']; // kind-names: the peer's relation names, null for a kind whose plugin is disabled

/** Where a workload lives, as allCentralized names it: its environment and that environment's project. */
const Whereabouts = Type.Object({ environmentId: Type.String(), name: Type.String(), project: Type.Object({ projectId: Type.String(), name: Type.String() }) });
type Whereabouts = { environmentId: string; name: string; project: { projectId: string; name: string } };

/** A server as allCentralized joins it (the one a deployment ran on or built on, a workload's). */
const ServerObject = Type.Object({ serverId: Type.String(), name: Type.String(), serverType: Type.String({ description: 'deploy or build' }) });
const ServerRef = (description: string) => Type.Union([ServerObject, Type.Null()], { description });
type ServerRef = { serverId: string; name: string; serverType: string } | null;

/** A kind's workload as allCentralized joins it: the kind's summary (as environment reads list it) and where it lives. */
// cast: a kind declares its listItem as any schema; every built-in one is an object.
const ownerSchema = (kind: WorkloadKind) =>
  Type.Object({
    ...(kind.listItem as unknown as Fields).properties,
    environment: Whereabouts,
    server: ServerRef("the workload's remote server (null: this machine)"),
    buildServer: ServerRef('the build server this deployment built on (null: it built where it runs)'),
  });

/** The names a deployment's workload may be joined under: every registered kind, then the peer's others. */
const ownerNames = (kinds: WorkloadKind[]) => [...kinds.map(k => k.kind), ...PEER_OWNERS.filter(o => !kinds.some(k => k.kind === o))];

export function centralizedSchemas(kinds: WorkloadKind[], DeploymentView: Fields) {
  const owners: Record<string, TSchema> = Object.fromEntries(
    ownerNames(kinds).map(name => {
      const kind = kinds.find(k => k.kind === name);
      return [name, kind ? Nullable(ownerSchema(kind)) : Type.Null({ description: `always null: no ${name} kind is registered here` })];
    }),
  );
  return {
    CentralizedDeployment: Type.Object({
      ...DeploymentView.properties,
      ...owners,
      server: ServerRef('the remote server that ran it (null: this machine)'),
      buildServer: ServerRef('the build server it built on (null: it built where it runs)'),
    }),
    QueueJob: Type.Object({
      id: Type.String({ description: "the deployment's id" }),
      name: Type.String({ description: 'what the job does (deploy, redeploy, start, backup...)' }),
      data: Type.Object(
        {
          deploymentId: Type.String(),
          titleLog: Type.String(),
          descriptionLog: Nullable(Type.String()),
          type: Type.String({ description: 'what the job does, as name' }),
          applicationType: Type.String({ description: "what it belongs to: the deployment's targetType" }),
          server: Type.Boolean({ description: 'whether it runs on a remote server' }),
          serverId: Nullable(Type.String()),
        },
        { additionalProperties: Nullable(Type.String()), description: "the job's data: the fields above and the id field of what it belongs to (applicationId, composeId, postgresId, backupId...)" },
      ),
      timestamp: Type.Number({ description: 'when it was queued (ms since the epoch)' }),
      processedOn: Type.Optional(Type.Number({ description: 'when it started running (ms since the epoch); absent while it waits' })),
      state: Type.Union([Type.Literal('waiting'), Type.Literal('active')], { description: 'waiting (queued) or active (running)' }),
      servicePath: Type.Object({
        href: Nullable(Type.String({ description: "the path of its service's page in the peer's dashboard; null when it belongs to no workload" })),
        label: Type.String({ description: "what it belongs to (the kind's label), or — for none" }),
      }),
    }),
  };
}

interface Owner {
  kind: WorkloadKind;
  summary: Record<string, unknown>;
  where: Whereabouts;
}

/**
 * The workloads the deployments belong to, within the organization, keyed `<kind>:<id>`: one
 * query per workload and environment, then one per kind. The environments are asked for only
 * when a workload is found; without the environment plugin nothing is joined.
 */
async function ownersOf(
  views: DeploymentView[],
  workloads: WorkloadRegistry,
  environments: () => EnvironmentDirectory | undefined,
  organizationId: string,
  em: EntityManager,
): Promise<Map<string, Owner>> {
  const out = new Map<string, Owner>();
  const wanted = new Map<string, { kind: WorkloadKind; id: string }>();
  for (const v of views) {
    const kind = workloads.kind(v.targetType);
    if (kind) wanted.set(`${kind.kind}:${v.targetId}`, { kind, id: v.targetId });
  }
  const byKind = new Map<WorkloadKind, Map<string, string>>(); // kind → id → environmentId
  for (const { kind, id } of wanted.values()) {
    const ref = await kind.find(id, em);
    if (!ref || ref.organizationId !== organizationId) continue;
    if (!byKind.has(kind)) byKind.set(kind, new Map());
    byKind.get(kind)!.set(id, ref.environmentId);
  }
  const places = new Map<string, Whereabouts>();
  const directory = byKind.size ? environments() : undefined;
  if (!directory) return out; // no environment plugin: no workload lives anywhere
  for (const environmentId of new Set([...byKind.values()].flatMap(m => [...m.values()]))) {
    const { project, ...environment } = await directory.placement(environmentId, organizationId, em);
    places.set(environmentId, { environmentId: environment.environmentId, name: environment.name, project: { projectId: project.projectId, name: project.name } });
  }
  for (const [kind, ids] of byKind) {
    const listed = await kind.list([...new Set(ids.values())], em);
    for (const summary of [...listed.values()].flat()) {
      const id = String(summary[kind.idField]);
      const environmentId = ids.get(id);
      if (environmentId) out.set(`${kind.kind}:${id}`, { kind, summary, where: places.get(environmentId)! });
    }
  }
  return out;
}

/** The organization's servers the ids name, as allCentralized joins them (one query each; null without the server plugin). */
async function serversOf(ids: (string | null)[], cradle: Cradle, organizationId: string, em: EntityManager): Promise<Map<string, ServerRef>> {
  const servers = optionalService(cradle, 'workloadServers');
  const out = new Map<string, ServerRef>();
  for (const id of new Set(ids.filter((i): i is string => Boolean(i)))) {
    const found = (await servers?.relation(id, organizationId, em)) as { serverId: string; name: string; serverType: string } | null | undefined;
    out.set(id, found ? { serverId: found.serverId, name: found.name, serverType: found.serverType } : null);
  }
  return out;
}

/** allCentralized's entries: each deployment with its workload under its kind's name (null under the others), the server it ran on and the build server it built on. */
export async function centralized(views: DeploymentView[], cradle: Cradle, environments: () => EnvironmentDirectory | undefined, organizationId: string, em: EntityManager) {
  const { workloads } = cradle;
  const owners = await ownersOf(views, workloads, environments, organizationId, em);
  const names = ownerNames(workloads.kinds());
  const servers = await serversOf(
    views.flatMap(v => [v.serverId, v.buildServerId, owners.get(`${v.targetType}:${v.targetId}`)?.summary.serverId as string | null]),
    cradle,
    organizationId,
    em,
  );
  const server = (id: unknown) => (typeof id === 'string' ? (servers.get(id) ?? null) : null);
  return views.map(v => {
    const owner = owners.get(`${v.targetType}:${v.targetId}`);
    const joined = owner && { ...owner.summary, environment: owner.where, server: server(owner.summary.serverId), buildServer: server(v.buildServerId) };
    return { ...v, ...Object.fromEntries(names.map(n => [n, owner && owner.kind.kind === n ? joined : null])), server: server(v.serverId), buildServer: server(v.buildServerId) };
  });
}

const millis = (at: string | null) => (at ? Date.parse(at) : undefined);

/** queueList's entries: the unfinished deployments as the peer's queue jobs, newest first as the peer sorts them. */
export async function queueJobs(
  views: DeploymentView[],
  targets: TargetField[],
  workloads: WorkloadRegistry,
  environments: () => EnvironmentDirectory | undefined,
  organizationId: string,
  em: EntityManager,
) {
  const owners = await ownersOf(views, workloads, environments, organizationId, em);
  return [...views]
    .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt))
    .map(v => {
      const owner = owners.get(`${v.targetType}:${v.targetId}`);
      const idField = targets.find(t => t.type === v.targetType)?.idField;
      const processedOn = millis(v.startedAt);
      return {
        id: v.deploymentId,
        name: v.action,
        data: {
          deploymentId: v.deploymentId,
          titleLog: v.title,
          descriptionLog: v.description,
          type: v.action,
          applicationType: v.targetType,
          server: v.serverId !== null,
          serverId: v.serverId,
          ...(idField ? { [idField]: v.targetId } : {}),
        },
        timestamp: millis(v.createdAt)!,
        ...(processedOn !== undefined ? { processedOn } : {}),
        state: (v.state === 'running' ? 'active' : 'waiting') as 'active' | 'waiting',
        servicePath: owner
          ? { href: `/dashboard/project/${owner.where.project.projectId}/environment/${owner.where.environmentId}/services/${owner.kind.kind}/${v.targetId}`, label: owner.kind.label }
          : { href: null, label: '—' },
      };
    });
}
