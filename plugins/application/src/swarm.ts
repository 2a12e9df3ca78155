// What the deployer asks of the engine, in its own words: the core swarm runner for the
// service, plus getting a docker-source image (pull, or the copy this host already has).
import { type DeploymentRun } from '@berth/core';
import type Docker from 'dockerode';
import { SwarmRunner, ensureImage, type ContainerHosts, type WorkloadService } from '@berth/plugin-workloads';

export interface SwarmOps {
  exists(name: string): Promise<boolean>;
  deploy(service: WorkloadService, run: DeploymentRun): Promise<void>;
  scale(name: string, replicas: number, run: DeploymentRun): Promise<void>;
  restart(name: string, run: DeploymentRun): Promise<void>;
  remove(name: string): Promise<void>;
  logs(name: string, options: { tail: number; since: string }): Promise<string>;
  ensureImage(image: string, auth: WorkloadService['registryAuth'], run: DeploymentRun): Promise<void>;
}

export function swarmOf(docker: Docker, hosts: ContainerHosts, settleSeconds: number): SwarmOps {
  // Task states are read every 100 ms while a rollout is awaited: 'done' follows 'running' closely.
  const runner = new SwarmRunner(docker, hosts, { pollMs: 100 });
  const wait = (run: DeploymentRun) => ({ signal: run.signal, log: (line: string) => run.log(line), settleMs: settleSeconds * 1000 });
  return {
    exists: name => runner.serviceExists(name),
    deploy: async (service, run) => void (await runner.deployService(service, wait(run))),
    scale: async (name, replicas, run) => void (await runner.scaleService(name, replicas, wait(run))),
    restart: async (name, run) => void (await runner.restartService(name, wait(run))),
    remove: async name => void (await runner.removeService(name)),
    logs: (name, options) => runner.serviceLogs(name, options),
    ensureImage: async (image, auth, run) => void (await ensureImage(docker, image, auth, run)),
  };
}
