// What workload plugins (application, the database kinds, compose, a third party's kind) use
// of the kit.
export {
  WorkloadRegistry,
  type WorkloadKind,
  type WorkloadCapabilities,
  type WorkloadRef,
  type RemoveOptions,
  type BackupSource,
  type BackupIo,
  type BackupTarget,
  type ListSource,
  type PushSource,
  type PushTarget,
} from './registry.ts';
export { recordPushSource, type PushRecords } from './push-source.ts';
export type { ContainerHosts, Host } from '@berth/plugin-hosts';
export { organizationConstraint, withOrganizationConstraint } from '@berth/plugin-hosts';
export { ORGANIZATION_NETWORK_PREFIX } from '@berth/plugin-hosts';
export type { WorkloadService, ServiceMount, ServicePort, SwarmHealthCheck, SwarmRestartPolicy, SwarmPlacement, SwarmUpdateConfig, SwarmMode, SwarmNetwork } from './services.ts';
export {
  type MountRecord,
  type PortRecord,
  type MountDirectory,
  type PortDirectory,
  type BackupDirectory,
  type ScheduleDirectory,
  type DomainDirectory,
  type AttachedDomain,
  type WorkloadDeployments,
  type WorkloadHooks,
  type WorkloadPatches,
  type WorkloadRollbacks,
  type Release,
  type RollbackEntry,
  type WorkloadRegistries,
  type WorkloadServers,
} from './attachments.ts';
export { HostPorts, type PortHold, type PortHolder } from './host-ports.ts';
export { parseEnv, resolveEnv, toEnvList, ENV_KEY, type SharedEnv } from './swarm/env.ts';
export { parseMemory, parseCpu } from './swarm/resources.ts';
export { toServiceSpec, checkServiceName, checkImage, SERVICE_NAME, IMAGE_REFERENCE, VOLUME_NAME, type ServiceSpec, type ServiceSpecOptions } from './swarm/service-spec.ts';
export {
  SwarmRunner,
  SwarmTaskError,
  deployService,
  scaleService,
  restartService,
  removeService,
  serviceExists,
  serviceTasks,
  serviceLogs,
  type SwarmRunnerOptions,
  type Owned,
  type RegistryAuth,
  type WaitOptions,
  type DeployOptions,
  type DeployResult,
  type TaskSummary,
  type LogOptions,
} from './swarm/runner.ts';
export { swarmSettingFields, swarmSettingsToService, swarmResourceAnswers, answerSwarmSettings, type SwarmSettingKey } from './swarm/settings.ts';
export { ensureImage, type ImageIo } from './swarm/images.ts';
export { execIn, execStream, type ExecResult, type StreamIo } from './swarm/exec.ts';
export { bindDatabaseKind } from './databases/plugin.ts';
export { dumpIn, restoreIn, verifyCopy, type DatabaseInContainer, type ContainerBackupIo } from './databases/container-backup.ts';
export { dataVolumeOf } from './databases/volumes.ts';
export { deploySecrets } from './databases/deployer.ts';
export { WorkloadLifecycle, RecordLifecycle, linesContaining, type LifecycleRecords, type LifecycleRecord, type Engine, type CheckoutIo } from './lifecycle.ts';
export { RecordKind, type KindRecords } from './kind-base.ts';
export { ownerLabels, ownedBy, assertOwned, notOurs, KIND_LABEL, ID_LABEL, ORGANIZATION_LABEL, type Owner } from './owners.ts';
export { ensureVolume, removeVolume, ensureMountVolume, assertMountable, volumeLabels, MOUNT_VOLUME_LABEL, type VolumeOptions } from './swarm/volumes.ts';
export { toServiceMounts, serverFilesDir } from './swarm/mounts.ts';
export { generateAppName } from './naming.ts';
export { placementOf, type Placement } from './views.ts';
export { relationSchemas, serverRelation, registryRelation, gitRelations, webhookRegistration, NotServedList, NotServedOne, workloadSummary, summaryOf } from './relations.ts';
export { runProcedure, enqueueRun, type RunSpec } from './runs.ts';
export { logQuery } from './inputs.ts';
export { schemasOf, defaultsOf, type FieldTable } from './field-table.ts';
export { placementFor, searchFilters, recordLookups, newRecordColumns, newRefreshToken, type SearchFields, type WorkloadRecord } from './records.ts';
export { workloadColumns, pushColumns, workloadTableSql } from './columns.ts';
export { SourceRecords, type SourceKindTable } from './source-records.ts';
export { HostAccess, hostAccessRefused, isLocalGitUrl, type NetworkFacts } from './host-access-policy.ts';
export { joinableNetworks, networkIdsOf } from './user-networks.ts';
export { HostAccessSchema, type HostAccessPolicy } from './config.ts';
export { GitSourceChange, GIT_SOURCE_CLEARED, type GitSourceRules } from './git-source.ts';
export { BranchName, forgeSources, forgeFieldTable, unknownForgeFields, gitSourceCleared, type ForgeSource } from './forge-fields.ts';
export { WorkloadChanges, type AssertAppNameFree, type ChangeableWorkload, type ChangeContext, type OwnKey } from './changes.ts';
