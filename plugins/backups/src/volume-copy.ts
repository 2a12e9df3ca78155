// A volume copied out of the engine and back, through a helper container of a local image
// (config backupHelperImage; never pulled). Out: the engine's archive of the volume (a tar) read
// from a created, never started helper, so nothing runs. Back: the helper empties the volume
// (find … -exec rm -rf, an argument array) and the archive is put in. What uses the volume (Berth's
// Swarm services of the organization) is scaled to 0 first and back to its replicas after,
// whatever happened; a running container that is not Berth's is a 409, never stopped.
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
export interface StoppedService { name: string; replicas: number; owner: string }

/** Whether the volume may be copied for a workload: its own (berth.id) or a mount volume of its organization. */
export function volumeBelongs(labels: Record<string, string>, workloadId: string, organizationId: string): boolean {
  return ownedBy(labels, workloadId) || (labels[MOUNT_VOLUME_LABEL] === 'true' && labels[ORGANIZATION_LABEL] === organizationId);
}

async function helper(docker: Docker, hosts: ContainerHosts, image: string, volume: string, cmd: string[], readOnly: boolean): Promise<Docker.Container> {
  await docker.getImage(image).inspect().catch((e: { statusCode?: number }) => {
    throw e.statusCode === 404 ? new Error(`the helper image ${image} is not on this host (config backupHelperImage: any local image with find)`) : e;
  });
  return hosts.call(`create the helper container for volume ${volume}`, () => docker.createContainer({
    Image: image, Cmd: cmd, Entrypoint: [], Labels: { [HELPER_LABEL]: volume },
    HostConfig: { NetworkMode: 'none', Mounts: [{ Type: 'volume', Source: volume, Target: MOUNT_AT, ReadOnly: readOnly }] },
  }));
}

/** The volume's files as a tar stream; call done() once it is read (removes the helper). */
export async function archiveVolume(docker: Docker, hosts: ContainerHosts, image: string, volume: string): Promise<{ tar: Readable; done(): Promise<void> }> {
  const container = await helper(docker, hosts, image, volume, ['true'], true);
  try {
    const tar = await hosts.call(`read volume ${volume}`, () => container.getArchive({ path: `${MOUNT_AT}/.` })) as unknown as Readable;
    return { tar, done: async () => void (await container.remove({ force: true }).catch(() => {})) };
  } catch (e) {
    await container.remove({ force: true }).catch(() => {});
    throw e;
  }
}

/** Empties the volume, then writes the tar's files into it. */
export async function replaceVolume(docker: Docker, hosts: ContainerHosts, image: string, volume: string, tar: Readable): Promise<void> {
  const container = await helper(docker, hosts, image, volume, ['find', MOUNT_AT, '-mindepth', '1', '-maxdepth', '1', '-exec', 'rm', '-rf', '{}', '+'], false);
  try {
    await container.start();
    const { StatusCode } = await container.wait() as { StatusCode: number };
    if (StatusCode !== 0) {
      // The engine's log frames carry binary headers: keep the printable text only.
      const logs = (await container.logs({ stdout: true, stderr: true, follow: false }) as Buffer).toString('utf8').replace(/[^\x20-\x7e\n\t]/g, '').slice(-500);
      throw new Error(`emptying volume ${volume} failed (exit ${StatusCode}): ${logs}`);
    }
    await hosts.call(`write volume ${volume}`, () => container.putArchive(tar as never, { path: MOUNT_AT }));
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
      const spec = (await hosts.call(`inspect service ${name}`, () => docker.getService(name).inspect()) as { Spec: { Labels?: Record<string, string>; Mode?: { Replicated?: { Replicas?: number } } } }).Spec;
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
