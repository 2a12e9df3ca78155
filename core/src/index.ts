// @berth/core: what plugins, providers and operators may use.
export { createKernel, type Kernel, type KernelOptions } from './kernel.ts';
export { loadConfig, KernelConfig, ConfigError, envTable, type BerthConfig } from './config.ts';
export type { ConfigSection } from './config-sections.ts';
export { definePlugin, type BerthHost, type PluginDefinition, type BerthPlugin, type PluginInfo, type PluginCommand, type CommandContext } from './plugin.ts';
export { runPluginCommand } from './commands.ts';
export {
  router,
  actsOnInstance,
  isScope,
  ProcedureRegistry,
  type Procedure,
  type ProcedureFactory,
  type ProcedureContext,
  type Principal,
  type Access,
  type Role,
  type Scope,
  type HostScope,
  type MultipartSpec,
  type UploadedFile,
} from './procedure.ts';
export { BerthError, badRequest, invalidField, parseField, unauthorized, forbidden, notFound, conflict, unavailable, type ErrorCode, type Issue } from './errors.ts';
export { optionalService, type Cradle, type BerthContainer, type Logger } from './container.ts';
export { RequestScope, findOwned } from './request-scope.ts';
export { ownerColumn, type RecordOwner, type RecordRef, type OwnerLookup } from './record-owners.ts';
export { AuditCapture, auditInput, actorOf, type AuditContext, type AuditOutcome, type AuditSink } from './audit/capture.ts';
export { EventBus, type BerthEvents } from './events.ts';
export { systemClock, type Clock } from './clock.ts';
export { inPool } from './pool.ts';
export { JobScheduler } from './jobs.ts';
export { newId, newToken, hashToken, hashPassword, verifyPassword, SecretBox } from './crypto.ts';
export { isLocalCaller, type RequestOrigin } from './procedure.ts';
export { OutboundGuard, addressKind, ownAddresses, vendorMessage, type AddressKind, type CheckedAddress, type OutboundRequest, type Resolver } from './outbound.ts';
export { iso, AuthUserView, ApiKeyView } from './identity/views.ts';
// The identity tables and the ground of the auth, user and organization plugins' services.
export { User, Organization, Member, CustomRole, Session, ApiKey, Invitation } from './identity/entities.ts';
export { roleGrants, builtInRole } from './identity/grants.ts';
export {
  statements,
  builtInRoles,
  memberSwitches,
  MEMBER_SWITCHES,
  allows,
  reaches,
  isPrivileged,
  resolvePermissions,
  statementIssue,
  narrowEnvironment,
  SERVICE_ID_FIELDS,
  type Resource,
  type Permission,
  type Need,
  type Statement,
  type Grants,
  type RecordAccess,
  type RecordKind,
  type MemberSwitch,
} from './permissions.ts';
export { IdentityStore, authUserView } from './identity/shared.ts';
export { totpStep } from './identity/two-factor.ts';
export { isSetupToken, removeSetupToken, setupTokenFile } from './identity/setup-token.ts';
export {
  EnvironmentFields,
  EnvironmentView,
  Placement,
  ProjectFields,
  ProjectTag,
  TagFields,
  type ProjectDirectory,
  type ProjectTagDirectory,
  type EnvironmentDirectory,
  type EnvironmentRef,
} from './contracts/projects.ts';
export { environmentView } from './environment-view.ts';
export { PreviewDeploymentFields } from './contracts/previews.ts';
export * as schema from './schema.ts';
export * as columns from './columns.ts';
export { parseInput, isStorable, storable } from './validation.ts';
export { emptyStringFields, setOrNull, type FieldPath } from './empty-strings.ts';
export { textSearchClauses, searchPage, containing, type TextSearch } from './search.ts';
export { OutputFilter, redactOutput, redactInput, isSecretField, secretFieldValues, SECRET_MASK, JOIN_TOKEN_MASK, MIN_SECRET_FIELD_LENGTH, MIN_REGISTERED_SECRET_LENGTH } from './redact.ts';
// One pinned ORM for every plugin.
export { defineEntity, p } from '@mikro-orm/core';
export type { MigrationObject } from '@mikro-orm/core';
export { Migration } from '@mikro-orm/migrations';
export type { EntityManager } from '@mikro-orm/postgresql';
export { asValue, asClass, asFunction } from 'awilix';
export { default as Type, type Static, type TSchema } from 'typebox';
export {
  DEPLOYMENT_ID_HEADER,
  CANCELLED_MESSAGE,
  deploymentStates,
  deploymentStatuses,
  WIRE_STATUS,
  type DeploymentTarget,
  type DeploymentState,
  type DeploymentStatus,
  type DeploymentTargetType,
  type DeploymentRecord,
  type DeploymentRun,
  type Deployer,
  type EnqueueRequest,
  type DeploymentService,
} from './contracts/deployments.ts';
export type { BuildIo, BuildRequest, Builder } from './contracts/builders.ts';
export type { SourceProvider, SourceRequest, SourceResult, SourceOwner, SourceUpload, ImageSource, CheckoutSource, RegistryAuth, GitCloneRequest } from './contracts/sources.ts';
export { defineProvider, isProviderDescriptor, providerName, ProviderRegistry, type ProviderDescriptor, type ProviderContracts, type ProviderContext, type ContractName } from './provider.ts';
export { SshKeySummary, type SshKeyVault } from './contracts/ssh-keys.ts';
export type { DatabaseDriver, DatabaseCredentials, ContainerCommand, PasswordAccount, OptionalDatabaseProcedure } from './contracts/database-driver.ts';
export type {
  GitProvider,
  GitAccount,
  GitAccountUpdate,
  GitRepository,
  GitRepositoryRef,
  GitBranch,
  GitWebhook,
  GitPullRequest,
  GitFailure,
  GitSourceFields,
  GitConnectionForm,
  GitConnectionView,
  GitConnectionWire,
  GitWireOperation,
  GitOAuthFlow,
  GitAppSetup,
  CloneCredential,
} from './contracts/git-provider.ts';
export type { AppDeliveryReader, GitDelivery, GitDeliveryReader, PullRequestEvent, SignatureCheck, DeliveryHeaders } from './contracts/git-delivery.ts';
export { cloneCredentialEnv, cloneCredentialSecrets } from './clone-credentials.ts';
export { AiProviderError, ChannelError, GitProviderError, StorageError } from './provider-errors.ts';
export { aiCall, aiErrorOf } from './ai-call.ts';
export type { BackupStorage, BackupStore, StorageLocation, StoredObject, StorageFailure } from './contracts/backup-storage.ts';
export { type PersistenceServer, type PersistenceServerOptions, type PersistenceServerProvider } from './contracts/persistence-server.ts';
export type { HostProvider, HostConnection, HostServer, RunOptions, RunResult } from './contracts/host-provider.ts';
export type { NotificationChannel, NotificationMessage, ChannelAnswer, SendContext } from './contracts/notification-channel.ts';
export type { AiProvider, AiConnection, AiModel, AiRequest } from './contracts/ai-provider.ts';
export type {
  ProxyProvider,
  ProxyRoute,
  ProxyForwardAuth,
  ProxyRedirect,
  ProxyBasicAuthUser,
  ProxyWorkloadConfig,
  ProxyCertificate,
  ProxyEngine,
  ProxyServerHost,
  ProxyCertificateState,
  ProxyFileRole,
  ProxyServiceSettings,
  CertificateType,
} from './contracts/proxy.ts';
