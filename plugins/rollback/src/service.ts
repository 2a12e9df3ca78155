// The releases workloads keep to roll back to (the workload kit sees this as `workloadRollbacks`).
// After each successful deploy the deployer hands over what it rolled out: the image is kept on the
// engine that ran it under `berth/<appName>:rollback-v<N>` (the image's id tagged, so a mutable
// tag such as nginx:latest moving on changes nothing), or pushed to the workload's rollback
// registry when rollbackActive is on (any node of a swarm can pull it), and the whole service is
// stored sealed (its env holds secrets). Only the newest `rollbacksKept` releases stay: an older
// one's entry goes, and its rollback tag with it. A cleanup leaves every kept release's image.
import type Docker from 'dockerode';
import { optionalService, type Cradle, type EntityManager } from '@berth/core';
import type { Release, RollbackEntry, WorkloadRollbacks, WorkloadService } from '@berth/plugin-workloads';
import { Rollback, type RollbackRow } from './entities.ts';
import type { RollbackView } from './schemas.ts';

/** The repository of a workload's rollback tags on its engine (appName is already a strict slug). */
export const rollbackRepository = (appName: string) => `berth/${appName.toLowerCase()}`;
const tagOf = (version: number) => `rollback-v${version}`;

/** What a release stores of its service: everything but the registry credentials (read again at rollback time). */
type StoredService = Omit<WorkloadService, 'registryAuth'>;

export class RollbackService implements WorkloadRollbacks {
  readonly #cradle: () => Cradle;

  constructor(cradle: () => Cradle) {
    this.#cradle = cradle;
  }

  async keep(release: Release, io: { em: EntityManager; signal: AbortSignal; log(line: string): void }): Promise<void> {
    const { config, secrets } = this.#cradle();
    const { workload, service, docker } = release;
    const kept = config.rollbacksKept;
    if (kept > 0) {
      const [{ version }] = (await io.em.execute(`select nextval('rollbacks_version_seq')::int as "version"`)) as [{ version: number }];
      const { image, registryId } = await this.#keepImage(release, version, io);
      const { registryAuth: _auth, ...stored } = service;
      io.em.create(Rollback, {
        deploymentId: release.deploymentId,
        serviceType: workload.kind,
        serviceId: workload.id,
        organizationId: workload.organizationId,
        serverId: workload.serverId,
        version,
        image,
        registryId,
        release: secrets.sealText(JSON.stringify(stored satisfies StoredService)),
      });
      await io.em.flush();
      io.log(`Kept as release v${version} to roll back to (${image})`);
    }
    // The oldest beyond the count go, with their rollback tags.
    const rows = await io.em.find(Rollback, { serviceType: workload.kind, serviceId: workload.id }, { orderBy: { version: 'desc' } });
    for (const row of rows.slice(kept)) await this.#drop(row, io.em, docker);
  }

  async release(rollbackId: string, workload: { kind: string; id: string }, em: EntityManager): Promise<{ service: WorkloadService; version: number }> {
    const row = await em.findOne(Rollback, { rollbackId, serviceType: workload.kind, serviceId: workload.id });
    if (!row) throw new Error(`The release ${rollbackId} to roll back to is gone (deleted, or older than the releases kept)`);
    const stored = JSON.parse(this.#cradle().secrets.openText(row.release)) as StoredService;
    let registryAuth: WorkloadService['registryAuth'] = null;
    if (row.registryId) {
      const registries = optionalService(this.#cradle(), 'registries');
      if (!registries) throw new Error(`Release v${row.version} is in the registry ${row.registryId}: the registry plugin is disabled`);
      registryAuth = (await registries.forDeploy(row.registryId, row.organizationId, em)).auth;
    }
    return { service: { ...stored, image: row.image, registryAuth }, version: row.version };
  }

  async removeForWorkload(kind: string, id: string, em: EntityManager): Promise<void> {
    const rows = await em.find(Rollback, { serviceType: kind, serviceId: id });
    for (const row of rows) await this.#drop(row, em, null);
  }

  async keptImages(serverId: string | null, em: EntityManager): Promise<Set<string>> {
    const rows = await em.find(Rollback, { serverId, registryId: null }, { fields: ['image'] });
    return new Set(rows.map(r => r.image));
  }

  async forDeployments(deploymentIds: string[], organizationId: string, em: EntityManager): Promise<Map<string, RollbackEntry>> {
    if (!deploymentIds.length) return new Map();
    const rows = await em.find(Rollback, { deploymentId: { $in: deploymentIds }, organizationId });
    return new Map(rows.map(r => [r.deploymentId, this.entry(r)]));
  }

  /** A release as the API answers it: its context without env values or credentials. */
  entry(row: RollbackRow): RollbackView {
    const stored = JSON.parse(this.#cradle().secrets.openText(row.release)) as StoredService;
    return {
      rollbackId: row.rollbackId,
      deploymentId: row.deploymentId,
      version: row.version,
      image: row.image,
      createdAt: row.createdAt.toISOString(),
      fullContext: {
        appName: stored.name,
        image: stored.image,
        envKeys: Object.keys(stored.env).sort(),
        command: stored.command ?? null,
        replicas: stored.replicas,
        ports: stored.ports,
        mounts: stored.mounts.map(m => ({ type: m.type, source: m.source, target: m.target })),
      },
    };
  }

  /** Whether the workload's service runs the release's image now (a rollback rolled it out): its tag must stay. */
  async runsNow(row: RollbackRow, appName: string): Promise<boolean> {
    const engine = await this.#engine(row.serverId ?? null);
    const spec = await engine
      ?.getService(appName)
      .inspect()
      .catch(() => null);
    const image = (spec as { Spec?: { TaskTemplate?: { ContainerSpec?: { Image?: string } } } } | null)?.Spec?.TaskTemplate?.ContainerSpec?.Image;
    return image !== undefined && image.split('@')[0] === row.image;
  }

  /** Deletes a release: its entry, and its rollback tag on the engine that keeps it (an image a service still runs stays, untagged). */
  async drop(row: RollbackRow, em: EntityManager): Promise<void> {
    await this.#drop(row, em, null);
  }

  async #keepImage(release: Release, version: number, io: { em: EntityManager; signal: AbortSignal; log(line: string): void }): Promise<{ image: string; registryId: string | null }> {
    const { workload, service, docker } = release;
    const repo = rollbackRepository(workload.appName);
    // The image's id: the reference it ran may be a tag that moves on (nginx:latest).
    const { Id } = await docker.getImage(service.image).inspect();
    await docker.getImage(Id).tag({ repo, tag: tagOf(version) });
    const local = `${repo}:${tagOf(version)}`;
    const registries = release.rollbackRegistryId ? optionalService(this.#cradle(), 'registries') : undefined;
    if (!release.rollbackRegistryId || !registries) return { image: local, registryId: null };
    const pushed = await registries.push(
      docker,
      local,
      { name: workload.appName.toLowerCase(), tag: tagOf(version), registryId: release.rollbackRegistryId, organizationId: workload.organizationId },
      io,
    );
    // The registry holds it now: the engine's tag would only hold the disk.
    await docker
      .getImage(local)
      .remove({ noprune: true })
      .catch(() => undefined);
    return { image: pushed.image, registryId: release.rollbackRegistryId };
  }

  async #drop(row: RollbackRow, em: EntityManager, docker: Docker | null): Promise<void> {
    if (!row.registryId) {
      const engine = docker ?? (await this.#engine(row.serverId ?? null));
      // The tag (forced: past a stopped task's container); the image too when no other tag names it.
      // An image a running container uses stays (the engine refuses even forced, and that is fine).
      await engine
        ?.getImage(row.image)
        .remove({ force: true, noprune: false })
        .catch(() => undefined);
    }
    await em.nativeDelete(Rollback, { rollbackId: row.rollbackId });
  }

  /** The engine of a release's host; null when that host is gone (its tag went with it). */
  async #engine(serverId: string | null): Promise<Docker | null> {
    try {
      return await (await this.#cradle().hosts.of(serverId)).engine();
    } catch {
      return null;
    }
  }
}
