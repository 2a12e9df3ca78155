// Upgrading keeps what exists: services Berth made before they carried the organization label
// are adopted (when the engine is first used after a start), not refused. Only a service named after its record's appName and
// labelled with that very record's berth.kind and berth.id is relabelled — by an update of the
// service's own labels that keeps its spec and tasks. (Data volumes cannot be relabelled: the
// database records adopt theirs by name in their migration.)
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '@berth/core';
import type { ContainerHosts } from '@berth/plugin-hosts';
import type { WorkloadRegistry } from './registry.ts';
import { ID_LABEL, KIND_LABEL, ORGANIZATION_LABEL } from './owners.ts';

interface EngineService {
  ID: string;
  Version: { Index: number };
  Spec: { Name?: string; Labels?: Record<string, string> };
}

/** Adds the organization label to the services of Berth's records that lack it; answers how many. */
export async function adoptServices(workloads: WorkloadRegistry, hosts: ContainerHosts, em: EntityManager, log: Logger): Promise<number> {
  const docker = await hosts.local();
  const services = (await hosts.call('list services', () => docker.listServices({ filters: { label: [ID_LABEL] } }))) as EngineService[];
  let adopted = 0;
  for (const service of services) {
    const labels = service.Spec.Labels ?? {};
    if (labels[ORGANIZATION_LABEL]) continue;
    const ref = await workloads.kind(labels[KIND_LABEL] ?? '')?.find(labels[ID_LABEL]!, em);
    // Anything else carrying a berth.id is not provably this record's: left as it is.
    if (!ref || ref.appName !== service.Spec.Name) continue;
    const spec = { ...service.Spec, Labels: { ...labels, [ORGANIZATION_LABEL]: ref.organizationId } };
    await hosts.call(`relabel service ${ref.appName}`, () =>
      (docker.getService(service.ID) as { update(o: object): Promise<unknown> }).update({ _query: { version: service.Version.Index }, _body: spec }),
    );
    adopted++;
  }
  if (adopted) log.info({ services: adopted }, 'services made before owner labels now name their organization');
  return adopted;
}
