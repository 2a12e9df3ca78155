// @berth/core: what plugins, providers and operators may use.
export { createKernel, type Kernel, type KernelOptions } from './kernel.ts';
export { loadConfig, ConfigSchema, ConfigError, type BerthConfig } from './config.ts';
export { definePlugin, type BerthHost, type PluginDefinition, type BerthPlugin, type PluginInfo } from './plugin.ts';
export { router, ProcedureRegistry, type Procedure, type ProcedureFactory, type ProcedureContext, type Principal, type Access, type Role } from './procedure.ts';
export { BerthError, badRequest, invalidField, unauthorized, forbidden, notFound, conflict, type ErrorCode, type Issue } from './errors.ts';
export { optionalService, type Cradle, type BerthContainer, type Logger } from './container.ts';
export { EventBus, type BerthEvents } from './events.ts';
export { JobScheduler } from './jobs.ts';
export { newId, SecretBox } from './crypto.ts';
export { iso, UserView, MemberView, AuthUserView, OrganizationView, ApiKeyView, InvitationView } from './identity/views.ts';
export { EnvironmentFields, EnvironmentView, environmentView, type ProjectDirectory, type EnvironmentDirectory, type EnvironmentRef } from './contracts/projects.ts';
export * as schema from './schema.ts';
export { parseInput } from './validation.ts';
export { textSearchClauses, containing, type TextSearch } from './search.ts';
// One pinned ORM for every plugin.
export { defineEntity, p } from '@mikro-orm/core';
export type { MigrationObject } from '@mikro-orm/core';
export { Migration } from '@mikro-orm/migrations';
export type { EntityManager } from '@mikro-orm/postgresql';
export { asValue, asClass, asFunction } from 'awilix';
export { default as Type, type Static, type TSchema } from 'typebox';
export { deploymentStatuses, type DeploymentTarget, type DeploymentStatus, type DeploymentTargetType, type DeploymentRecord, type DeploymentRun, type Deployer, type EnqueueRequest, type DeploymentService } from './contracts/deployments.ts';
export type { BuildIo, BuildRequest, Builder } from './contracts/builders.ts';
export { isImageSource, type SourceProvider, type SourceRequest, type SourceResult, type ImageSource, type CheckoutSource, type RegistryAuth } from './contracts/sources.ts';
export { defineProvider, isProviderDescriptor, providerName, ProviderRegistry, type ProviderDescriptor, type ProviderContracts, type ProviderContext, type ContractName } from './provider.ts';
export type { SshKeyVault } from './contracts/ssh-keys.ts';
export type { DatabaseDriver, DatabaseCredentials, ContainerCommand, PasswordAccount } from './contracts/database-driver.ts';
export { EMBEDDED_PERSISTENCE, type PersistenceServer, type PersistenceServerOptions, type PersistenceServerProvider } from './contracts/persistence-server.ts';
