// The domain routing of a compose file, the way the active proxy needs it (getConvertedCompose).
// - A proxy that reads labels (Traefik): the peer's labels, in `labels` for docker-compose and `deploy.labels` for a stack
//   (routers `<appName>-<uniqueConfigKey>-<entrypoint>`, a service per router, middlewares for
//   redirect-to-https, stripprefix and addprefix, tls/certresolver), plus `traefik.enable` and the
//   network Traefik reaches the service on.
// - A proxy that is handed its routes (Caddy, through its admin API): no labels; for docker-compose the routed
//   service gets the network alias `<appName>-<serviceName>` on the platform network, which is the
//   upstream host the compose plugin gives Caddy (unique across stacks, unlike the service name).
//   A stack's service is reached as `tasks.<appName>_<serviceName>` and needs no alias.
// - Every proxy: the routed service joins the platform network (a service with no networks stays
//   on `default` as well) and the network is declared external (an isolated stack's own network
//   keeps its definition); routing labels Berth wrote before
//   (for any domain of the workload) are removed first, so a deleted domain leaves nothing behind.
// - Stacks: service VIPs need IPVS, which these machines lack, so every service without an
//   explicit `deploy.endpoint_mode` and without a port published in ingress mode (ingress needs a
//   VIP) gets `endpoint_mode: dnsrr`: its name resolves to its tasks' addresses.
import { isMap, isScalar, isSeq, type Document, type YAMLMap, type YAMLSeq } from 'yaml';
import { addNetworkAlias, declareExternalNetwork, declaresNetwork, joinNetwork, NETWORK_NAME, usesNetwork } from './isolate.ts';
import type { ComposeIssue, ComposeType } from './ignored-keys.ts';
import { composeText, ensureMap, keyOf, mapAt, nodeAt, parseCompose, resolve, scalarItems, serviceNode, servicesOf, setValue } from './yaml-doc.ts';

export interface ComposeDomainRoute {
  serviceName: string;
  host: string;
  path: string;
  port: number;
  https: boolean;
  uniqueConfigKey: number;
  appName: string;
  certificateType: string;
  stripPath: boolean;
  internalPath: string;
  /** An entry point of Traefik other than web/websecure (null: web, plus websecure when https). */
  customEntrypoint?: string | null;
  /** The resolver a `custom` certificate names. */
  customCertResolver?: string | null;
  /** Middlewares by name, appended to the router. */
  middlewares?: string[] | null;
  /** A disabled domain is not routed (its old labels still go). */
  enabled?: boolean;
}

/** How the proxy reaches a routed service (the proxy contract's composeRouting), or no proxy. */
export type ComposeProxy = 'labels' | 'alias' | 'none';

export interface WithDomainsOptions {
  type: ComposeType;
  proxy: ComposeProxy;
  /** The network the proxy is on (for an isolated deployment: the stack's own network). */
  platformNetwork: string;
  /** The workload's appName, so stale labels go even when no route is left. */
  appName?: string;
}

const HOST = /^(?=.{1,253}$)(\*\.)?[a-zA-Z0-9_]([a-zA-Z0-9_-]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9_]([a-zA-Z0-9_-]{0,61}[a-zA-Z0-9])?)*$/;
const PATH = /^\/[A-Za-z0-9._~!$&'()*+,;=:@%\/-]*$/;
const NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

/** The Traefik labels of one domain on one entry point (the peer's createDomainLabels). */
export function traefikLabels(appName: string, d: ComposeDomainRoute, entrypoint: string): string[] {
  const router = `${appName}-${d.uniqueConfigKey}-${entrypoint}`;
  const prefix = d.path && d.path !== '/' ? d.path : null;
  const labels = [
    `traefik.http.routers.${router}.rule=Host(\`${d.host}\`)${prefix ? ` && PathPrefix(\`${prefix}\`)` : ''}`,
    `traefik.http.routers.${router}.entrypoints=${entrypoint}`,
    `traefik.http.services.${router}.loadbalancer.server.port=${d.port}`,
    `traefik.http.routers.${router}.service=${router}`,
  ];
  const middlewares: string[] = [];
  // The web router of an https domain only redirects: the other middlewares run on websecure.
  const redirectOnly = entrypoint === 'web' && d.https && !d.customEntrypoint;
  if (redirectOnly) middlewares.push('redirect-to-https@file');
  // Middlewares are defined once, on the web (or custom) router's labels; both routers use them.
  const defines = entrypoint === 'web' || !!d.customEntrypoint;
  if (d.stripPath && prefix) {
    const name = `stripprefix-${appName}-${d.uniqueConfigKey}`;
    if (defines) labels.push(`traefik.http.middlewares.${name}.stripprefix.prefixes=${prefix}`);
    if (!redirectOnly) middlewares.push(name);
  }
  if (d.internalPath && d.internalPath !== '/' && d.internalPath.startsWith('/')) {
    const name = `addprefix-${appName}-${d.uniqueConfigKey}`;
    if (defines) labels.push(`traefik.http.middlewares.${name}.addprefix.prefix=${d.internalPath}`);
    if (!redirectOnly) middlewares.push(name);
  }
  if (!redirectOnly && d.middlewares?.length) middlewares.push(...d.middlewares);
  if (middlewares.length) labels.push(`traefik.http.routers.${router}.middlewares=${middlewares.join(',')}`);
  if (entrypoint === 'websecure' || (d.customEntrypoint && d.https)) {
    if (d.certificateType === 'letsencrypt') labels.push(`traefik.http.routers.${router}.tls.certresolver=letsencrypt`);
    else if (d.certificateType === 'custom' && d.customCertResolver) labels.push(`traefik.http.routers.${router}.tls.certresolver=${d.customCertResolver}`);
    else if (d.certificateType === 'none' && d.https) labels.push(`traefik.http.routers.${router}.tls=true`);
  }
  return labels;
}

/** Every label of the domain: its entry point's, and websecure's too for https. */
function domainLabels(d: ComposeDomainRoute): string[] {
  const labels = traefikLabels(d.appName, d, d.customEntrypoint || 'web');
  if (!d.customEntrypoint && d.https) labels.push(...traefikLabels(d.appName, d, 'websecure'));
  return labels;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether a label key is one of the routing labels written for a workload (any of its domains). */
function isRoutingLabel(key: string, apps: string[]): boolean {
  return apps.some(app => {
    const a = escape(app);
    return new RegExp(`^traefik\\.http\\.(routers|services)\\.${a}-\\d+-[^.]+\\.`).test(key) || new RegExp(`^traefik\\.http\\.middlewares\\.(stripprefix|addprefix)-${a}-\\d+\\.`).test(key);
  });
}

type Labels = { kind: 'list'; node: YAMLSeq } | { kind: 'map'; node: YAMLMap };

function labelsAt(doc: Document, map: YAMLMap | null): Labels | null {
  const node = nodeAt(doc, map, 'labels');
  if (isSeq(node)) return { kind: 'list', node };
  if (isMap(node)) return { kind: 'map', node };
  return null;
}

function labelKeys(doc: Document, labels: Labels): { key: string; value: string; index: number }[] {
  if (labels.kind === 'map') return labels.node.items.map((p, index) => ({ key: keyOf(p) ?? '', value: String((resolve(doc, p.value) as { value?: unknown })?.value ?? ''), index }));
  return labels.node.items.map((item, index) => {
    const s = resolve(doc, item);
    const text = isScalar(s) ? String(s.value) : '';
    const eq = text.indexOf('=');
    return { key: eq < 0 ? text : text.slice(0, eq), value: eq < 0 ? '' : text.slice(eq + 1), index };
  });
}

/** Removes the workload's routing labels (and the enable/network labels that went with them). */
function removeStale(doc: Document, labels: Labels, apps: string[], network: string): boolean {
  const entries = labelKeys(doc, labels);
  const stale = entries.filter(e => isRoutingLabel(e.key, apps));
  if (!stale.length) return false;
  const companions = entries.filter(e => (e.key === 'traefik.enable' && e.value === 'true') || (/^traefik\.(docker|swarm)\.network$/.test(e.key) && e.value === network));
  const drop = new Set([...stale, ...companions].map(e => e.index));
  labels.node.items = (labels.node.items as unknown[]).filter((_, i) => !drop.has(i));
  return true;
}

/** Drops a `labels` key left empty by the removal of stale labels. */
function dropEmptyLabels(doc: Document, owner: YAMLMap): void {
  const labels = labelsAt(doc, owner);
  if (labels && labels.node.items.length === 0) owner.delete('labels');
}

function addLabels(doc: Document, owner: YAMLMap, entries: [string, string][]): void {
  const labels = labelsAt(doc, owner);
  if (!labels) {
    setValue(
      doc,
      owner,
      'labels',
      entries.map(([k, v]) => `${k}=${v}`),
    );
    return;
  }
  const present = new Map(labelKeys(doc, labels).map(e => [e.key, e.index]));
  for (const [k, v] of entries) {
    const at = present.get(k);
    if (labels.kind === 'map') setValue(doc, labels.node, k, v);
    else if (at !== undefined) labels.node.items[at] = doc.createNode(`${k}=${v}`);
    else labels.node.add(doc.createNode(`${k}=${v}`));
  }
}

/** Whether a service publishes a port through the ingress routing mesh (which needs a VIP). */
function publishesIngress(doc: Document, maps: YAMLMap[]): boolean {
  const ports = serviceNode(doc, maps, 'ports')?.node;
  if (!isSeq(ports)) return false;
  return ports.items.some(item => {
    const port = resolve(doc, item);
    if (isMap(port)) {
      const mode = nodeAt(doc, port, 'mode');
      return !(isScalar(mode) && mode.value === 'host');
    }
    return isScalar(port) && port.value !== null && port.value !== '';
  });
}

/** Sets `deploy.endpoint_mode: dnsrr` where a stack's service can have it and says nothing itself. */
export function useDnsRoundRobin(doc: Document): void {
  for (const service of servicesOf(doc)) {
    const own = service.maps[0];
    if (!own) continue;
    const deploy = serviceNode(doc, service.maps, 'deploy')?.node;
    if (isMap(deploy) && deploy.has('endpoint_mode')) continue;
    if (publishesIngress(doc, service.maps)) continue;
    setValue(doc, isMap(deploy) ? deploy : ensureMap(doc, own, 'deploy'), 'endpoint_mode', 'dnsrr');
  }
}

function checkRoute(d: ComposeDomainRoute, services: Set<string>): void {
  if (!services.has(d.serviceName))
    throw new Error(`The domain "${d.host}" is attached to the service "${d.serviceName}", which is not in the compose file (its services: ${[...services].join(', ') || 'none'})`);
  if (!HOST.test(d.host)) throw new Error(`The domain's host "${d.host}" is not a host name`);
  if (d.path && !PATH.test(d.path)) throw new Error(`The domain "${d.host}" has the path "${d.path}", which is not a URL path starting with /`);
  if (d.internalPath && !PATH.test(d.internalPath)) throw new Error(`The domain "${d.host}" has the internal path "${d.internalPath}", which is not a URL path starting with /`);
  if (!Number.isInteger(d.port) || d.port < 1 || d.port > 65535) throw new Error(`The domain "${d.host}" has the port ${d.port}, not one of 1-65535`);
  if (!NAME.test(d.appName)) throw new Error(`The appName "${d.appName}" may hold only letters, digits, '.', '_' and '-'`);
  for (const m of [d.customEntrypoint, d.customCertResolver, ...(d.middlewares ?? [])])
    if (m && !/^[a-zA-Z0-9][a-zA-Z0-9_.@-]*$/.test(m)) throw new Error(`The domain "${d.host}" names "${m}", which is not a Traefik name (letters, digits, '.', '_', '-', '@')`);
}

/** Applies the routes to a document in place. */
export function routeDocument(doc: Document, routes: ComposeDomainRoute[], opts: WithDomainsOptions): void {
  const { type, proxy, platformNetwork } = opts;
  if (!NETWORK_NAME.test(platformNetwork)) throw new Error(`The platform network "${platformNetwork}" is not a network name`);
  const services = servicesOf(doc);
  const names = new Set(services.map(s => s.name));
  for (const d of routes) checkRoute(d, names);
  const apps = [...new Set([...(opts.appName ? [opts.appName] : []), ...routes.map(r => r.appName)])];
  for (const service of services) {
    const own = service.maps[0];
    if (!own) continue;
    for (const owner of [own, mapAt(doc, own, 'deploy')]) {
      const labels = owner && labelsAt(doc, owner);
      if (labels && removeStale(doc, labels, apps, platformNetwork)) dropEmptyLabels(doc, owner!);
    }
  }
  if (proxy !== 'none') {
    for (const d of routes.filter(r => r.enabled !== false)) {
      joinNetwork(doc, d.serviceName, platformNetwork, true);
      if (proxy === 'alias' && type === 'docker-compose') addNetworkAlias(doc, d.serviceName, platformNetwork, caddyUpstreamAlias(d.appName, d.serviceName));
      if (proxy !== 'labels') continue;
      const own = services.find(s => s.name === d.serviceName)!.maps[0]!;
      const owner = type === 'docker-compose' ? own : ensureMap(doc, own, 'deploy');
      addLabels(doc, owner, [
        ['traefik.enable', 'true'],
        [type === 'docker-compose' ? 'traefik.docker.network' : 'traefik.swarm.network', platformNetwork],
        ...domainLabels(d).map(l => {
          const eq = l.indexOf('=');
          return [l.slice(0, eq), l.slice(eq + 1)] as [string, string];
        }),
      ]);
    }
    // An isolated stack declares its own network under its name: that definition stays.
    // The platform network in the peer's form (`{ external: true }`, the key being its name).
    if (usesNetwork(doc, platformNetwork) && !declaresNetwork(doc, platformNetwork)) declareExternalNetwork(doc, platformNetwork, false);
  }
  if (type === 'stack') useDnsRoundRobin(doc);
}

/** The upstream host name of a compose service for Caddy: its alias on the platform network. */
export function caddyUpstreamAlias(appName: string, serviceName: string): string {
  return `${appName}-${serviceName}`;
}

/** The file with the domains' routing added for the active proxy (getConvertedCompose). */
export function withDomains(text: string, routes: ComposeDomainRoute[], opts: WithDomainsOptions): string {
  const doc = parseCompose(text);
  routeDocument(doc, routes, opts);
  return composeText(doc);
}

/** The routed services that are not on the proxy's network (their domain would answer 502). */
export function unreachableDomains(text: string, routes: ComposeDomainRoute[], network: string): ComposeIssue[] {
  const doc = parseCompose(text);
  const services = servicesOf(doc);
  const out: ComposeIssue[] = [];
  for (const d of routes) {
    const service = services.find(s => s.name === d.serviceName);
    if (!service) {
      out.push({ service: d.serviceName, key: 'services', reason: `The domain "${d.host}" names the service "${d.serviceName}", which is not in the compose file` });
      continue;
    }
    const mode = serviceNode(doc, service.maps, 'network_mode')?.node;
    if (mode) {
      out.push({
        service: d.serviceName,
        key: 'network_mode',
        reason: `The domain "${d.host}" routes to "${d.serviceName}", whose network_mode "${isScalar(mode) ? String(mode.value) : '?'}" keeps it off the proxy's network "${network}": the domain would answer 502`,
      });
      continue;
    }
    const networks = serviceNode(doc, service.maps, 'networks')?.node;
    const on = isSeq(networks) ? scalarItems(doc, networks).some(s => s.value === network) : isMap(networks) && networks.items.some(p => keyOf(p) === network);
    if (!on)
      out.push({
        service: d.serviceName,
        key: 'networks',
        reason: `The domain "${d.host}" routes to "${d.serviceName}", which is not on the proxy's network "${network}": the domain would answer 502`,
      });
  }
  return out;
}
