// The engine side of an application's runs, as the deploy queue's Deployer for target type
// "application", on the kit's shared lifecycle (stop, start, reload, settle, removal): get an image (pull or build from the fetched source), resolve env and
// attachments into a WorkloadService, roll it out on Swarm and wait for the new task.
// Status: running while deploying; done only once Swarm reports the new task running;
// error (set by settle) when the run fails, times out or dies with the process.
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { type Cradle, type DeploymentRun, type EntityManager, type RegistryAuth } from '@berth/core';
import type Docker from 'dockerode';
import { optionalService } from '@berth/core';
import { Application, type ApplicationRow } from './entities.ts';
import { KIND, type ApplicationService } from './service.ts';
import type { ReadLogsInput } from './schemas.ts';
import {
  RecordLifecycle,
  ensureImage,
  parseEnv,
  resolveEnv,
  swarmSettingsToService,
  toServiceMounts,
  ownerLabels,
  type Engine,
  type MountRecord,
  type Owner,
  type PortRecord,
  type WorkloadService,
} from '@berth/plugin-workloads';

declare module '@berth/core' {
  interface BerthEvents {
    /** A deployment finished: its new version runs. An application's names applicationId and its image; a compose stack's, composeId (image ''). */
    appDeploy: { applicationId?: string; composeId?: string; organizationId: string; appName: string; deploymentId: string; image: string; action: string; at: string };
    /** A deployment failed: an application's while fetching or building its source (applicationId), a compose stack's at any step (composeId). */
    appBuildError: { applicationId?: string; composeId?: string; organizationId: string; appName: string; deploymentId: string; error: string; at: string };
  }
}

/** Where an application keeps its files on this host (file mounts); appName is already a strict slug. */
export const applicationDir = (dataDir: string, appName: string) => path.join(dataDir, 'applications', appName);

/**
 * Another service made from the application's source and build (a pull request's preview): its
 * own name and owner, source fields that replace the application's (the pull request's branch),
 * and env, build args and build secrets laid over the application's and its previewEnv,
 * previewBuildArgs and previewBuildSecrets. It has no mounts or published ports (those stay the
 * application's), and its runs leave the application's status and events alone.
 */
export interface ApplicationVariant {
  /** The Swarm service name (a strict slug). */
  appName: string;
  /** The record that owns its service and images. */
  owner: Owner;
  fields: Record<string, unknown>;
  env: Record<string, string>;
  buildArgs: Record<string, string>;
  buildSecrets: Record<string, string>;
}

export class ApplicationDeployer extends RecordLifecycle<ApplicationRow, ApplicationService> {
  readonly targetType = KIND;
  protected readonly noun = 'application';
  protected override readonly settingsTable = { table: 'applications', idColumn: 'application_id' };

  constructor(apps: ApplicationService, cradle: () => Cradle) {
    super({ entity: Application, idField: 'applicationId' }, apps, cradle);
  }

  protected async deploy(row: ApplicationRow, action: string, run: DeploymentRun, engine: Engine): Promise<void> {
    if (action === 'rollback') return this.#rollBack(row, run, engine);
    if (action !== 'deploy' && action !== 'redeploy') throw new Error(`Unknown application action "${action}"`);
    await this.#deploy(row, action, run, engine);
  }

  /**
   * Rolls a kept release out again (rollback.rollback): its service as it ran — image by id, env,
   * settings — under the application's current name and this run's labels; no fetch, no build.
   */
  async #rollBack(row: ApplicationRow, run: DeploymentRun, engine: Engine): Promise<void> {
    const cradle = this.cradle();
    const rollbacks = optionalService(cradle, 'workloadRollbacks');
    if (!rollbacks) throw new Error('Rollbacks are not served here: the rollback plugin is disabled');
    if (!run.deployment.rollsBack) throw new Error('A rollback deployment names the release it rolls out (rollback.rollback queues it)');
    const { service, version } = await rollbacks.release(run.deployment.rollsBack, { kind: KIND, id: row.applicationId }, run.em);
    for (const value of Object.values(service.env)) run.redact(value);
    run.redact(service.registryAuth?.password);
    await this.records.setStatus(row.applicationId, 'running', run.em);
    const release: WorkloadService = { ...service, name: row.appName, ownerLabels: this.labels(row, run) };
    run.log(`Rolling ${row.appName} back to release v${version} (${release.image}): no build`);
    await engine.swarm.deployService(await this.pinned(row, release, run, engine), this.wait(run));
    await this.#deployed(row, run, release.image, 'rollback');
    run.log(`${row.appName} is running release v${version}`);
  }

  /** The status and what the bus's durable subscribers store (the notification outbox) commit together. */
  async #deployed(row: ApplicationRow, run: DeploymentRun, image: string, action: string): Promise<void> {
    const cradle = this.cradle();
    await run.em.transactional(async tx => {
      await this.records.setStatus(row.applicationId, 'done', tx);
      await cradle.events.emitDurable(
        'appDeploy',
        { applicationId: row.applicationId, organizationId: row.organizationId, appName: row.appName, deploymentId: run.deployment.deploymentId, image, action, at: new Date().toISOString() },
        tx,
      );
    });
  }

  /** Runs a variant of the application (a preview) on the application's engine; answers the image it runs. */
  async deployVariant(applicationId: string, variant: ApplicationVariant, run: DeploymentRun): Promise<string> {
    const row = await this.load(applicationId, run.em);
    if (!row) throw new Error('The application was deleted before its preview ran');
    return this.#deploy(row, 'deploy', run, await this.engine(row), variant);
  }

  /** Removes a variant's service (absent is fine). */
  async removeVariant(applicationId: string, variant: Pick<ApplicationVariant, 'appName' | 'owner'>, em: EntityManager): Promise<void> {
    const row = await this.load(applicationId, em);
    if (!row) return;
    await (await this.engine(row)).swarm.removeService(variant.appName, { owner: variant.owner.id, timeoutMs: 30_000 });
  }

  protected override labels(row: ApplicationRow, run: DeploymentRun, variant?: ApplicationVariant): Record<string, string> {
    return variant ? { ...ownerLabels(variant.owner), 'berth.deployment': run.deployment.deploymentId } : super.labels(row, run);
  }

  async #deploy(row: ApplicationRow, action: string, run: DeploymentRun, engine: Engine, variant?: ApplicationVariant): Promise<string> {
    const { docker, swarm } = engine;
    const cradle = this.cradle();
    const { deployment } = run;
    if (!variant) await this.records.setStatus(row.applicationId, 'running', run.em);
    const settings = { ...this.records.settingsOf(row), ...variant?.fields };
    const secrets = this.records.secretsOf(row);
    run.redact(secrets.password);

    // Environment first: a missing reference fails before any build time is spent.
    const texts = await cradle.environments.variables(row.environmentId, row.organizationId, run.em);
    // A preview: the application's previewEnv, previewBuildArgs and previewBuildSecrets over its own, then the variant's.
    const env = { ...resolveEnv(secrets.env, texts), ...(variant ? { ...resolveEnv(secrets.previewEnv, texts), ...variant.env } : {}) };
    for (const value of Object.values(env)) run.redact(value);
    const buildArgs = { ...parseEnv(secrets.buildArgs), ...(variant ? { ...parseEnv(secrets.previewBuildArgs), ...variant.buildArgs } : {}) };
    const buildSecrets = { ...parseEnv(secrets.buildSecrets), ...(variant ? { ...parseEnv(secrets.previewBuildSecrets), ...variant.buildSecrets } : {}) };
    for (const value of [...Object.values(buildArgs), ...Object.values(buildSecrets)]) run.redact(value);
    // The user networks too: one gone from the host fails the run before the build.
    const networks = await this.networksOf(row, settings, run, engine);

    const name = variant?.appName ?? row.appName;
    const labels = this.labels(row, run, variant);
    let image: string;
    let registryAuth: WorkloadService['registryAuth'] = null;
    try {
      ({ image, registryAuth } = await this.#image(row, name, labels, settings, secrets, buildArgs, buildSecrets, run, engine));
    } catch (e) {
      // Stored before the run ends in error (a crash after this still tells); a variant's failure is its own record's.
      if (!variant)
        await cradle.events.emitDurable(
          'appBuildError',
          {
            applicationId: row.applicationId,
            organizationId: row.organizationId,
            appName: row.appName,
            deploymentId: deployment.deploymentId,
            error: (e as Error).message,
            at: new Date().toISOString(),
          },
          run.em,
        );
      throw e;
    }

    // Mounts and published ports are the application's own: a variant gets neither.
    const mounts = variant ? [] : await this.#mounts(row, cradle, run, engine);
    const ports = variant ? [] : (((await optionalService(cradle, 'ports')?.forApplications([row.applicationId], run.em))?.get(row.applicationId) ?? []) as PortRecord[]);
    const service: WorkloadService = {
      name,
      image,
      env,
      ...swarmSettingsToService(settings),
      networks,
      mounts,
      ports: ports.map(p => ({ targetPort: p.targetPort, publishedPort: p.publishedPort, protocol: p.protocol, publishMode: p.publishMode })),
      // A variant is served through the proxy: it stays on the platform network.
      detachPlatformNetwork: !variant && Boolean(settings.detachDokployNetwork),
      registryAuth,
      ownerLabels: labels,
    };
    run.log(`Rolling out ${name} with ${image}`);
    const rolledOut = variant ? service : await this.pinned(row, service, run, engine);
    await swarm.deployService(rolledOut, this.wait(run));
    if (!variant) {
      await this.#keepRelease(row, rolledOut, settings, run, engine);
      await this.#deployed(row, run, image, action);
    }
    run.log(`${name} is running ${image}`);
    return image;
  }

  /**
   * Keeps the release that now runs to roll back to (the rollback plugin's, when enabled). It runs
   * already: a failure to keep it is logged, and the deployment stays done.
   */
  async #keepRelease(row: ApplicationRow, service: WorkloadService, settings: Record<string, unknown>, run: DeploymentRun, engine: Engine): Promise<void> {
    const rollbacks = optionalService(this.cradle(), 'workloadRollbacks');
    if (!rollbacks) return;
    const rollbackRegistryId = settings.rollbackActive ? ((settings.rollbackRegistryId as string | null) ?? null) : null;
    try {
      await rollbacks.keep(
        {
          workload: { kind: KIND, id: row.applicationId, organizationId: row.organizationId, serverId: engine.serverId, appName: row.appName },
          deploymentId: run.deployment.deploymentId,
          service,
          docker: engine.docker,
          rollbackRegistryId,
        },
        { em: run.em, signal: run.signal, log: line => run.log(line) },
      );
    } catch (e) {
      run.log(`The release could not be kept to roll back to: ${(e as Error).message}`);
    }
  }

  /**
   * The image to roll out, from the source provider of the record's sourceType: an image it names
   * (pulled by the record's engine, or copied there from this machine's), or a checkout in a
   * per-deployment work dir on this machine, built by the record's builder on the record's engine.
   */
  async #image(
    row: ApplicationRow,
    name: string,
    labels: Record<string, string>,
    settings: Record<string, unknown>,
    secrets: Record<string, string | null>,
    buildArgs: Record<string, string>,
    buildSecrets: Record<string, string>,
    run: DeploymentRun,
    engine: Engine,
  ): Promise<{ image: string; registryAuth: RegistryAuth | null }> {
    const cradle = this.cradle();
    const source = cradle.providers.get('source', row.sourceType);
    const workDir = path.join(cradle.config.dataDir, 'builds', run.deployment.deploymentId);
    await rm(workDir, { recursive: true, force: true });
    await mkdir(workDir, { recursive: true, mode: 0o700 });
    try {
      const fetched = await source.resolve({ fields: settings, secrets, workDir, ...this.sourceIo(row, run) });
      if ('image' in fetched) {
        await ensureImage(engine.docker, fetched.image, fetched.registryAuth, { signal: run.signal, log: line => run.log(line), fallback: engine.fallback });
        return fetched;
      }
      if (fetched.revision) run.log(`Fetched ${fetched.revision}`);
      // The application's file patches (patch.*); a preview (its own name) builds its pull request as it is, as the peer's do.
      if (name === row.appName) await this.applyPatches(row, workDir, run);
      // A build server builds and pushes to the build registry, the record's engine pulls from there: without one, refused before the build.
      const buildServerId = (settings.buildServerId as string | null) || null;
      const buildRegistryId = (settings.buildRegistryId as string | null) || null;
      if (buildServerId && !buildRegistryId)
        throw new Error(`The build server ${buildServerId} needs a build registry (buildRegistryId): the image it builds reaches the deploy server only through a registry`);
      const builder = buildServerId ? { docker: await (await cradle.hosts.of(buildServerId)).engine(), serverId: buildServerId } : engine;
      if (buildServerId) await run.buildsOn(buildServerId);
      // A tag must start with a letter, digit or _; deployment ids may start with '-'.
      const imageTag = `berth/${name.toLowerCase()}:deploy-${run.deployment.deploymentId.toLowerCase()}`;
      run.log(buildServerId ? `Building with ${row.buildType} on the build server ${buildServerId}` : `Building with ${row.buildType}`);
      if (builder.serverId !== null && row.buildType === 'dockerfile') {
        await this.#provideBaseImages(builder.serverId, path.join(workDir, normalizeBuildPath(fetched.buildPath), (settings.dockerfile as string | null) || 'Dockerfile'), run);
      }
      await cradle.providers.get('builder', row.buildType).build({
        // The building engine (the build server's, or the record's): on a server the context streams over its connection; the checkout stays here.
        engine: builder.docker,
        ...(builder.serverId !== null ? { dockerHost: await cradle.hosts.dockerHost(builder.serverId) } : {}),
        sourceDir: workDir,
        buildPath: normalizeBuildPath(fetched.buildPath),
        dockerfile: (settings.dockerfile as string | null) ?? null,
        dockerContextPath: (settings.dockerContextPath as string | null) || null,
        dockerBuildStage: (settings.dockerBuildStage as string | null) || null,
        publishDirectory: (settings.publishDirectory as string | null) || null,
        buildArgs,
        secrets: [...Object.values(buildSecrets), ...Object.values(buildArgs), ...(secrets.password ? [secrets.password] : [])],
        buildSecrets,
        imageTag,
        labels,
        signal: run.signal,
        log: line => run.log(line),
      });
      run.log(`Built ${imageTag}`);
      // With a registry (the build registry, from a build server), the image goes there and every node pulls it with the registry's credentials.
      const registryId = buildServerId ? buildRegistryId : (settings.registryId as string | null);
      const registries = optionalService(cradle, 'registries');
      if (buildServerId && !registries) throw new Error('A build server needs the registry plugin: its image reaches the deploy server through the build registry');
      if (registryId && registries) {
        const tag = `deploy-${run.deployment.deploymentId.toLowerCase()}`;
        return registries.push(
          builder.docker,
          imageTag,
          { name: name.toLowerCase(), tag, registryId, organizationId: row.organizationId },
          { em: run.em, signal: run.signal, log: line => run.log(line) },
        );
      }
      return { image: imageTag, registryAuth: null };
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }

  /**
   * A Dockerfile built on a server: the base images its FROM lines name (not its own stages, not
   * scratch, not interpolated) are copied there from the local engine when the server lacks them,
   * since the engine build never pulls on purpose.
   */
  async #provideBaseImages(serverId: string, dockerfile: string, run: DeploymentRun): Promise<void> {
    const text = await readFile(dockerfile, 'utf8').catch(() => '');
    const stages = new Set<string>();
    for (const [, image, stage] of text.matchAll(/^\s*FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?/gim)) {
      if (!stages.has(image!.toLowerCase()) && image !== 'scratch' && !image!.includes('$') && (await this.cradle().hosts.provideImage(serverId, image!, run.signal)) === 'copied')
        run.log(`Copied the base image ${image} to the server`);
      if (stage) stages.add(stage.toLowerCase());
    }
  }

  /** The workload's mounts as Swarm mounts; file mounts are written under the application's directory first. */
  async #mounts(row: ApplicationRow, cradle: Cradle, run: DeploymentRun, engine: Engine): Promise<WorkloadService['mounts']> {
    const records = ((await optionalService(cradle, 'mounts')?.forServices(KIND, [row.applicationId], run.em))?.get(row.applicationId) ?? []) as MountRecord[];
    const out = await toServiceMounts(records, path.join(applicationDir(cradle.config.dataDir, row.appName), 'files'), engine, this.owner(row), line => run.log(line));
    if (out.length) run.log(`Mounting ${out.length} mount(s)`);
    return out;
  }

  /** The application's service log (NOT_FOUND before its first deploy). */
  readLogs(row: ApplicationRow, input: ReadLogsInput): Promise<string> {
    return this.serviceLogs(row, { tail: input.tail ?? 100, since: input.since ?? 'all', search: input.search });
  }
}

/** "/" and "" mean the root; otherwise relative, without a leading slash. */
function normalizeBuildPath(p: string | null): string {
  const trimmed = (p ?? '').replace(/^\/+|\/+$/g, '');
  return trimmed || '.';
}

export type { Docker };
