// The engine side of an application's runs, as the deploy queue's Deployer for target type
// "application": get an image (pull or build from the fetched source), resolve env and
// attachments into a WorkloadService, roll it out on Swarm and wait for the new task.
// Status: running while deploying; done only once Swarm reports the new task running;
// error (set by settle) when the run fails, times out or dies with the process.
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { type Cradle, type Deployer, type DeploymentRun, type EntityManager } from '@berth/core';
import type Docker from 'dockerode';
import { optionalService } from '@berth/core';
import { Application, type ApplicationRow } from './entities.ts';
import { KIND, type ApplicationService } from './service.ts';
import type { ReadLogsInput } from './schemas.ts';
import { swarmOf, type SwarmOps } from './swarm.ts';
import { parseEnv, resolveEnv, swarmSettingsToService, toServiceMounts, type MountRecord, type PortRecord, type WorkloadService } from '@berth/plugin-workloads';

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

export class ApplicationDeployer implements Deployer {
  readonly targetType = KIND;
  readonly #apps: ApplicationService;
  readonly #cradle: () => Cradle;

  constructor(apps: ApplicationService, cradle: () => Cradle) {
    this.#apps = apps;
    this.#cradle = cradle;
  }

  async #swarm(): Promise<SwarmOps> {
    const { hosts, config } = this.#cradle();
    return swarmOf(await hosts.local(), hosts, config.deploySettleSeconds);
  }

  async run(action: string, run: DeploymentRun): Promise<void> {
    const row = await run.em.findOne(Application, { applicationId: run.deployment.targetId });
    if (!row) throw new Error('The application was deleted before its deployment ran');
    const swarm = await this.#swarm();
    switch (action) {
      case 'deploy':
      case 'redeploy':
        return this.#deploy(row, action, run, swarm);
      case 'stop':
        run.log(`Scaling ${row.appName} to 0 replicas`);
        await swarm.scale(row.appName, 0, run);
        await this.#apps.setStatus(row.applicationId, 'idle', run.em);
        run.log('Stopped');
        return;
      case 'start': {
        if (!(await swarm.exists(row.appName))) throw new Error(`${row.appName} has never been deployed: deploy it first`);
        const replicas = Number(this.#apps.settingsOf(row).replicas ?? 1);
        await this.#apps.setStatus(row.applicationId, 'running', run.em);
        run.log(`Scaling ${row.appName} to ${replicas} replica(s)`);
        await swarm.scale(row.appName, replicas, run);
        await this.#apps.setStatus(row.applicationId, 'done', run.em);
        run.log('Started');
        return;
      }
      case 'reload':
        if (!(await swarm.exists(row.appName))) throw new Error(`${row.appName} has never been deployed: deploy it first`);
        await this.#apps.setStatus(row.applicationId, 'running', run.em);
        run.log(`Restarting the tasks of ${row.appName}`);
        await swarm.restart(row.appName, run);
        await this.#apps.setStatus(row.applicationId, 'done', run.em);
        run.log('Reloaded');
        return;
      default:
        throw new Error(`Unknown application action "${action}"`);
    }
  }

  async settle(targetId: string, outcome: 'error' | 'cancelled', _reason: string, em: EntityManager): Promise<void> {
    const row = await em.findOne(Application, { applicationId: targetId });
    if (!row) return;
    // A cancelled run leaves the previous version running: its status says what runs now.
    const status = outcome === 'error' ? 'error' : (await this.#swarm().then(s => s.exists(row.appName)).catch(() => false)) ? 'done' : 'idle';
    await this.#apps.setStatus(targetId, status, em);
  }

  async #deploy(row: ApplicationRow, action: string, run: DeploymentRun, swarm: SwarmOps): Promise<void> {
    const cradle = this.#cradle();
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
        await swarm.ensureImage(dockerImage, registryAuth, run);
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
      ownerLabels: { 'berth.kind': KIND, 'berth.id': row.applicationId, 'berth.deployment': deployment.deploymentId },
    };
    run.log(`Rolling out ${row.appName} with ${image}`);
    await swarm.deploy(service, run);
    await this.#apps.setStatus(row.applicationId, 'done', run.em);
    run.log(`${row.appName} is running ${image}`);
    cradle.events.emit('appDeploy', {
      applicationId: row.applicationId, organizationId: row.organizationId, appName: row.appName, deploymentId: deployment.deploymentId,
      image, action, at: new Date().toISOString(),
    });
  }

  /** Fetches the source into a per-deployment work dir and builds it; answers the image tag. */
  async #build(row: ApplicationRow, settings: Record<string, unknown>, secrets: Record<string, string | null>, buildArgs: Record<string, string>, buildSecrets: Record<string, string>, run: DeploymentRun): Promise<string> {
    const cradle = this.#cradle();
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
        labels: { 'berth.kind': KIND, 'berth.id': row.applicationId, 'berth.deployment': run.deployment.deploymentId },
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
        const keyId = s('customGitSSHKeyId');
        const privateKey = keyId ? await this.#cradle().sshKeys.privateKey(keyId, row.organizationId, run.em) : null;
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

  /** Removes the application's service (absent is fine). */
  async removeService(row: ApplicationRow): Promise<void> {
    await (await this.#swarm()).remove(row.appName);
  }

  async serviceLogs(row: ApplicationRow, input: ReadLogsInput): Promise<string> {
    const text = await (await this.#swarm()).logs(row.appName, { tail: input.tail ?? 100, since: input.since ?? 'all' });
    if (!input.search) return text;
    const needle = input.search.toLowerCase();
    return text.split('\n').filter(l => l.toLowerCase().includes(needle)).join('\n');
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
