// What a compose file may reach of other workloads is its organization's, as for a mount: an
// `external` (or explicitly `name:`d) volume is checked as a volume mount is (the mounts plugin's
// one check: another organization's mount or workload holds it → 409; the engine's labels name
// another organization → 409), an external or named network as a workload's network is (its
// organization's own network, networks labelled with it; never another organization's nor, outside
// the instance operators' organization, the platform network → 403), and `volumes_from` or
// `network_mode` naming a container must name one of the organization's (409), or a service of the
// file itself (400). Checked when the file is saved (raw stacks) and again on the file as it will
// run, its names interpolated from the deploy's env.
import type Docker from 'dockerode';
import { isMap, isScalar, isSeq, type YAMLMap } from 'yaml';
import { BerthError, optionalService, type Cradle, type EntityManager } from '@berth/core';
import { ORGANIZATION_LABEL, ORGANIZATION_NETWORK_PREFIX, joinableNetworks } from '@berth/plugin-workloads';
import { parseCompose, type ComposeType, type ServiceNetworkPlan } from './file/index.ts';
import { interpolate } from './file/interpolate.ts';

/** Whose stack it is: its organization and host. */
export interface StackOwner {
  organizationId: string;
  serverId: string | null;
}

const issue = (code: 'BAD_REQUEST' | 'CONFLICT', field: string, message: string) => new BerthError(code, `${field}: ${message}`, [{ path: field.split('.'), message: `${field}: ${message}` }]);

const keyOf = (item: { key: unknown }) => String((item.key as { value?: unknown }).value ?? item.key);

/** The engine of the stack's host, or null when it cannot be asked now (the deploy asks again). At save time only this machine's is asked: a server's would be connected to for it. */
async function engineOf(cradle: Cradle, serverId: string | null, deploying: boolean): Promise<Docker | null> {
  if (serverId !== null && !deploying) return null;
  try {
    return await (await cradle.hosts.of(serverId)).engine();
  } catch {
    return null;
  }
}

async function labelsOf(what: Promise<{ Labels?: Record<string, string> | null; Config?: { Labels?: Record<string, string> | null } }>): Promise<Record<string, string> | null> {
  try {
    const info = await what;
    return info.Config?.Labels ?? info.Labels ?? {};
  } catch {
    // Absent (404), or a name the engine refuses: the program fails on it, nothing of anyone's is reached.
    return null;
  }
}

/**
 * Throws the first refusal of the file's references to volumes, networks and containers that are
 * not the organization's. `vars` (deploy time) interpolates the names; without it (save time) a
 * name that interpolates is left to the deploy.
 */
export async function assertOwnReferences(text: string, owner: StackOwner, cradle: Cradle, em: EntityManager, vars?: Record<string, string>): Promise<void> {
  let doc: ReturnType<typeof parseCompose>;
  try {
    doc = parseCompose(text);
  } catch (e) {
    // Not a compose file at all: nothing it names can be checked, and nothing of it can run.
    throw issue('BAD_REQUEST', 'composeFile', (e as Error).message);
  }
  const docker = await engineOf(cradle, owner.serverId, vars !== undefined);
  const { hosts, hostAccess } = cradle;
  const network = await hosts.networkOf(owner.organizationId);
  const operators = network === hosts.platformNetwork;
  const mounts = optionalService(cradle, 'mounts');

  /** The name as the program will read it; null: it interpolates and this is save time. */
  const nameOf = (raw: string, field: string): string | null => {
    if (!raw.includes('$')) return raw;
    if (!vars) return null;
    const name = interpolate(raw, vars);
    if (name === null) throw issue('BAD_REQUEST', field, `"${raw}" does not interpolate from the stack's environment`);
    return name;
  };

  /** The explicit name of a top-level volume or network (external, or `name:`); null for one the program names after the project. */
  const explicit = (value: unknown, key: string): string | null => {
    if (!isMap(value)) return null;
    const external = value.get('external');
    const name = value.get('name');
    const externalName = isMap(external) ? external.get('name') : undefined;
    if (typeof externalName === 'string') return externalName;
    if (typeof name === 'string') return name;
    return external === true || external === 'true' ? key : null;
  };

  for (const item of (doc.get('volumes') as YAMLMap | undefined)?.items ?? []) {
    const key = keyOf(item);
    const field = `composeFile.volumes.${key}`;
    const raw = explicit(item.value, key);
    const name = raw === null ? null : nameOf(raw, field);
    if (name === null) continue;
    const own = (await mounts?.assertOwnVolume(name, owner, em, field)) ?? false;
    const labels = docker ? await labelsOf(docker.getVolume(name).inspect()) : null;
    const org = labels?.[ORGANIZATION_LABEL];
    if (org && org !== owner.organizationId) throw issue('CONFLICT', field, `the volume ${name} belongs to another organization`);
    // A volume on the engine that nothing of Berth's attributes to the organization is this machine's: the instance operators' alone.
    if (labels && !org && !own && !operators) throw issue('CONFLICT', field, `the volume ${name} exists on this host and is not this organization's`);
  }

  for (const item of (doc.get('networks') as YAMLMap | undefined)?.items ?? []) {
    const key = keyOf(item);
    const field = `composeFile.networks.${key}`;
    const raw = explicit(item.value, key);
    const name = raw === null ? null : nameOf(raw, field);
    if (name === null || name === network) continue;
    const labels = docker ? await labelsOf(docker.getNetwork(name).inspect()) : null;
    const refusal = hostAccess.tenancyRefusal({ name, labels: labels ?? {} }, { organizationId: owner.organizationId, network, platformNetwork: hosts.platformNetwork }, field);
    // A network the program would create (none of that name yet) under a name no organization's network has is the stack's own.
    if (refusal && (labels !== null || name === hosts.platformNetwork || name.startsWith(ORGANIZATION_NETWORK_PREFIX))) throw refusal;
  }

  const services = doc.get('services');
  const serviceNames = new Set(isMap(services) ? services.items.map(keyOf) : []);
  /** A container named by the file must be the organization's (its Berth labels say so). */
  const assertOwnContainer = async (raw: string, field: string) => {
    const name = nameOf(raw, field);
    if (name === null || !docker) return;
    const labels = await labelsOf(docker.getContainer(name).inspect());
    if (labels === null) throw issue('BAD_REQUEST', field, `no container ${name} on this host`);
    const org = labels[ORGANIZATION_LABEL];
    if (org === owner.organizationId || (!org && operators)) return;
    throw issue('CONFLICT', field, `the container ${name} is not this organization's`);
  };
  for (const item of isMap(services) ? services.items : []) {
    const svc = item.value;
    if (!isMap(svc)) continue;
    const field = `composeFile.services.${keyOf(item)}`;
    const mode = svc.get('network_mode');
    if (typeof mode === 'string') {
      if (mode.startsWith('container:')) await assertOwnContainer(mode.slice('container:'.length), `${field}.network_mode`);
      else if (mode.startsWith('service:') && !serviceNames.has(mode.slice('service:'.length)))
        throw issue('BAD_REQUEST', `${field}.network_mode`, `names no service of this file (${mode}): a stack joins only its own services' networks`);
    }
    const from = svc.get('volumes_from');
    for (const [i, v] of (isSeq(from) ? from.items : []).entries()) {
      const entry = String(isScalar(v) ? v.value : v);
      const at = `${field}.volumes_from.${i}`;
      if (entry.startsWith('container:')) await assertOwnContainer(entry.slice('container:'.length).replace(/:(ro|rw)$/, ''), at);
      else if (!serviceNames.has(entry.replace(/^service:/, '').replace(/:(ro|rw)$/, '')))
        throw issue('BAD_REQUEST', at, `names no service of this file (${entry}): a stack takes volumes only from its own services`);
    }
  }
}

/**
 * The stack's serviceNetworks as the file transform takes them: each entry's networkIds resolved to
 * its organization's user networks on its host (a swarm-scope overlay for a stack; a bridge or an
 * attachable overlay for docker-compose), refusals naming `serviceNetworks.<i>.networkIds.<j>`.
 * With `docker` (deploy time) each network is read on the host's engine too.
 */
export async function serviceNetworkPlans(value: unknown, owner: StackOwner, type: ComposeType, cradle: Cradle, em: EntityManager, docker?: Docker): Promise<ServiceNetworkPlan[]> {
  const entries = Array.isArray(value) ? (value as { serviceName?: unknown; networkIds?: unknown; detachDokployNetwork?: unknown }[]) : [];
  const plans: ServiceNetworkPlan[] = [];
  for (const [i, entry] of entries.entries()) {
    const field = `serviceNetworks.${i}.networkIds`;
    const networks = await joinableNetworks(cradle, entry.networkIds, owner, { field, swarm: type === 'stack', docker }, em);
    plans.push({ serviceName: String(entry.serviceName ?? ''), networks, detach: entry.detachDokployNetwork === true });
  }
  return plans;
}
