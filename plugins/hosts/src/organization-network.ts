// Each organization's workloads join a network of their own, so that a tenant's container cannot
// reach another tenant's services by name or by address: `berth-org-<short id>`, an attachable
// swarm overlay labelled with the organization (berth.kind=organization-network). The instance
// operators' organization (the first one) keeps the platform network (config platformNetwork, the
// peer's dokploy-network), so a single-organization install behaves as the peer's. The proxy joins
// the networks of this instance's organizations on its engine, so domains still route; networks
// another Berth made on the same engine (other organizations) are not its business.
import type Docker from 'dockerode';
import { conflict } from '@berth/core';
import { KIND_LABEL, ORGANIZATION_LABEL } from './labels.ts';

/** The berth.kind of an organization's network. */
export const ORGANIZATION_NETWORK_KIND = 'organization-network';
/** What every organization network's name starts with. */
export const ORGANIZATION_NETWORK_PREFIX = 'berth-org-';

/** The network name of an organization other than the instance operators' (ids are lower-case alphanumerics; 12 characters are unique enough and short). */
export const organizationNetworkName = (organizationId: string) =>
  `${ORGANIZATION_NETWORK_PREFIX}${organizationId
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')
    .slice(0, 12)}`;

type Call = <T>(what: string, fn: () => Promise<T>) => Promise<T>;

interface EngineNetwork {
  Name: string;
  Labels?: Record<string, string> | null;
}

/** Makes sure the organization's network exists on the engine: created with its labels, or an existing one checked (CONFLICT when it is not that organization's). */
export async function ensureOrganizationNetwork(docker: Docker, call: Call, name: string, organizationId: string): Promise<void> {
  const found = ((await call('list networks', () => docker.listNetworks({ filters: { name: [name] } }))) as EngineNetwork[]).find(n => n.Name === name);
  if (found) {
    const labels = found.Labels ?? {};
    if (labels[KIND_LABEL] === ORGANIZATION_NETWORK_KIND && labels[ORGANIZATION_LABEL] === organizationId) return;
    throw conflict(`a network named ${name} exists on this engine and is not this organization's network: remove it (docker network rm ${name}) and deploy again`);
  }
  try {
    await docker.createNetwork({ Name: name, Driver: 'overlay', Attachable: true, Labels: { [KIND_LABEL]: ORGANIZATION_NETWORK_KIND, [ORGANIZATION_LABEL]: organizationId } });
  } catch (e) {
    // Made meanwhile by another deploy: checked like any existing one.
    if ((e as { statusCode?: number }).statusCode === 409) return ensureOrganizationNetwork(docker, call, name, organizationId);
    await call(`create the network ${name}`, () => Promise.reject(e));
  }
}

/**
 * The organization networks on the engine that belong to organizations `ours` knows (what the
 * proxy joins). Joining a network changes the proxy's spec, and Swarm restarts its task for it: a
 * network of an organization that is not this instance's (another Berth on the same engine, an
 * organization removed) would only cost every tenant a restart.
 */
export async function organizationNetworks(docker: Docker, call: Call, ours: (organizationIds: string[]) => Promise<Set<string>>): Promise<string[]> {
  const all = (await call('list networks', () => docker.listNetworks({ filters: { label: [`${KIND_LABEL}=${ORGANIZATION_NETWORK_KIND}`] } }))) as EngineNetwork[];
  const owners = all.map(n => n.Labels?.[ORGANIZATION_LABEL] ?? '').filter(Boolean);
  const known = owners.length ? await ours([...new Set(owners)]) : new Set<string>();
  return all
    .filter(n => known.has(n.Labels?.[ORGANIZATION_LABEL] ?? ''))
    .map(n => n.Name)
    .sort();
}
