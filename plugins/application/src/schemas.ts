// application.* inputs and replies. Both API variants at once: create takes environmentId
// (current) or projectId (older); fields the peer's current document requires but the older
// variant leaves out are optional, so clients of either variant are served.
import { PreviewDeploymentFields, Type, schema, type GitSourceFields, type Static, type TSchema } from '@berth/core';
import { BranchName, forgeFieldTable, logQuery, NotServedList, NotServedOne, schemasOf, unknownForgeFields, type ForgeSource, type relationSchemas } from '@berth/plugin-workloads';
import { columnFields, sealedSchemas, settingAnswerSchemas, settingFields, settingSchemas } from './fields.ts';

const { Nullable, NonEmpty, AppName, Paging, Timestamp } = schema;
const Opt = <T extends TSchema>(t: T) => Type.Optional(t);
const Str = () => Nullable(Type.String());
const partial = <T extends Record<string, TSchema>>(o: T) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Type.Optional(v)])) as { [K in keyof T]: ReturnType<typeof Type.Optional<T[K]>> };
const ApplicationId = { applicationId: NonEmpty() };

/** An application as stored: every API field. */
export const ApplicationFields = Type.Object({
  applicationId: Type.String(),
  ...columnFields,
  ...sealedSchemas,
  ...settingAnswerSchemas,
  hasWebhookSecret: Type.Boolean(),
  organizationId: Type.String(),
  createdAt: Timestamp(),
});
export type ApplicationFields = Static<typeof ApplicationFields>;

/**
 * The record with where it lives and what hangs off it, as the peer answers application.one,
 * start, stop and delete. Relations of a disabled plugin (git providers, registries, previews)
 * are null or empty.
 */
export const applicationFound = (relations: ReturnType<typeof relationSchemas>) =>
  Type.Object({
    ...ApplicationFields.properties,
    environment: relations.environment,
    deployments: relations.deployments,
    mounts: relations.mounts,
    ports: relations.ports,
    domains: relations.domains,
    redirects: relations.redirects,
    security: relations.security,
    previewDeployments: Type.Array(PreviewDeploymentFields, { description: 'its live previews, newest first (empty without the preview plugin)' }),
    ...relations.git,
    server: relations.server,
    webhookRegistration: relations.webhookRegistration,
    registry: relations.registry,
    buildRegistry: relations.registry,
    rollbackRegistry: relations.registry,
  });
/** The source fields of the enabled forges the peer's table does not know (one written out of tree): application.one answers them, null when unset. */
export const forgeOwnFields = (forges: readonly ForgeSource[]) => unknownForgeFields(settingFields, forges);

/** application.one: the record with its relations (and the enabled forges' own source fields), and whether the caller may use its git provider. */
export const applicationView = (relations: ReturnType<typeof relationSchemas>, forges: readonly ForgeSource[]) =>
  Type.Object({
    ...applicationFound(relations).properties,
    ...schemasOf(forgeOwnFields(forges)),
    hasGitProviderAccess: Type.Boolean({ description: "whether the caller may use the application's git provider (no provider: true)" }),
    unauthorizedProvider: Nullable(Type.String({ description: 'the source type whose provider the caller may not use, or null' })),
  });
export type ApplicationFound = Static<ReturnType<typeof applicationFound>>;
export type ApplicationView = Static<ReturnType<typeof applicationView>>;

export const CreateInput = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  appName: Opt(AppName()),
  description: Opt(Str()),
  environmentId: Opt(NonEmpty({ description: 'current variant: the environment that holds the application' })),
  projectId: Opt(NonEmpty({ description: 'older variant: the project, whose default environment holds the application' })),
  serverId: Opt(Str()),
});
export type CreateInput = Static<typeof CreateInput>;

export const IdInput = Type.Object(ApplicationId);
export const ReloadInput = Type.Object({ appName: AppName(), ...ApplicationId });
export const DeployInput = Type.Object({ ...ApplicationId, title: Opt(Type.String({ maxLength: 255 })), description: Opt(Type.String({ maxLength: 2000 })) });
export type DeployInput = Static<typeof DeployInput>;
/** application.dropDeployment's text fields (its archive comes in the form's `zip` file). */
export const DropInput = Type.Object({
  ...ApplicationId,
  dropBuildPath: Opt(Type.String({ maxLength: 1000, description: 'the directory of the archive that is the application (default: its root)' })),
});

export const SaveEnvironmentInput = Type.Object({ ...ApplicationId, env: Opt(Str()), buildArgs: Opt(Str()), buildSecrets: Opt(Str()), createEnvFile: Opt(Type.Boolean()) });
/** The values the API accepts for the fields that name a provider: the enabled ones' ids. */
export interface AllowedValues {
  buildTypes: string[];
  sourceTypes: string[];
  /** The enabled forges that are sources, with the workload fields that name what to clone (their save<Forge>Provider's input). */
  forges: ForgeSource[];
}
const OneOf = (values: string[]) => Type.Enum(values.length ? values : ['']);

export const saveBuildTypeInput = (allowed: AllowedValues) =>
  Type.Object({
    ...ApplicationId,
    buildType: OneOf(allowed.buildTypes),
    dockerfile: Opt(Str()),
    dockerContextPath: Opt(Str()),
    dockerBuildStage: Opt(Str()),
    herokuVersion: Opt(Str()),
    railpackVersion: Opt(Str()),
    publishDirectory: Opt(Str()),
    isStaticSpa: Opt(Nullable(Type.Boolean())),
  });
const GitCommon = { enableSubmodules: Opt(Type.Boolean()), watchPaths: Opt(Nullable(Type.Array(Type.String()))) };
/** save<Forge>Provider of an enabled forge: its source fields as its provider declares them (`sourceFields.save`, the peer's for the four built-in forges), else each as text. */
export const saveForgeInput = (f: GitSourceFields) => Type.Object({ ...ApplicationId, ...(f.save ?? partial(schemasOf(forgeFieldTable(f)))), ...GitCommon });
export const SaveDockerInput = Type.Object({ ...ApplicationId, dockerImage: Opt(Str()), username: Opt(Str()), password: Opt(Str()), registryUrl: Opt(Str()) });
export const SaveGitInput = Type.Object({
  ...ApplicationId,
  customGitUrl: Opt(Str()),
  customGitBranch: Opt(BranchName()),
  customGitBuildPath: Opt(Str()),
  customGitSSHKeyId: Opt(Str()),
  ...GitCommon,
});

const updateFields = { ...ApplicationId, ...partial({ ...columnFields, ...sealedSchemas, ...settingSchemas }), createdAt: Opt(Type.String()) };
export const updateInput = (allowed: AllowedValues) => Type.Object({ ...updateFields, sourceType: Opt(OneOf(allowed.sourceTypes)), buildType: Opt(OneOf(allowed.buildTypes)) });
export type UpdateInput = Static<ReturnType<typeof Type.Object<typeof updateFields>>>;

export const MoveInput = Type.Object({ ...ApplicationId, targetEnvironmentId: NonEmpty() });

export const SearchInput = Type.Object({
  q: Opt(Type.String({ description: 'matches name, appName or description (case-insensitive)' })),
  name: Opt(Type.String()),
  appName: Opt(Type.String()),
  description: Opt(Type.String()),
  repository: Opt(Type.String()),
  owner: Opt(Type.String()),
  dockerImage: Opt(Type.String()),
  projectId: Opt(Type.String()),
  environmentId: Opt(Type.String()),
  ...Paging,
});
export type SearchInput = Static<typeof SearchInput>;
export const SearchResult = Type.Object({ items: Type.Array(ApplicationFields), total: Type.Integer({ minimum: 0 }) });

export const ReadLogsInput = Type.Object({ ...ApplicationId, ...logQuery() });
export type ReadLogsInput = Static<typeof ReadLogsInput>;
