// What the deployer asks of the engine, in its own words: the core swarm runner for the
// service, plus getting a docker-source image (pull, or the copy this host already has).
import { SwarmRunner, type ContainerHosts, type DeploymentRun, type WorkloadService } from '@berth/core';
import type Docker from 'dockerode';

export interface SwarmOps {
  exists(name: string): Promise<boolean>;
  deploy(service: WorkloadService, run: DeploymentRun): Promise<void>;
  scale(name: string, replicas: number, run: DeploymentRun): Promise<void>;
  restart(name: string, run: DeploymentRun): Promise<void>;
  remove(name: string): Promise<void>;
  logs(name: string, options: { tail: number; since: string }): Promise<string>;
  ensureImage(image: string, auth: WorkloadService['registryAuth'], run: DeploymentRun): Promise<void>;
}

export function swarmOf(docker: Docker, hosts: ContainerHosts): SwarmOps {
  // Task states are read every 100 ms while a rollout is awaited: 'done' follows 'running' closely.
  const runner = new SwarmRunner(docker, hosts, { pollMs: 100 });
  const wait = (run: DeploymentRun) => ({ signal: run.signal, log: (line: string) => run.log(line) });
  return {
    exists: name => runner.serviceExists(name),
    deploy: async (service, run) => void (await runner.deployService(service, wait(run))),
    scale: async (name, replicas, run) => void (await runner.scaleService(name, replicas, wait(run))),
    restart: async (name, run) => void (await runner.restartService(name, wait(run))),
    remove: async name => void (await runner.removeService(name)),
    logs: (name, options) => runner.serviceLogs(name, options),
    ensureImage: (image, auth, run) => ensureImage(docker, image, auth, run),
  };
}

/**
 * Pulls the image; when the engine cannot pull it (no registry reachable, no credentials)
 * but the host has it, deploys that copy and says so in the log.
 */
async function ensureImage(docker: Docker, image: string, auth: WorkloadService['registryAuth'], run: DeploymentRun): Promise<void> {
  run.log(`Pulling ${image}`);
  try {
    await new Promise<void>((resolve, reject) => {
      docker.pull(image, { ...(auth ? { authconfig: auth } : {}), abortSignal: run.signal }, (err: Error | null, stream?: NodeJS.ReadableStream) => {
        if (err || !stream) return reject(err ?? new Error('no reply from the engine'));
        docker.modem.followProgress(stream, e => (e ? reject(e) : resolve()));
      });
    });
    run.log(`Pulled ${image}`);
    return;
  } catch (e) {
    if (run.signal.aborted) throw e;
    const reason = ((e as { json?: { message?: string } }).json?.message ?? (e as Error).message ?? String(e)).trim();
    const local = await docker.getImage(image).inspect().then(() => true, () => false);
    if (!local) throw new Error(`Could not pull ${image} (${reason}), and this host has no copy of it`);
    run.log(`Could not pull ${image} (${reason}); deploying the copy this host already has`);
  }
}
