// A user workload's service spec against the operator's host access policy, at deploy time:
// the record may have been written before the policy changed, so what it reaches of the host is
// checked again — bind sources with links resolved, networks as the engine knows them (a network
// given by id is still the host network), and a network of another organization (or one that is
// no organization's, for any but the instance operators') refused. Berth's own helper containers
// do not pass here.
import type Docker from 'dockerode';
import type { HostAccess, NetworkFacts, NetworkTenancy } from '../host-access-policy.ts';
import type { WorkloadService } from '../services.ts';

export async function admitWorkload(workload: WorkloadService, docker: Docker, policy: HostAccess, tenancy?: NetworkTenancy): Promise<void> {
  for (const m of workload.mounts) {
    if (m.type !== 'bind' || m.managed) continue;
    const refusal = policy.bindMountRefusal(m.source, 'mounts.hostPath');
    if (refusal) throw refusal;
  }
  for (const [i, n] of (workload.networks ?? []).entries()) {
    if (!n.Target) continue;
    let facts: NetworkFacts = { name: n.Target };
    try {
      const info = await docker.getNetwork(n.Target).inspect();
      facts = { name: info.Name, driver: info.Driver, ingress: info.Ingress, labels: info.Labels ?? {} };
    } catch {
      /* not on the engine: the deploy fails on it later, named */
    }
    const refusal = policy.networkRefusal(facts, `networkSwarm.${i}.Target`) ?? (tenancy ? policy.tenancyRefusal(facts, tenancy, `networkSwarm.${i}.Target`) : null);
    if (refusal) throw refusal;
  }
}
