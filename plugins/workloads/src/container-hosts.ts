// Where workloads run: a Docker engine in swarm mode, on this machine or (later) a remote
// server reached over SSH. Plugins get engines from here, never build their own clients.
import type Docker from 'dockerode';

export interface ContainerHosts {
  /** The overlay network every workload and the proxy join (attachable, so plain containers can too): the config key platformNetwork. */
  readonly platformNetwork: string;
  /** The local engine, in swarm mode with the platform network, ready for services. */
  local(): Promise<Docker>;
  /** Runs an engine call and turns engine failures into domain errors (404 → NOT_FOUND, 409 → CONFLICT, else a logged 500). */
  call<T>(what: string, fn: () => Promise<T>): Promise<T>;
}

declare module '@berth/core' {
  interface Cradle {
    /** Docker engines that run workloads (connected on first use); from the workloads plugin. */
    hosts: ContainerHosts;
  }
}
