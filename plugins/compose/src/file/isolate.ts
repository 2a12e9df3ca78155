// isolatedDeployment: the stack gets a network of its own, declared at the top level under its
// exact name, and every service joins it (the peer's rule): a service with no `networks:` gets
// exactly that network, a list or map of networks gets it added. A service whose `network_mode` is
// set (host, service:x, container:x, none) cannot join networks and is left alone.
// Where the peer declares the network `external` (its Traefik is a plain container that it
// connects by hand), Berth's proxy is a swarm service, which can only join swarm-scope networks:
// so the network is declared `driver: overlay, attachable: true` and the compose program (or
// `docker stack deploy`) creates it and removes it with the stack; both accept that on a swarm
// manager. `{ external: true }` gives the peer's form, for a caller that makes the network itself.
// With `volumes`, named volumes also get the network's name as suffix (isolatedDeploymentsVolume).
import { isMap, isScalar, isSeq, type Document, type YAMLMap } from 'yaml';
import { suffixDocument } from './suffix.ts';
import { composeText, ensureMap, ensureSeq, keyOf, mapAt, nodeAt, parseCompose, resolve, rootOf, scalarItems, serviceNode, servicesOf, setValue } from './yaml-doc.ts';

/** Names that reach the engine as a network name. */
export const NETWORK_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$/;

/** Joins a service (or every service: null) that can have networks to `network`; a list of networks stays a list, a map a map. */
export function joinNetwork(doc: Document, serviceName: string | null, network: string, keepDefault = false): void {
  for (const service of servicesOf(doc)) {
    if (serviceName !== null && service.name !== serviceName) continue;
    const own = service.maps[0];
    if (!own || serviceNode(doc, service.maps, 'network_mode')) continue;
    const networks = serviceNode(doc, service.maps, 'networks')?.node;
    if (isSeq(networks)) {
      if (!scalarItems(doc, networks).some(s => s.value === network)) networks.add(doc.createNode(network));
    } else if (isMap(networks)) {
      if (!networks.items.some(p => keyOf(p) === network)) networks.add(doc.createPair(network, null));
    } else {
      // No networks: the service was on `default` only; it stays there when asked (its siblings are there).
      setValue(doc, own, 'networks', keepDefault && network !== 'default' ? ['default', network] : [network]);
    }
  }
}

/** Adds a network alias of a service on a network it is on (the list form becomes the map form). */
export function addNetworkAlias(doc: Document, serviceName: string, network: string, alias: string): void {
  const service = servicesOf(doc).find(s => s.name === serviceName);
  const found = service && serviceNode(doc, service.maps, 'networks');
  if (!found) return;
  let networks = found.node;
  if (isSeq(networks)) {
    const names = scalarItems(doc, networks).map(s => String(s.value));
    setValue(doc, found.map, 'networks', Object.fromEntries(names.map(n => [n, null])));
    networks = resolve(doc, found.map.get('networks', true));
  }
  if (!isMap(networks)) return;
  const pair = networks.items.find(p => keyOf(p) === network);
  if (!pair) return;
  let settings = resolve(doc, pair.value);
  if (!isMap(settings)) {
    pair.value = doc.createNode({});
    settings = pair.value;
  }
  const aliases = ensureSeq(doc, settings as YAMLMap, 'aliases');
  if (!scalarItems(doc, aliases).some(s => s.value === alias)) aliases.add(doc.createNode(alias));
}

/** Declares a network at the top level as external (made by the caller), replacing its definition; `named: false` is the peer's `{ external: true }`, the key being the name. */
export function declareExternalNetwork(doc: Document, network: string, named = true): void {
  const networks = ensureMap(doc, rootOf(doc), 'networks');
  setValue(doc, networks, network, named ? { name: network, external: true } : { external: true });
}

/** Declares the stack's own network: an attachable overlay under its exact name, made and removed with the stack. */
export function declareOwnNetwork(doc: Document, network: string): void {
  const networks = ensureMap(doc, rootOf(doc), 'networks');
  setValue(doc, networks, network, { name: network, driver: 'overlay', attachable: true });
}

/** Whether the top level declares a network under its exact name (`name:` or external): an isolated stack's. */
export function declaresNetwork(doc: Document, network: string): boolean {
  const def = nodeAt(doc, mapAt(doc, rootOf(doc), 'networks'), network);
  if (!isMap(def)) return false;
  const name = nodeAt(doc, def, 'name');
  const external = nodeAt(doc, def, 'external');
  return (isScalar(name) && name.value === network) || (isScalar(external) && external.value === true);
}

/** Whether any service of the document is on a network (listed, or a key of its networks map). */
export function usesNetwork(doc: Document, network: string): boolean {
  return servicesOf(doc).some(s => {
    const networks = serviceNode(doc, s.maps, 'networks')?.node;
    if (isSeq(networks)) return scalarItems(doc, networks).some(i => isScalar(i) && i.value === network);
    return isMap(networks) && networks.items.some(p => keyOf(p) === network);
  });
}

/** The file with its own network, every service on it (isolatedDeployment). */
export function isolate(text: string, network: string, opts: { volumes?: boolean; external?: boolean } = {}): string {
  if (!NETWORK_NAME.test(network)) throw new Error(`The network name "${network}" may hold only letters, digits, '.', '_' and '-' (at most 63, starting with a letter or digit)`);
  const doc = parseCompose(text);
  if (opts.volumes) suffixDocument(doc, network, network, { volumes: true });
  if (opts.external) declareExternalNetwork(doc, network);
  else declareOwnNetwork(doc, network);
  joinNetwork(doc, null, network);
  return composeText(doc);
}
