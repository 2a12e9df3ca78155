// Named volumes Berth keeps for a record (a database's data): created explicitly with the
// owner's labels before the service that mounts them, and checked before every use or removal.
// The engine cannot relabel a volume, so a volume made before labels existed (the record
// adopted it at upgrade: `adopted`) passes when it carries no berth.id at all — never when it
// names another record.
import { setTimeout as sleep } from 'node:timers/promises';
import type Docker from 'dockerode';
import type { ContainerHosts } from '../container-hosts.ts';
import { ID_LABEL, assertOwned, notOurs, ownerLabels, type Owner } from '../owners.ts';

interface EngineVolume { Name: string; Labels?: Record<string, string> | null }

export interface VolumeOptions {
  /** The record took this volume over from before labels existed: an unlabelled one is its own. */
  adopted?: boolean;
}

/** The volume's labels, or null when it does not exist. */
async function labelsOf(docker: Docker, hosts: ContainerHosts, name: string): Promise<Record<string, string> | null> {
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
  const labels = await labelsOf(docker, hosts, name);
  if (labels) {
    check(name, labels, owner.id, opts);
    return 'existing';
  }
  await hosts.call(`create volume ${name}`, () => docker.createVolume({ Name: name, Labels: ownerLabels(owner) }));
  // The engine answers a create of an existing name with that volume, labels unchanged: one
  // made by someone else meanwhile must not pass for ours.
  const made = await labelsOf(docker, hosts, name);
  if (!made) throw notOurs('volume', name);
  check(name, made, owner.id, opts);
  return 'created';
}

/**
 * Removes the owner's volume (absent is fine: answers false), waiting up to timeoutMs (default
 * 60 s) for the containers of a just-removed service to let go of it. A volume that is not the
 * owner's is refused (CONFLICT) and left alone.
 */
export async function removeVolume(
  docker: Docker, hosts: ContainerHosts, name: string, ownerId: string,
  opts: VolumeOptions & { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<boolean> {
  const labels = await labelsOf(docker, hosts, name);
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
