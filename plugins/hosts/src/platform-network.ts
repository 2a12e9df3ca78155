// The platform network (config `platformNetwork`, default `berth-network`; the peer's is
// `dokploy-network`): the overlay every workload and the proxy join. Berth creates it labelled
// `berth.kind=platform` (earlier versions: `berth.managed=true`). An existing network of that name
// is used only when it is provably Berth's, since every workload would be attached to it: labelled
// so, or — made before labels — an attachable swarm overlay with at least one service attached and
// every attached service one of Berth's (labelled with a berth.id). The engine cannot relabel a
// network, so such a one is used as it is. Anything else is refused: Berth would otherwise put
// every workload on someone else's network (the peer's own dokploy-network on the same host).
//
// The network a Berth last used is recorded in dataDir/platform-network. A changed key is checked
// at boot: refused while workloads of this instance are attached to the former network (moving
// them is the operator's decision), and the new network is ensured at once, so a foreign one stops
// the boot rather than the first deploy.
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type Docker from 'dockerode';
import { conflict, type EntityManager, type Logger } from '@berth/core';
import { HostsConfig } from './config.ts';
import { ID_LABEL, KIND_LABEL } from './labels.ts';

/** The labels Berth gives its platform network. */
export const PLATFORM_NETWORK_LABELS = { 'berth.managed': 'true', [KIND_LABEL]: 'platform' };
/** The network of a Berth that recorded none: the only one earlier versions used (the config key's default). */
export const DEFAULT_PLATFORM_NETWORK = (HostsConfig.properties.platformNetwork as { default?: string }).default!;

interface EngineNetwork {
  Id: string;
  Name: string;
  Driver?: string;
  Scope?: string;
  Attachable?: boolean;
  Labels?: Record<string, string> | null;
}
interface EngineService {
  Spec?: { Name?: string; Labels?: Record<string, string>; TaskTemplate?: { Networks?: { Target?: string }[] } };
}

type Call = <T>(what: string, fn: () => Promise<T>) => Promise<T>;

const labelled = (labels: Record<string, string>) => labels[KIND_LABEL] === 'platform' || labels['berth.managed'] === 'true';

const attachedTo = (services: EngineService[], network: EngineNetwork) => services.filter(s => s.Spec?.TaskTemplate?.Networks?.some(n => n.Target === network.Id || n.Target === network.Name));

async function findNetwork(docker: Docker, call: Call, name: string): Promise<EngineNetwork | undefined> {
  return ((await call('list networks', () => docker.listNetworks({ filters: { name: [name] } }))) as EngineNetwork[]).find(n => n.Name === name);
}

/** Makes sure the platform network `name` exists and is Berth's: created with its labels, or an existing one checked (CONFLICT naming it otherwise). */
export async function ensurePlatformNetwork(docker: Docker, call: Call, name: string, log: Logger): Promise<'created' | 'existing'> {
  const found = await findNetwork(docker, call, name);
  if (!found) {
    try {
      await docker.createNetwork({ Name: name, Driver: 'overlay', Attachable: true, Labels: PLATFORM_NETWORK_LABELS });
      return 'created';
    } catch (e) {
      // Another process created it meanwhile: checked like any existing one.
      if ((e as { statusCode?: number }).statusCode !== 409) return call('create the platform network', () => Promise.reject(e));
      return ensurePlatformNetwork(docker, call, name, log);
    }
  }
  if (labelled(found.Labels ?? {})) return 'existing';
  const refuse = (why: string) =>
    conflict(
      `a network named ${name} exists on this engine and is not Berth's (${why}): ` +
        'Berth attaches every workload to its platform network, so it does not use one it did not make. ' +
        `To move from the platform that made it (the peer's ${name}), remove or stop its services on it, then remove the network ` +
        `(docker network rm ${name}) and start Berth again: it creates its own under that name, and a redeploy attaches each workload. ` +
        'Or choose another name with the config key platformNetwork (BERTH_PLATFORM_NETWORK)',
    );
  if (found.Driver !== 'overlay' || found.Scope !== 'swarm' || !found.Attachable) throw refuse(`it lacks the label ${KIND_LABEL}=platform and is not an attachable swarm overlay`);
  // cast: dockerode's Service type lacks the Spec.TaskTemplate.Networks the engine answers.
  const services = (await call('list services', () => docker.listServices())) as unknown as EngineService[];
  const attached = attachedTo(services, found);
  if (!attached.length) throw refuse(`it lacks the label ${KIND_LABEL}=platform and no service of Berth's is attached to it`);
  const foreign = attached.filter(s => !s.Spec?.Labels?.[ID_LABEL]).map(s => s.Spec?.Name ?? '?');
  if (foreign.length) throw refuse(`it lacks the label ${KIND_LABEL}=platform and services that are not Berth's are attached to it: ${foreign.join(', ')}`);
  log.warn({ network: name, services: attached.length }, "the platform network has no label of Berth's but only Berth's services are attached to it: using it as an earlier Berth's");
  return 'existing';
}

const recordFile = (dataDir: string) => path.join(dataDir, 'platform-network');

/** The platform network this data directory's Berth last used (the default for one that recorded none). */
export function recordedPlatformNetwork(dataDir: string): string {
  const file = recordFile(dataDir);
  return (existsSync(file) ? readFileSync(file, 'utf8').trim() : '') || DEFAULT_PLATFORM_NETWORK;
}

/** Remembers the network in use, so that a changed key is noticed at the next boot. */
export async function recordPlatformNetwork(dataDir: string, name: string): Promise<void> {
  await writeFile(recordFile(dataDir), `${name}\n`, { mode: 0o644 });
}

/** Finds a workload record by its kind and id (any organization): whether a labelled service is one of this instance's. */
export type WorkloadExists = (kind: string, id: string, em: EntityManager) => Promise<boolean>;

/**
 * The first half of the boot check of a changed platformNetwork: CONFLICT while services of this
 * instance's workloads are attached to the former network (naming both networks and how many).
 * The caller then ensures the new one (a foreign one is refused) and records it.
 */
export async function refuseWhileAttached(o: { docker: Docker; call: Call; former: string; configured: string; exists: WorkloadExists; em: EntityManager }): Promise<void> {
  const { former } = o;
  const old = await findNetwork(o.docker, o.call, former);
  if (old) {
    const services = attachedTo((await o.call('list services', () => o.docker.listServices())) as unknown as EngineService[], old); // cast: as above
    let ours = 0;
    for (const s of services) {
      const kind = s.Spec?.Labels?.[KIND_LABEL];
      const id = s.Spec?.Labels?.[ID_LABEL];
      if (kind && id && (await o.exists(kind, id, o.em))) ours++;
    }
    if (ours) {
      throw conflict(
        `platformNetwork (BERTH_PLATFORM_NETWORK) changed from ${former} to ${o.configured}, and ${ours} workload${ours === 1 ? ' is' : 's are'} attached to ${former}: ` +
          `Berth does not move them by itself. Start it with platformNetwork ${former}, or move them first (see "Move to another platform network" in docs/deploying.md)`,
      );
    }
  }
}
