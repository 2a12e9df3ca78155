// Records that hang off a workload and shape its service: mounts (the mounts plugin) and
// published ports (the port plugin). Kinds read them through these directories when they
// deploy and when they answer `one`; the owners of the records check that the workload
// exists through WorkloadRegistry.owner(), and offer them only to the kinds whose
// capabilities say so.
import type { EntityManager } from '@mikro-orm/postgresql';

export interface MountRecord {
  mountId: string;
  type: 'bind' | 'volume' | 'file';
  hostPath: string | null;
  volumeName: string | null;
  /** The mount existed before mount volumes were labelled: its volume, unlabelled, is its own. */
  volumeAdopted: boolean;
  /** For file mounts: the file's path under the workload's files directory. */
  filePath: string | null;
  content: string | null;
  mountPath: string;
  /** The owning workload's kind (its wire name) and id. */
  serviceType: string;
  serviceId: string;
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
  forServices(kind: string, serviceIds: string[], em: EntityManager): Promise<Map<string, MountRecord[]>>;
  /** The mounts as `<kind>.one` answers them: with the peer's `<kind>Id` fields. */
  views(records: MountRecord[]): Record<string, unknown>[];
  /** Deletes the workload's mounts (when the workload is deleted). */
  removeForService(kind: string, serviceId: string, em: EntityManager): Promise<void>;
}

/** Registered as `ports` by the port plugin. */
export interface PortDirectory {
  forApplications(applicationIds: string[], em: EntityManager): Promise<Map<string, PortRecord[]>>;
  removeForApplication(applicationId: string, em: EntityManager): Promise<void>;
}

/** Registered as `backupDirectory` by the backups plugin. */
export interface BackupDirectory {
  /** Deletes the workload's backup records (when the workload is deleted); the files stay in their destinations. */
  removeForWorkload(kind: string, id: string, em: EntityManager): Promise<void>;
  /** The workload's backups as `<kind>.one` lists them (backup.one's fields), oldest first. */
  viewsFor(kind: string, id: string, em: EntityManager): Promise<Record<string, unknown>[]>;
}

declare module '@berth/core' {
  interface Cradle {
    /** From the backups plugin (absent when it is disabled). */
    backupDirectory: BackupDirectory;
    /** From the mounts plugin (absent when it is disabled). */
    mounts: MountDirectory;
    /** From the port plugin (absent when it is disabled). */
    ports: PortDirectory;
  }
}
