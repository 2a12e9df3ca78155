// Named volumes Berth keeps for a record (a database's data) or for users' mounts: created
// explicitly with the owner's labels before the service that mounts them, and checked before
// every use or removal. The engine cannot relabel a volume, so a volume made before labels
// existed (adopted at upgrade: `adopted`) passes when it carries no berth.id at all — never when
// it names another record or organization.
//
// A mount volume (a mount of type volume, named by the user) is the organization's: any of its
// workloads may mount it (they share it), no workload of another organization may, and neither
// may a volume Berth did not make for a mount (a data volume, a stray one).
import { setTimeout as sleep } from 'node:timers/promises';
import type Docker from 'dockerode';
import type { ContainerHosts } from '@berth/plugin-hosts';
import { conflict } from '@berth/core';
import { ID_LABEL, ORGANIZATION_LABEL, assertOwned, notOurs, ownerLabels, type Owner } from '../owners.ts';

interface EngineVolume {
  Name: string;
  Labels?: Record<string, string> | null;
}

export interface VolumeOptions {
  /** The record took this volume over from before labels existed: an unlabelled one is its own. */
  adopted?: boolean;
}

/** The label marking a volume Berth made for users' mounts (the organization's to share), not a record's data. */
export const MOUNT_VOLUME_LABEL = 'berth.mount-volume';

/** The volume's labels, or null when it does not exist. */
export async function volumeLabels(docker: Docker, hosts: ContainerHosts, name: string): Promise<Record<string, string> | null> {
  return hosts.call(`inspect volume ${name}`, async () => {
    try {
      return ((await docker.getVolume(name).inspect()) as EngineVolume).Labels ?? {};
    } catch (e) {
      if ((e as { statusCode?: number }).statusCode === 404) return null;
      throw e;
    }
  });
}

function check(name: string, labels: Record<string, string>, id: string, opts: VolumeOptions): void {
  if (opts.adopted && labels[ID_LABEL] === undefined) return;
  assertOwned('volume', name, labels, id);
}

/** Makes sure the owner's volume exists: created with its labels, or an existing one checked (CONFLICT when not the owner's). */
export async function ensureVolume(docker: Docker, hosts: ContainerHosts, name: string, owner: Owner, opts: VolumeOptions = {}): Promise<'created' | 'existing'> {
  const labels = await volumeLabels(docker, hosts, name);
  if (labels) {
    check(name, labels, owner.id, opts);
    return 'existing';
  }
  await hosts.call(`create volume ${name}`, () => docker.createVolume({ Name: name, Labels: ownerLabels(owner) }));
  // The engine answers a create of an existing name with that volume, labels unchanged: one
  // made by someone else meanwhile must not pass for ours.
  const made = await volumeLabels(docker, hosts, name);
  if (!made) throw notOurs('volume', name);
  check(name, made, owner.id, opts);
  return 'created';
}

/**
 * Removes the owner's volume (absent is fine: answers false), waiting up to timeoutMs (default
 * 60 s) for the containers of a just-removed service to let go of it. A volume that is not the
 * owner's is refused (CONFLICT) and left alone.
 */
export async function removeVolume(docker: Docker, hosts: ContainerHosts, name: string, ownerId: string, opts: VolumeOptions & { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<boolean> {
  const labels = await volumeLabels(docker, hosts, name);
  if (!labels) return false;
  check(name, labels, ownerId, opts);
  const until = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    try {
      await docker.getVolume(name).remove();
      return true;
    } catch (e) {
      const code = (e as { statusCode?: number }).statusCode;
      if (code === 404) return false;
      if (code !== 409 || Date.now() > until) return hosts.call(`remove volume ${name}`, () => Promise.reject(e));
      await sleep(250, undefined, { signal: opts.signal });
    }
  }
}

/**
 * Refuses (409 naming it) an existing volume a workload of `organizationId` may not mount: one
 * that is not a mount volume of that organization — unless the mount adopted it at upgrade and it
 * carries no Berth label at all.
 */
export function assertMountable(name: string, labels: Record<string, string>, organizationId: string, opts: VolumeOptions = {}): void {
  if (opts.adopted && labels[ID_LABEL] === undefined && labels[ORGANIZATION_LABEL] === undefined) return;
  if (labels[MOUNT_VOLUME_LABEL] === 'true' && labels[ORGANIZATION_LABEL] === organizationId) return;
  throw conflict(`a volume named ${name} exists on this host and is not a mount volume of this organization`);
}

/** Makes sure a mount's volume exists: created with the owner's labels and the mount-volume label, or an existing one checked (CONFLICT when the organization may not mount it). */
export async function ensureMountVolume(docker: Docker, hosts: ContainerHosts, name: string, owner: Owner, opts: VolumeOptions = {}): Promise<'created' | 'existing'> {
  const labels = await volumeLabels(docker, hosts, name);
  if (labels) {
    assertMountable(name, labels, owner.organizationId, opts);
    return 'existing';
  }
  await hosts.call(`create volume ${name}`, () => docker.createVolume({ Name: name, Labels: { ...ownerLabels(owner), [MOUNT_VOLUME_LABEL]: 'true' } }));
  const made = await volumeLabels(docker, hosts, name);
  if (!made) throw notOurs('volume', name);
  assertMountable(name, made, owner.organizationId);
  return 'created';
}
