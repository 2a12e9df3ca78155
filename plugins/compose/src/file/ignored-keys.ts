// What the chosen compose type will ignore or refuse in a file, said before anything runs.
// The stack lists are what Docker's CLI (28.x) really does: `docker stack deploy` prints "Ignoring
// unsupported options" for UNSUPPORTED_BY_STACK and "Ignoring deprecated options" for
// container_name and expose, refuses REFUSED_BY_STACK ("Compose file contains unsupported
// options"), silently drops depends_on, and never reads `.env` (a `${VAR}` is interpolated from the
// deploy's own environment only). Compose (v1 1.29 and v2) runs containers, not swarm services: it
// ignores the swarm-only parts of `deploy` and cannot give containers an external secret/config.
import { isMap, isScalar, isSeq, type Document } from 'yaml';
import { keyOf, mapAt, nodeAt, parseCompose, resolve, rootOf, serviceNode, servicesOf } from './yaml-doc.ts';

export type ComposeType = 'docker-compose' | 'stack';

export interface ComposeIssue {
  /** The service it is in (null: the file as a whole or a top-level section). */
  service: string | null;
  /** The key, dotted from the service (`deploy.placement`) or from the top level (`secrets.db`). */
  key: string;
  /** What happens and what to write instead. */
  reason: string;
  /** ignored: the deploy runs without it; refused: the deploy fails on it. */
  effect?: 'ignored' | 'refused';
}

const STACK_UNSUPPORTED: Record<string, string> = {
  build: 'a stack deploys images only: build the image first (or use the docker-compose type) and name it in `image`',
  cgroup_parent: 'swarm services have no cgroup_parent',
  cgroupns_mode: 'swarm services have no cgroupns_mode',
  devices: 'swarm services cannot map devices',
  domainname: 'swarm services have no domainname',
  external_links: 'put the services on a shared network instead',
  ipc: 'swarm services have no ipc mode',
  links: 'services of a stack reach each other by name on their networks; links are not needed',
  mac_address: 'swarm services have no fixed MAC address',
  network_mode: 'a stack attaches services to networks: use `networks:` (the swarm network `host` for host networking)',
  pid: 'swarm services have no pid mode',
  privileged: 'swarm services cannot run privileged',
  restart: 'use deploy.restart_policy (condition: any | on-failure | none)',
  security_opt: 'swarm services have no security_opt',
  shm_size: 'swarm services have no shm_size; mount a tmpfs at /dev/shm instead',
  userns_mode: 'swarm services have no userns_mode',
  container_name: 'a service runs tasks whose names swarm chooses; reach it by its service name',
  expose: 'services on the same network reach each other on any port',
  depends_on: 'swarm starts all services at once: a service must wait for what it needs itself (retry, healthcheck)',
};

const STACK_REFUSED: Record<string, string> = {
  extends: '`docker stack deploy` does not implement extends: write the service out in full',
  volumes_from: 'define the volume at the top level and mount it in each service that shares it',
  volume_driver: 'set the driver on the top-level volume',
  cpu_quota: 'set limits with deploy.resources.limits.cpus',
  cpu_shares: 'set limits with deploy.resources',
  cpuset: 'set limits with deploy.resources',
  mem_limit: 'set limits with deploy.resources.limits.memory',
  memswap_limit: 'set limits with deploy.resources',
};

const COMPOSE_IGNORED_DEPLOY: Record<string, string> = {
  placement: 'placement constraints choose swarm nodes; compose runs on this host only',
  update_config: 'compose replaces containers without rolling updates',
  rollback_config: 'compose has no automatic rollback',
  endpoint_mode: "compose reaches containers through the network's DNS; endpoint modes are a swarm setting",
  labels: 'deploy.labels label the swarm service; compose containers get `labels:` of the service',
};

/** `${VAR}` and `$VAR` the file interpolates (`$$` escapes), in order of first use. */
export function interpolatedVariables(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(/\$(\$|\{([A-Za-z_][A-Za-z0-9_]*)[^}]*\}|([A-Za-z_][A-Za-z0-9_]*))/g)) {
    const name = m[2] ?? m[3];
    if (name) found.add(name);
  }
  return [...found];
}

function stackIssues(doc: Document, text: string): ComposeIssue[] {
  const out: ComposeIssue[] = [];
  for (const service of servicesOf(doc)) {
    for (const [key, why] of Object.entries(STACK_REFUSED)) {
      if (serviceNode(doc, service.maps, key)) out.push({ service: service.name, key, reason: `Refused by docker stack deploy: ${why}`, effect: 'refused' });
    }
    for (const [key, why] of Object.entries(STACK_UNSUPPORTED)) {
      if (serviceNode(doc, service.maps, key)) out.push({ service: service.name, key, reason: `Ignored by docker stack deploy: ${why}`, effect: 'ignored' });
    }
    const ports = serviceNode(doc, service.maps, 'ports')?.node;
    if (
      isSeq(ports) &&
      ports.items.some(p => {
        const port = resolve(doc, p);
        return isScalar(port) || (isMap(port) && (nodeAt(doc, port, 'mode') as { value?: unknown } | undefined)?.value !== 'host');
      })
    ) {
      out.push({
        service: service.name,
        key: 'ports',
        reason: 'Published through the swarm ingress routing mesh, which needs IPVS in the host kernel (hosts without it never answer): publish with the long form and `mode: host` there',
        effect: 'ignored',
      });
    }
  }
  const vars = interpolatedVariables(text);
  if (vars.length) {
    out.push({
      service: null,
      key: '.env',
      reason: `Ignored by docker stack deploy: it never reads a .env file, so ${vars.map(v => `\${${v}}`).join(', ')} come${vars.length === 1 ? 's' : ''} only from the environment the deploy runs with (the compose's environment settings)`,
      effect: 'ignored',
    });
  }
  return out;
}

function composeIssues(doc: Document): ComposeIssue[] {
  const out: ComposeIssue[] = [];
  for (const service of servicesOf(doc)) {
    const deploy = serviceNode(doc, service.maps, 'deploy')?.node;
    if (!isMap(deploy)) continue;
    for (const pair of deploy.items) {
      const key = keyOf(pair);
      if (key && COMPOSE_IGNORED_DEPLOY[key]) out.push({ service: service.name, key: `deploy.${key}`, reason: `Ignored by docker compose: ${COMPOSE_IGNORED_DEPLOY[key]}`, effect: 'ignored' });
    }
    const mode = nodeAt(doc, deploy, 'mode');
    if (isScalar(mode) && mode.value === 'global')
      out.push({
        service: service.name,
        key: 'deploy.mode',
        reason: "Ignored by docker compose: global mode runs a task on every swarm node; compose runs the service's replicas on this host",
        effect: 'ignored',
      });
  }
  for (const section of ['secrets', 'configs'] as const) {
    const map = mapAt(doc, rootOf(doc), section);
    for (const pair of map?.items ?? []) {
      const def = resolve(doc, pair.value);
      const external = isMap(def) ? nodeAt(doc, def, 'external') : undefined;
      if ((isScalar(external) && external.value === true) || isMap(external)) {
        out.push({
          service: null,
          key: `${section}.${keyOf(pair)}`,
          reason: `Refused by docker compose: external ${section} live in the swarm and are not available to containers compose creates; use \`file:\` (or the stack type)`,
          effect: 'refused',
        });
      }
    }
  }
  return out;
}

/** What the compose type ignores or refuses in the file, each with its service, key and reason. */
export function ignoredKeys(text: string, type: ComposeType): ComposeIssue[] {
  const doc = parseCompose(text);
  return type === 'stack' ? stackIssues(doc, text) : composeIssues(doc);
}
