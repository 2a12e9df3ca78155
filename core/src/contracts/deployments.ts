// Deployments: one record per run of a workload job (deploy, redeploy, reload, start, stop,
// rebuild...). The deployment plugin owns the records, their logs and the durable queue;
// workload plugins register a Deployer for their target type and enqueue work through the
// `deployments` service. Nothing here knows a workload kind.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TSchema } from 'typebox';

/** The response header of a run (deploy, start, stop, reload, rebuild...): the id of the deployment it queued. Its body is the peer's answer. */
export const DEPLOYMENT_ID_HEADER = 'x-berth-deployment-id';

/** Berth's state of a deployment: queued (waiting its turn) → running → done | error | cancelled. */
export type DeploymentState = 'queued' | 'running' | 'done' | 'error' | 'cancelled';
export const deploymentStates: DeploymentState[] = ['queued', 'running', 'done', 'error', 'cancelled'];

/** The peer's status of a deployment (its enum has no queued and no cancelled): what the wire's `status` answers. */
export type DeploymentStatus = 'running' | 'done' | 'error';
export const deploymentStatuses: DeploymentStatus[] = ['running', 'done', 'error'];
/** The text a cancelled deployment answers as its errorMessage (its wire status is error). */
export const CANCELLED_MESSAGE = 'Deployment cancelled';

/** The wire status of each state: queued and running answer running, cancelled answers error. */
export const WIRE_STATUS: Readonly<Record<DeploymentState, DeploymentStatus>> = { queued: 'running', running: 'running', done: 'done', error: 'error', cancelled: 'error' };

/** What a deployment belongs to: a workload kind's wire name, or another target a plugin registers (each with its own id field on the wire). */
export type DeploymentTargetType = string;

/** A deployment as the API answers it. */
export interface DeploymentRecord {
  deploymentId: string;
  title: string;
  description: string | null;
  /** A tag the source checks out instead of the workload's branch (a tag push deploys its tag); not answered by the API. */
  checkout?: string;
  /** A rollback deployment's release (the rollback entry it rolls out, rollback.rollback); not answered by the API. */
  rollsBack?: string;
  /** Berth's state (the API answers it as `state`, and the peer's `status` derived from it). */
  state: DeploymentState;
  /** The job kind the deployer runs: deploy, redeploy, reload, start, stop... */
  action: string;
  targetType: DeploymentTargetType;
  targetId: string;
  organizationId: string;
  /** The host that runs it (null = the local engine); concurrency is counted per host. */
  serverId: string | null;
  /** The build server it built on, when it built elsewhere than where it runs (DeploymentRun.buildsOn); else null. */
  buildServerId: string | null;
  /** Where the log is written on disk. */
  logPath: string;
  errorMessage: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

/** What a deployer's job sees while it runs. */
export interface DeploymentRun {
  readonly deployment: DeploymentRecord;
  /** Aborted by cancelDeployment / killBuild / killProcess and by the hard timeout; pass it to every program and engine call. */
  readonly signal: AbortSignal;
  /** Appends a line to the deployment's log (secrets registered with redact() are masked). */
  log(line: string): void;
  /** Masks this value wherever it would appear in the log from now on. */
  redact(secret: string | null | undefined): void;
  /** A unit of work of its own (jobs run outside requests). */
  readonly em: EntityManager;
  /** Records that it builds on this build server (the deployment's buildServerId, answered from now on). */
  buildsOn(serverId: string): Promise<void>;
}

/** Runs the jobs of one target type; registered by the plugin that owns the workload. */
export interface Deployer {
  readonly targetType: DeploymentTargetType;
  /** Does the work; resolves = done, throws = error (the message is the record's errorMessage and ends the log). */
  run(action: string, run: DeploymentRun): Promise<void>;
  /**
   * Called when a deployment of this target ends without the deployer's own bookkeeping:
   * failed, timed out, cancelled, or found `running` at boot after the process died.
   * The deployer sets its workload's status (e.g. applicationStatus = error).
   */
  settle(targetId: string, outcome: 'error' | 'cancelled', reason: string, em: EntityManager): Promise<void>;
}

export interface EnqueueRequest {
  targetType: DeploymentTargetType;
  targetId: string;
  organizationId: string;
  serverId: string | null;
  action: string;
  title: string;
  description?: string | null;
  /** See DeploymentRecord.checkout. */
  checkout?: string | null;
  /** See DeploymentRecord.rollsBack. */
  rollsBack?: string | null;
}

/** Registered as `deployments` by the deployment plugin. */
/** Something that is not a workload but has deployments of its own (a server's setup, a backup's runs...). */
export interface DeploymentTarget {
  /** The targetType of its deployments. */
  type: DeploymentTargetType;
  /** The id field the API shows it under on a deployment (serverId, backupId...). */
  idField: string;
}

export interface DeploymentService {
  register(deployer: Deployer): void;
  /** Adds a non-workload target type (the workload kinds come from the workload registry). */
  registerTarget(target: DeploymentTarget): void;
  /** A plugin's check run before every enqueue: it refuses a request by throwing (the server plugin refuses an inactive server). */
  checkBeforeEnqueue(check: (request: EnqueueRequest, em: EntityManager) => Promise<void>): void;
  /** Where each server's own limit of deployments at once comes from (the server plugin: its buildsConcurrency); a server it does not name, and this host, keep deployConcurrency. */
  limitPerServer(limits: (em: EntityManager) => Promise<Record<string, number>>): void;
  /** Ends the running deployments on a server as error with the reason (its host went away); answers how many. */
  failRunningOn(serverId: string, reason: string, em: EntityManager): Promise<number>;
  /** Stores a queued deployment and puts its job on the durable queue; answers the record. */
  enqueue(request: EnqueueRequest, em: EntityManager): Promise<DeploymentRecord>;
  /** The deployments as the API answers them: each record with the peer's id fields (applicationId, composeId, ...). */
  views(records: DeploymentRecord[]): Record<string, unknown>[];
  /** The schema of one of those views (made once every plugin is set up). */
  viewSchema(): TSchema;
  /** The target's deployments, newest first. */
  listFor(targetType: DeploymentTargetType, targetIds: string[], em: EntityManager): Promise<Map<string, DeploymentRecord[]>>;
  /** Stops the target's running deployment (its signal aborts) and cancels its queued ones; answers how many were stopped. */
  cancelFor(targetType: DeploymentTargetType, targetId: string, em: EntityManager): Promise<number>;
  /** Drops the target's queued (not running) deployments: marks them cancelled. */
  clearQueueFor(targetType: DeploymentTargetType, targetId: string, em: EntityManager): Promise<number>;
  /** Removes the target's finished deployments and their logs (all of them when the target is deleted). */
  removeFor(targetType: DeploymentTargetType, targetId: string, em: EntityManager, options?: { includeActive?: boolean }): Promise<void>;
}

declare module '../container.ts' {
  interface Cradle {
    /** From the deployment plugin. */
    deployments: DeploymentService;
  }
}

declare module '../events.ts' {
  interface BerthEvents {
    /** A deployment reached done, error or cancelled (also when found running at boot). */
    deploymentFinished: { deployment: DeploymentRecord };
  }
}
