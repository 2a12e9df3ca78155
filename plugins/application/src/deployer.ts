// The engine side of an application's runs, as the deploy queue's Deployer for target type
// "application", on the kit's shared lifecycle (stop, start, reload, settle, removal): get an image (pull or build from the fetched source), resolve env and
// attachments into a WorkloadService, roll it out on Swarm and wait for the new task.
// Status: running while deploying; done only once Swarm reports the new task running;
// error (set by settle) when the run fails, times out or dies with the process.
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { type Cradle, type DeploymentRun, type EntityManager } from '@berth/core';
import type Docker from 'dockerode';
import { optionalService } from '@berth/core';
import { Application, type ApplicationRow } from './entities.ts';
import { KIND, type ApplicationService } from './service.ts';
import type { ReadLogsInput } from './schemas.ts';
import { WorkloadLifecycle, ensureImage, parseEnv, resolveEnv, swarmSettingsToService, toServiceMounts, type Engine, type MountRecord, type PortRecord, type WorkloadService } from '@berth/plugin-workloads';

declare module '@berth/core' {
  interface BerthEvents {
    /** An application's deployment finished: its new version runs. */
    appDeploy: { applicationId: string; organizationId: string; appName: string; deploymentId: string; image: string; action: string; at: string };
    /** An application's deployment failed while fetching or building its source. */
    appBuildError: { applicationId: string; organizationId: string; appName: string; deploymentId: string; error: string; at: string };
  }
}

/** Where an application keeps its files on this host (file mounts); appName is already a strict slug. */
export const applicationDir = (dataDir: string, appName: string) => path.join(dataDir, 'applications', appName);

export class ApplicationDeployer extends WorkloadLifecycle<ApplicationRow> {
  readonly targetType = KIND;
  protected readonly noun = 'application';
  readonly #apps: ApplicationService;

  constructor(apps: ApplicationService, cradle: () => Cradle) {
    super(cradle);
    this.#apps = apps;
  }

  protected load(applicationId: string, em: EntityManager): Promise<ApplicationRow | null> {
    return em.findOne(Application, { applicationId });
  }

  protected identify(row: ApplicationRow) {
    return { id: row.applicationId, appName: row.appName, organizationId: row.organizationId };
  }

  protected replicas(row: ApplicationRow): number {
    return Number(this.#apps.settingsOf(row).replicas ?? 1);
  }

  protected setStatus(applicationId: string, status: string, em: EntityManager): Promise<void> {
    return this.#apps.setStatus(applicationId, status, em);
  }

  protected async deploy(row: ApplicationRow, action: string, run: DeploymentRun, engine: Engine): Promise<void> {
    if (action !== 'deploy' && action !== 'redeploy') throw new Error(`Unknown application action "${action}"`);
    return this.#deploy(row, action, run, engine);
  }

  async #deploy(row: ApplicationRow, action: string, run: DeploymentRun, { docker, swarm }: Engine): Promise<void> {
    const cradle = this.cradle();
    const { deployment } = run;
    await this.#apps.setStatus(row.applicationId, 'running', run.em);
    const settings = this.#apps.settingsOf(row);
    const secrets = this.#apps.secretsOf(row);
    run.redact(secrets.password);

    // Environment first: a missing reference fails before any build time is spent.
    const texts = await cradle.environments.variables(row.environmentId, row.organizationId, run.em);
    const env = resolveEnv(secrets.env, texts);
    for (const value of Object.values(env)) run.redact(value);
    const buildArgs = parseEnv(secrets.buildArgs);
    const buildSecrets = parseEnv(secrets.buildSecrets);
    for (const value of [...Object.values(buildArgs), ...Object.values(buildSecrets)]) run.redact(value);

    let image: string;
    let registryAuth: WorkloadService['registryAuth'] = null;
    try {
      if (row.sourceType === 'docker') {
        const dockerImage = settings.dockerImage as string | null;
        if (!dockerImage) throw new Error('No docker image is set: save one with saveDockerProvider');
        if (settings.username && secrets.password) {
          registryAuth = { username: settings.username as string, password: secrets.password, serveraddress: (settings.registryUrl as string | null) || registryOf(dockerImage) };
        }
        await ensureImage(docker, dockerImage, registryAuth, run);
        image = dockerImage;
      } else {
        image = await this.#build(row, settings, secrets, buildArgs, buildSecrets, run);
      }
    } catch (e) {
      cradle.events.emit('appBuildError', {
        applicationId: row.applicationId, organizationId: row.organizationId, appName: row.appName, deploymentId: deployment.deploymentId,
        error: (e as Error).message, at: new Date().toISOString(),
      });
      throw e;
    }

    const mounts = await this.#mounts(row, cradle, run);
    const ports = ((await optionalService(cradle, 'ports')?.forApplications([row.applicationId], run.em))?.get(row.applicationId) ?? []) as PortRecord[];
    const service: WorkloadService = {
      name: row.appName,
      image,
      env,
      ...swarmSettingsToService(settings),
      mounts,
      ports: ports.map(p => ({ targetPort: p.targetPort, publishedPort: p.publishedPort, protocol: p.protocol, publishMode: p.publishMode })),
      detachPlatformNetwork: Boolean(settings.detachDokployNetwork),
      registryAuth,
      ownerLabels: this.labels(row, run),
    };
    run.log(`Rolling out ${row.appName} with ${image}`);
    await swarm.deployService(service, this.wait(run));
    await this.#apps.setStatus(row.applicationId, 'done', run.em);
    run.log(`${row.appName} is running ${image}`);
    cradle.events.emit('appDeploy', {
      applicationId: row.applicationId, organizationId: row.organizationId, appName: row.appName, deploymentId: deployment.deploymentId,
      image, action, at: new Date().toISOString(),
    });
  }

  /** Fetches the source into a per-deployment work dir and builds it; answers the image tag. */
  async #build(row: ApplicationRow, settings: Record<string, unknown>, secrets: Record<string, string | null>, buildArgs: Record<string, string>, buildSecrets: Record<string, string>, run: DeploymentRun): Promise<string> {
    const cradle = this.cradle();
    const { source, buildPath } = await this.#source(row, settings, run);
    const workDir = path.join(cradle.config.dataDir, 'builds', run.deployment.deploymentId);
    await rm(workDir, { recursive: true, force: true });
    await mkdir(workDir, { recursive: true, mode: 0o700 });
    try {
      run.log(`Fetching the ${row.sourceType} source`);
      const { revision } = await cradle.builders.fetcher(source.kind).fetch({ source, workDir, signal: run.signal, log: line => run.log(line) });
      if (revision) run.log(`Fetched ${revision}`);
      // A tag must start with a letter, digit or _; deployment ids may start with '-'.
      const imageTag = `berth/${row.appName.toLowerCase()}:deploy-${run.deployment.deploymentId.toLowerCase()}`;
      run.log(`Building with ${row.buildType}`);
      await cradle.builders.builder(row.buildType).build({
        engine: await cradle.hosts.local(),
        sourceDir: workDir,
        buildPath: normalizeBuildPath(buildPath),
        dockerfile: (settings.dockerfile as string | null) ?? null,
        dockerContextPath: (settings.dockerContextPath as string | null) || null,
        dockerBuildStage: (settings.dockerBuildStage as string | null) || null,
        publishDirectory: (settings.publishDirectory as string | null) || null,
        buildArgs,
        secrets: [...Object.values(buildSecrets), ...Object.values(buildArgs), ...(secrets.password ? [secrets.password] : [])],
        imageTag,
        labels: this.labels(row, run),
        signal: run.signal,
        log: line => run.log(line),
      });
      run.log(`Built ${imageTag}`);
      return imageTag;
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }

  async #source(row: ApplicationRow, settings: Record<string, unknown>, run: DeploymentRun): Promise<{ source: { kind: string; [k: string]: unknown }; buildPath: string | null }> {
    const s = (k: string) => (settings[k] as string | null | undefined) ?? null;
    switch (row.sourceType) {
      case 'git': {
        const url = s('customGitUrl');
        if (!url) throw new Error('No git URL is set: save one with saveGitProvider');
        const refused = this.cradle().hostAccess.localGitRefusal(url);
        if (refused) throw refused;
        const keyId = s('customGitSSHKeyId');
        const privateKey = keyId ? await this.cradle().sshKeys.privateKey(keyId, row.organizationId, run.em) : null;
        if (privateKey) run.redact(privateKey);
        return {
          source: { kind: 'git', url, branch: s('customGitBranch') || 'main', ...(privateKey ? { sshKey: { privateKey } } : {}), enableSubmodules: Boolean(settings.enableSubmodules) },
          buildPath: s('customGitBuildPath'),
        };
      }
      case 'github':
        return { source: { kind: 'github', repository: s('repository'), owner: s('owner'), branch: s('branch'), providerId: s('githubId') }, buildPath: s('buildPath') };
      case 'gitlab':
        return { source: { kind: 'gitlab', repository: s('gitlabRepository'), owner: s('gitlabOwner'), branch: s('gitlabBranch'), providerId: s('gitlabId') }, buildPath: s('gitlabBuildPath') };
      case 'bitbucket':
        return { source: { kind: 'bitbucket', repository: s('bitbucketRepository'), owner: s('bitbucketOwner'), branch: s('bitbucketBranch'), providerId: s('bitbucketId') }, buildPath: s('bitbucketBuildPath') };
      case 'gitea':
        return { source: { kind: 'gitea', repository: s('giteaRepository'), owner: s('giteaOwner'), branch: s('giteaBranch'), providerId: s('giteaId') }, buildPath: s('giteaBuildPath') };
      default:
        throw new Error(`Deploying from a "${row.sourceType}" source is not available yet`);
    }
  }

  /** The workload's mounts as Swarm mounts; file mounts are written under the application's directory first. */
  async #mounts(row: ApplicationRow, cradle: Cradle, run: DeploymentRun): Promise<WorkloadService['mounts']> {
    const records = ((await optionalService(cradle, 'mounts')?.forServices(KIND, [row.applicationId], run.em))?.get(row.applicationId) ?? []) as MountRecord[];
    const out = await toServiceMounts(records, path.join(applicationDir(cradle.config.dataDir, row.appName), 'files'));
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

/** The registry host of an image reference (docker.io when the first component is not a host). */
function registryOf(image: string): string {
  const first = image.split('/')[0]!;
  return image.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost') ? first : 'docker.io';
}

export type { Docker };
