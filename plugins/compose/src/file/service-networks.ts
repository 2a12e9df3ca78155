// A stack's serviceNetworks (the peer's field): each named service of the file joins the user
// networks (network.*) its entry names, declared at the top level as external networks under their
// exact names (Berth made them, labelled as the organization's; the program must not make or
// remove them). `detach` is the peer's detachDokployNetwork: the service leaves the organization's
// network (the platform network for the instance operators') and `default`, so it is reached only
// on the networks it names. An entry naming no service of the file changes nothing (the peer skips
// it too): its name is answered so the run can say so.
import { isMap, isSeq } from 'yaml';
import { declareExternalNetwork, joinNetwork } from './isolate.ts';
import { composeText, keyOf, parseCompose, resolve, serviceNode, servicesOf } from './yaml-doc.ts';

/** One service's networks: the engine names of its user networks, and whether it leaves the organization's network. */
export interface ServiceNetworkPlan {
  serviceName: string;
  networks: string[];
  detach: boolean;
}

/** The file with each planned service on its networks; `skipped`: the planned names that are no service of the file. */
export function joinServiceNetworks(text: string, plans: readonly ServiceNetworkPlan[], organizationNetwork: string): { text: string; skipped: string[] } {
  const doc = parseCompose(text);
  const services = new Set(servicesOf(doc).map(s => s.name));
  const skipped: string[] = [];
  for (const plan of plans) {
    if (!services.has(plan.serviceName)) {
      skipped.push(plan.serviceName);
      continue;
    }
    for (const network of plan.networks) {
      // A service that was on `default` only stays there (its siblings are), unless it detaches below.
      joinNetwork(doc, plan.serviceName, network, true);
      declareExternalNetwork(doc, network);
    }
    if (plan.detach) for (const network of [organizationNetwork, 'default']) leaveNetwork(doc, plan.serviceName, network);
  }
  return { text: composeText(doc), skipped };
}

/** Takes a service off a network it lists (a list or a map of networks); nothing when it is not there. */
function leaveNetwork(doc: ReturnType<typeof parseCompose>, serviceName: string, network: string): void {
  const service = servicesOf(doc).find(s => s.name === serviceName);
  const networks = service && serviceNode(doc, service.maps, 'networks')?.node;
  if (isSeq(networks)) networks.items = networks.items.filter(i => String((resolve(doc, i) as { value?: unknown })?.value) !== network);
  else if (isMap(networks)) networks.items = networks.items.filter(p => keyOf(p) !== network);
}
