// One volume backup run and one volume restore, as the jobs of their deployments. A run copies
// the volume (its users stopped first when turnOff) as a tar through gzip to the destination,
// checked whole, under `<workload appName>/<prefix>/<volume>-<time>.tar.gz`; retention then
// deletes the oldest of those files. A restore reads the whole file first (a whole gzip, or the
// volume is not touched), stops what uses the volume, empties it, writes the files back and
// starts those services again.
import { createGunzip } from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import type Docker from 'dockerode';
import type { EntityManager, EventBus } from '@berth/core';
import { ensureMountVolume, volumeLabels, type ContainerHosts, type WorkloadRef, type WorkloadRegistry } from '@berth/plugin-workloads';
import { Destination, type VolumeBackupRow, type VolumeRestoreRow } from './entities.ts';
import type { DestinationService } from './destinations.ts';
import { gzipFraming, inspectObject, storeWhole } from './upload.ts';
import { stamp } from './runner.ts';
import { archiveVolume, replaceVolume, startAgain, stopUsers, volumeBelongs, type StoppedService } from './volume-copy.ts';

export const VOLUME_FILE_SUFFIX = '.tar.gz';
const folderOf = (appName: string, prefix: string) => [appName, ...prefix.split('/').filter(Boolean)].join('/') + '/';
export const volumeFileKey = (appName: string, prefix: string, volume: string, at: Date) => `${folderOf(appName, prefix)}${volume}-${stamp(at)}${VOLUME_FILE_SUFFIX}`;

interface Io {
  signal?: AbortSignal;
  log(line: string): void;
}

export class VolumeRunner {
  readonly #workloads: () => WorkloadRegistry;
  readonly #destinations: DestinationService;
  readonly #hosts: () => ContainerHosts;
  readonly #events: () => EventBus;
  readonly #image: () => string | undefined;

  constructor(o: { workloads: () => WorkloadRegistry; destinations: DestinationService; hosts: () => ContainerHosts; events: () => EventBus; image: () => string | undefined }) {
    this.#workloads = o.workloads;
    this.#destinations = o.destinations;
    this.#hosts = o.hosts;
    this.#events = o.events;
    this.#image = o.image;
  }

  /** The workload (of the organization) and the check that the volume is its own or a mount volume of its organization. */
  async #checked(
    serviceType: string,
    serviceId: string,
    volume: string,
    organizationId: string,
    em: EntityManager,
    mustExist: boolean,
  ): Promise<{ workload: WorkloadRef; exists: boolean; docker: Docker }> {
    const workload = await this.#workloads().owner(serviceType, serviceId, organizationId, em);
    const hosts = this.#hosts();
    // The workload's host: its server's engine (the helper image copied there when it lacks it), or this machine's.
    const docker = await (await hosts.of(workload.serverId)).engine();
    const labels = await volumeLabels(docker, hosts, volume);
    if (!labels && mustExist) throw new Error(`volume ${volume} does not exist on this host`);
    if (labels && !volumeBelongs(labels, workload.id, organizationId)) throw new Error(`volume ${volume} is neither ${workload.appName}'s nor a mount volume of its organization`);
    const helper = this.#image();
    if (workload.serverId !== null && helper) await hosts.provideImage(workload.serverId, helper);
    return { workload, exists: !!labels, docker };
  }

  /** Runs the backup; records the outcome and emits volumeBackup; rethrows a failure. */
  async run(row: VolumeBackupRow, em: EntityManager, io: Io): Promise<{ key: string; size: number; sha256: string }> {
    try {
      const result = await this.#run(row, em, io);
      Object.assign(row, { lastRunAt: new Date(), lastError: null });
      await em.transactional(tx =>
        this.#events().emitDurable(
          'volumeBackup',
          { volumeBackupId: row.volumeBackupId, organizationId: row.organizationId, volumeName: row.volumeName, status: 'success', file: result.key, error: null },
          tx,
        ),
      );
      return result;
    } catch (e) {
      const message = (e as Error).message;
      Object.assign(row, { lastRunAt: new Date(), lastError: message });
      await em.transactional(tx =>
        this.#events().emitDurable(
          'volumeBackup',
          { volumeBackupId: row.volumeBackupId, organizationId: row.organizationId, volumeName: row.volumeName, status: 'error', file: null, error: message },
          tx,
        ),
      );
      throw e;
    }
  }

  async #run(row: VolumeBackupRow, em: EntityManager, io: Io): Promise<{ key: string; size: number; sha256: string }> {
    const { workload, docker } = await this.#checked(row.serviceType, row.serviceId, row.volumeName, row.organizationId, em, true);
    const store = this.#destinations.open(await em.findOneOrFail(Destination, { destinationId: row.destinationId }));
    const hosts = this.#hosts();
    const key = volumeFileKey(workload.appName, row.prefix, row.volumeName, new Date());
    let stopped: StoppedService[] = [];
    if (row.turnOff) stopped = await stopUsers(docker, hosts, row.volumeName, row.organizationId, io.log, io.signal);
    let result: { size: number; sha256: string };
    try {
      io.log(`Copying volume ${row.volumeName} to ${key}`);
      const { tar, done } = await archiveVolume(docker, hosts, this.#image(), row.volumeName);
      try {
        result = await storeWhole(store, key, gzipFraming(null), sink => pipeline(tar, sink));
      } finally {
        await done();
      }
    } catch (e) {
      throw new Error(`Backup of volume ${row.volumeName} failed: ${(e as Error).message}`);
    } finally {
      await startAgain(docker, hosts, stopped, io.log);
    }
    io.log(`Stored ${key}: ${result.size} bytes, sha256 ${result.sha256}`);
    await this.#retain(row, workload.appName, store, io);
    return { key, ...result };
  }

  /** Keeps the newest keepLatestCount files of this volume in this backup's folder. */
  async #retain(row: VolumeBackupRow, appName: string, store: ReturnType<DestinationService['open']>, io: Io): Promise<void> {
    if (!row.keepLatestCount) return;
    const folder = folderOf(appName, row.prefix);
    const own = (await store.list(folder))
      .map(o => o.key)
      .filter(k => k.startsWith(`${folder}${row.volumeName}-`) && k.endsWith(VOLUME_FILE_SUFFIX) && !k.slice(folder.length).includes('/'))
      .sort()
      .reverse();
    for (const key of own.slice(row.keepLatestCount)) {
      await store.remove(key);
      io.log(`Retention: deleted ${key}`);
    }
  }

  /** Restores the file into the volume, stopping what uses it and starting it again. */
  async restore(restore: VolumeRestoreRow, em: EntityManager, io: Io): Promise<void> {
    const { workload, exists, docker } = await this.#checked(restore.serviceType, restore.serviceId, restore.volumeName, restore.organizationId, em, false);
    const store = this.#destinations.open(await em.findOneOrFail(Destination, { destinationId: restore.destinationId }));
    io.log(`Reading ${restore.backupFile} whole before the volume is touched`);
    const checked = await inspectObject(await store.get(restore.backupFile, { signal: io.signal }), gzipFraming(null)).catch((e: Error) => {
      throw new Error(`${restore.backupFile} is damaged: ${e.message}`);
    });
    io.log(`${restore.backupFile}: ${checked.size} bytes, sha256 ${checked.sha256}`);
    const hosts = this.#hosts();
    if (!exists) {
      io.log(`Creating volume ${restore.volumeName}`);
      await ensureMountVolume(docker, hosts, restore.volumeName, { kind: workload.kind, id: workload.id, organizationId: workload.organizationId });
    }
    const stopped = await stopUsers(docker, hosts, restore.volumeName, restore.organizationId, io.log, io.signal);
    try {
      io.log(`Restoring ${restore.backupFile} into volume ${restore.volumeName}`);
      const gunzip = createGunzip();
      const feeding = pipeline(await store.get(restore.backupFile, { signal: io.signal }), gunzip);
      await Promise.all([replaceVolume(docker, hosts, this.#image(), restore.volumeName, gunzip), feeding]).catch(e => {
        gunzip.destroy();
        throw e;
      });
    } finally {
      await startAgain(docker, hosts, stopped, io.log);
    }
    io.log('Volume restore done');
  }
}

declare module '@berth/core' {
  interface BerthEvents {
    /** A volume backup ran: success with its file, or error with the reason. */
    volumeBackup: { volumeBackupId: string; organizationId: string; volumeName: string; status: 'success' | 'error'; file: string | null; error: string | null };
  }
}
