// What every workload (application, database, later compose services) asks of Swarm, in
// one shape: the deploy pipelines fill a WorkloadService, core/src/swarm turns it into the
// engine's ServiceSpec and runs it. Field names of the *Swarm objects are the engine's own,
// as the API stores them.
export interface SwarmHealthCheck {
  Test?: string[];
  Interval?: number;
  Timeout?: number;
  StartPeriod?: number;
  Retries?: number;
}
export interface SwarmRestartPolicy {
  Condition?: string;
  Delay?: number;
  MaxAttempts?: number;
  Window?: number;
}
export interface SwarmPlacement {
  Constraints?: string[];
  Preferences?: { Spread: { SpreadDescriptor: string } }[];
  MaxReplicas?: number;
  Platforms?: { Architecture: string; OS: string }[];
}
export interface SwarmUpdateConfig {
  Parallelism: number;
  Delay?: number;
  FailureAction?: string;
  Monitor?: number;
  MaxFailureRatio?: number;
  Order: string;
}
export interface SwarmMode {
  Replicated?: { Replicas?: number };
  Global?: Record<string, never>;
  ReplicatedJob?: { MaxConcurrent?: number; TotalCompletions?: number };
  GlobalJob?: Record<string, never>;
}
export interface SwarmNetwork {
  Target?: string;
  Aliases?: string[];
  DriverOpts?: Record<string, string>;
}

export interface ServiceMount {
  type: 'bind' | 'volume';
  /** Host path (bind) or volume name (volume). */
  source: string;
  /** Path inside the container. */
  target: string;
  readOnly?: boolean;
  /** Written by Berth (a file mount's file under the workload's own directory), not a host path of the user's. */
  managed?: boolean;
}

export interface ServicePort {
  targetPort: number;
  publishedPort: number;
  protocol: 'tcp' | 'udp';
  publishMode: 'ingress' | 'host';
}

export interface WorkloadService {
  /** The Swarm service name (the workload's appName, already checked against the strict pattern). */
  name: string;
  image: string;
  /** Resolved environment, KEY → value. */
  env: Record<string, string>;
  /** Replaces the image's entrypoint when set (the API's `command`). */
  command?: string | null;
  args?: string[] | null;
  mounts: ServiceMount[];
  ports: ServicePort[];
  /** Bytes; null = no limit. */
  memoryLimit?: number | null;
  memoryReservation?: number | null;
  /** NanoCPUs (500000000 = half a core, as the peer stores it and parseCpu answers); null = no limit. */
  cpuLimit?: number | null;
  cpuReservation?: number | null;
  replicas: number;
  healthCheck?: SwarmHealthCheck | null;
  restartPolicy?: SwarmRestartPolicy | null;
  placement?: SwarmPlacement | null;
  updateConfig?: SwarmUpdateConfig | null;
  rollbackConfig?: SwarmUpdateConfig | null;
  mode?: SwarmMode | null;
  labels?: Record<string, string> | null;
  /** Extra networks besides the platform network. */
  networks?: SwarmNetwork[] | null;
  /** Leave the platform network out. */
  detachPlatformNetwork?: boolean;
  /** Nanoseconds a task gets to stop before it is killed (the API's stopGracePeriodSwarm, as the peer stores it). */
  stopGracePeriod?: number | null;
  /** Registry credentials for the image (never logged). */
  registryAuth?: { username: string; password: string; serveraddress: string } | null;
  /** Labels Berth uses to find its own services again (berth.kind, berth.id...). */
  ownerLabels: Record<string, string>;
  /** Update order when no updateConfig is given (start-first otherwise, but with a host-mode port): stop-first for a workload whose data one task at a time may hold. */
  defaultUpdateOrder?: 'start-first' | 'stop-first';
}
