// A volume copied out of the engine and back through the engine's archive API, on a helper
// container that is created and never started, so nothing runs and the image needs no program:
// the config key backupHelperImage if the operator set one, else the image of a container that
// uses the volume (the workload's own), else any image on the host — never pulled. Out: the
// archive of the volume read from the helper. Back: the volume is emptied by removing it and
// creating it again with the same driver, options and labels (what used it is Berth's and
// stopped by then), and the archive is put into it. What uses the volume (Berth's Swarm services
// of the organization) is scaled to 0 first and back to its replicas after, whatever happened;
// a container that is not Berth's using it is a 409, never stopped or removed.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { conflict } from '@berth/core';
import { ID_LABEL, MOUNT_VOLUME_LABEL, ORGANIZATION_LABEL, ownedBy, scaleService, type ContainerHosts } from '@berth/plugin-workloads';

const MOUNT_AT = '/volume';
/** Labels the helper containers (named after the volume they copy), so a stray one is recognisable. */
export const HELPER_LABEL = 'berth.volume-helper';
const SERVICE_LABEL = 'com.docker.swarm.service.name';

/** A service scaled to 0 for the copy, and the replicas it gets back. */
export interface StoppedService {
  name: string;
  replicas: number;
  owner: string;
}

/** Whether the volume may be copied for a workload: its own (berth.id) or a mount volume of its organization. */
export function volumeBelongs(labels: Record<string, string>, workloadId: string, organizationId: string): boolean {
  return ownedBy(labels, workloadId) || (labels[MOUNT_VOLUME_LABEL] === 'true' && labels[ORGANIZATION_LABEL] === organizationId);
}

/** The image the helper is created from: the configured one, the workload's (a container using the volume), or any on the host. */
export async function helperImage(docker: Docker, volume: string, configured: string | undefined): Promise<string> {
  if (configured) {
    await docker
      .getImage(configured)
      .inspect()
      .catch((e: { statusCode?: number }) => {
        throw e.statusCode === 404 ? new Error(`the helper image ${configured} (config backupHelperImage) is not on this host; it is never pulled`) : e;
      });
    return configured;
  }
  const users = await docker.listContainers({ all: true, filters: { volume: [volume] } });
  const present = new Set((await docker.listImages()).map(i => i.Id));
  const own = users.find(c => present.has(c.ImageID));
  if (own) return own.ImageID;
  const any = [...present][0];
  if (!any) throw new Error('there is no image on this host to create the helper container of a volume copy from (any image does; config backupHelperImage names one)');
  return any;
}

async function helper(docker: Docker, hosts: ContainerHosts, image: string, volume: string, readOnly: boolean): Promise<Docker.Container> {
  // Never started: the command is only there because the engine wants one to create a container.
  return hosts.call(`create the helper container for volume ${volume}`, () =>
    docker.createContainer({
      Image: image,
      Cmd: ['berth-volume-helper'],
      Entrypoint: [],
      Labels: { [HELPER_LABEL]: volume },
      NetworkDisabled: true,
      HostConfig: { NetworkMode: 'none', Mounts: [{ Type: 'volume', Source: volume, Target: MOUNT_AT, ReadOnly: readOnly }] },
    }),
  );
}

/** The volume's files as a tar stream; call done() once it is read (removes the helper). */
export async function archiveVolume(docker: Docker, hosts: ContainerHosts, image: string | undefined, volume: string): Promise<{ tar: Readable; done(): Promise<void> }> {
  const container = await helper(docker, hosts, await helperImage(docker, volume, image), volume, true);
  try {
    const tar = (await hosts.call(`read volume ${volume}`, () => container.getArchive({ path: `${MOUNT_AT}/.` }))) as Readable;
    return { tar, done: async () => void (await container.remove({ force: true }).catch(() => {})) };
  } catch (e) {
    await container.remove({ force: true }).catch(() => {});
    throw e;
  }
}

interface VolumeFacts {
  Driver: string;
  Labels?: Record<string, string> | null;
  Options?: Record<string, string> | null;
}

/**
 * Empties the volume without running anything: the stopped containers of Berth's services and
 * stray helpers that still hold it are removed, then the volume is removed and created again as
 * it was. Refused for a volume with driver options (its data may live elsewhere and survive).
 */
async function emptyVolume(docker: Docker, hosts: ContainerHosts, volume: string): Promise<void> {
  const facts = (await hosts.call(`inspect volume ${volume}`, () => docker.getVolume(volume).inspect())) as VolumeFacts;
  if (facts.Driver !== 'local' || Object.keys(facts.Options ?? {}).length) {
    throw conflict(
      `volume ${volume} has the driver ${facts.Driver}${Object.keys(facts.Options ?? {}).length ? ' with options' : ''}: only plain local volumes are restored (emptied by being made again)`,
    );
  }
  const holders = await docker.listContainers({ all: true, filters: { volume: [volume] } });
  const strangers = holders.filter(c => !c.Labels?.[SERVICE_LABEL] && !c.Labels?.[HELPER_LABEL]);
  if (strangers.length) throw conflict(`volume ${volume} is held by containers that are not Berth's: ${strangers.map(c => c.Names.join(',')).join(' ')}`);
  for (const c of holders) {
    if (c.State === 'running') throw conflict(`volume ${volume} is still in use by the running container ${c.Names.join(',')}`);
    await hosts.call(`remove the stopped container ${c.Id.slice(0, 12)} that holds volume ${volume}`, () => docker.getContainer(c.Id).remove({ force: false }));
  }
  await hosts.call(`remove volume ${volume} to empty it`, () => docker.getVolume(volume).remove());
  await hosts.call(`create volume ${volume} again`, () => docker.createVolume({ Name: volume, Driver: facts.Driver, Labels: facts.Labels ?? {}, DriverOpts: {} }));
}

/** Empties the volume, then writes the tar's files into it. */
export async function replaceVolume(docker: Docker, hosts: ContainerHosts, image: string | undefined, volume: string, tar: Readable): Promise<void> {
  const from = await helperImage(docker, volume, image);
  await emptyVolume(docker, hosts, volume);
  const container = await helper(docker, hosts, from, volume, false);
  try {
    await hosts.call(`write volume ${volume}`, () => container.putArchive(tar, { path: MOUNT_AT }));
  } finally {
    await container.remove({ force: true }).catch(() => {});
  }
}

/** Scales every service using the volume to 0 (Berth's of this organization only) and waits until no container of them runs. */
export async function stopUsers(docker: Docker, hosts: ContainerHosts, volume: string, organizationId: string, log: (line: string) => void, signal?: AbortSignal): Promise<StoppedService[]> {
  const containers = await docker.listContainers({ all: true, filters: { volume: [volume] } });
  const strangers = containers.filter(c => !c.Labels?.[SERVICE_LABEL] && !c.Labels?.[HELPER_LABEL] && c.State === 'running');
  if (strangers.length) throw conflict(`volume ${volume} is in use by containers that are not Berth's: ${strangers.map(c => c.Names.join(',')).join(' ')}`);
  const names = [...new Set(containers.map(c => c.Labels?.[SERVICE_LABEL]).filter((n): n is string => !!n))];
  const stopped: StoppedService[] = [];
  try {
    for (const name of names) {
      const spec = (
        (await hosts.call(`inspect service ${name}`, () => docker.getService(name).inspect())) as { Spec: { Labels?: Record<string, string>; Mode?: { Replicated?: { Replicas?: number } } } }
      ).Spec;
      const labels = spec.Labels ?? {};
      if (!labels[ID_LABEL] || labels[ORGANIZATION_LABEL] !== organizationId) throw conflict(`volume ${volume} is in use by service ${name}, which is not this organization's`);
      const replicas = spec.Mode?.Replicated?.Replicas ?? 0;
      if (replicas === 0) continue;
      log(`Stopping service ${name} (${replicas} replica${replicas === 1 ? '' : 's'}) while its volume is copied`);
      await scaleService(docker, name, 0, { owner: labels[ID_LABEL], hosts, signal, settleMs: 0 });
      stopped.push({ name, replicas, owner: labels[ID_LABEL] });
    }
    const until = Date.now() + 60_000;
    while ((await docker.listContainers({ filters: { volume: [volume], status: ['running'] } })).some(c => c.Labels?.[SERVICE_LABEL])) {
      if (Date.now() > until) throw new Error(`the containers using volume ${volume} did not stop within 60 s`);
      await sleep(250, undefined, { signal });
    }
    return stopped;
  } catch (e) {
    await startAgain(docker, hosts, stopped, log);
    throw e;
  }
}

/** Brings stopped services back to their replicas (each tried, the first failure rethrown). */
export async function startAgain(docker: Docker, hosts: ContainerHosts, stopped: StoppedService[], log: (line: string) => void): Promise<void> {
  let failure: unknown;
  for (const s of stopped) {
    log(`Starting service ${s.name} again (${s.replicas} replica${s.replicas === 1 ? '' : 's'})`);
    await scaleService(docker, s.name, s.replicas, { owner: s.owner, hosts, settleMs: 0 }).catch(e => void (failure ??= e));
  }
  if (failure) throw failure;
}
