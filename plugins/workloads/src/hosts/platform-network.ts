// The platform network (`berth-network`): the overlay every workload joins. Berth creates it
// labelled `berth.kind=platform` (earlier versions: `berth.managed=true`). An existing network of
// that name is used only when it is provably Berth's, since every workload would be attached to
// it: labelled so, or — made before labels — an attachable
// swarm overlay with at least one service attached and every attached service one of Berth's
// (labelled with a berth.id). The engine cannot relabel a network, so such a one is used as it is.
// Anything else is refused: Berth would otherwise put every workload on someone else's network.
import type Docker from 'dockerode';
import { conflict, type Logger } from '@berth/core';
import { ID_LABEL, KIND_LABEL } from '../owners.ts';

/** The labels Berth gives its platform network. */
export const PLATFORM_NETWORK_LABELS = { 'berth.managed': 'true', [KIND_LABEL]: 'platform' };

interface EngineNetwork { Id: string; Name: string; Driver?: string; Scope?: string; Attachable?: boolean; Labels?: Record<string, string> | null }
interface EngineService { Spec?: { Name?: string; Labels?: Record<string, string>; TaskTemplate?: { Networks?: { Target?: string }[] } } }

type Call = <T>(what: string, fn: () => Promise<T>) => Promise<T>;

const labelled = (labels: Record<string, string>) => labels[KIND_LABEL] === 'platform' || labels['berth.managed'] === 'true';

/** Makes sure the platform network `name` exists and is Berth's: created with its labels, or an existing one checked (CONFLICT naming it otherwise). */
export async function ensurePlatformNetwork(docker: Docker, call: Call, name: string, log: Logger): Promise<'created' | 'existing'> {
  const found = (await call('list networks', () => docker.listNetworks({ filters: { name: [name] } })) as EngineNetwork[]).find(n => n.Name === name);
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
  const refuse = (why: string) => conflict(`a network named ${name} exists on this engine and is not Berth's (${why}): `
    + `Berth attaches every workload to it, so it does not use it. Remove it (docker network rm ${name}) or rename it, and Berth creates its own`);
  if (found.Driver !== 'overlay' || found.Scope !== 'swarm' || !found.Attachable) throw refuse(`it lacks the label ${KIND_LABEL}=platform and is not an attachable swarm overlay`);
  const services = await call('list services', () => docker.listServices()) as unknown as EngineService[];
  const attached = services.filter(s => s.Spec?.TaskTemplate?.Networks?.some(n => n.Target === found.Id || n.Target === name));
  if (!attached.length) throw refuse(`it lacks the label ${KIND_LABEL}=platform and no service of Berth's is attached to it`);
  const foreign = attached.filter(s => !s.Spec?.Labels?.[ID_LABEL]).map(s => s.Spec?.Name ?? '?');
  if (foreign.length) throw refuse(`it lacks the label ${KIND_LABEL}=platform and services that are not Berth's are attached to it: ${foreign.join(', ')}`);
  log.warn({ network: name, services: attached.length }, 'the platform network has no label of Berth\'s but only Berth\'s services are attached to it: using it as an earlier Berth\'s');
  return 'existing';
}
