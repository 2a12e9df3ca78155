// Records that hang off a workload and shape its service: mounts (the mounts plugin) and
// published ports (the port plugin). Workload plugins read them through these directories
// when they deploy and when they answer `one`; the owners of the records check that the
// workload exists through WorkloadRegistry.owner().
import type { EntityManager } from '@mikro-orm/postgresql';

export const mountServiceTypes = ['application', 'postgres', 'mysql', 'mariadb', 'mongo', 'redis', 'compose'] as const;
export type MountServiceType = (typeof mountServiceTypes)[number];

export interface MountRecord {
  mountId: string;
  type: 'bind' | 'volume' | 'file';
  hostPath: string | null;
  volumeName: string | null;
  /** For file mounts: the file's path under the workload's files directory. */
  filePath: string | null;
  content: string | null;
  mountPath: string;
  serviceType: MountServiceType;
  applicationId: string | null;
  postgresId: string | null;
  mariadbId: string | null;
  mongoId: string | null;
  mysqlId: string | null;
  redisId: string | null;
  composeId: string | null;
}

export interface PortRecord {
  portId: string;
  publishedPort: number;
  publishMode: 'ingress' | 'host';
  targetPort: number;
  protocol: 'tcp' | 'udp';
  applicationId: string;
}

/** Registered as `mounts` by the mounts plugin. */
export interface MountDirectory {
  /** The workloads' mounts, grouped by workload id. */
  forServices(serviceType: MountServiceType, serviceIds: string[], em: EntityManager): Promise<Map<string, MountRecord[]>>;
  /** Deletes the workload's mounts (when the workload is deleted). */
  removeForService(serviceType: MountServiceType, serviceId: string, em: EntityManager): Promise<void>;
}

/** Registered as `ports` by the port plugin. */
export interface PortDirectory {
  forApplications(applicationIds: string[], em: EntityManager): Promise<Map<string, PortRecord[]>>;
  removeForApplication(applicationId: string, em: EntityManager): Promise<void>;
}

declare module '@berth/core' {
  interface Cradle {
    /** From the mounts plugin (absent when it is disabled). */
    mounts: MountDirectory;
    /** From the port plugin (absent when it is disabled). */
    ports: PortDirectory;
  }
}
