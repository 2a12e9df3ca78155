// Every field of an application that the API reads and writes, in one table: its schema
// (current variant's constraints; older-variant numbers accepted where the peer took them)
// and its default. Columns the platform queries or acts on live in the entity; the rest is
// kept in one JSON column, and the sealed ones (env, build args and secrets, the registry
// password) in one encrypted column. Schemas, storage and views are all derived from here.
import { Type, schema, type TSchema } from '@berth/core';
import { defaultsOf, schemasOf, swarmResourceAnswers, swarmSettingFields } from '@berth/plugin-workloads';

const { Nullable } = schema;
const Str = () => Nullable(Type.String());
const Bool = () => Nullable(Type.Boolean());
const Num = () => Nullable(Type.Number());
const Strings = () => Nullable(Type.Array(Type.String()));

/** Sealed at rest, answered in `one` (as the peer does), never logged. */
export const sealedFields = {
  env: [Str(), null],
  buildArgs: [Str(), null],
  buildSecrets: [Str(), null],
  previewEnv: [Str(), null],
  previewBuildArgs: [Str(), null],
  previewBuildSecrets: [Str(), null],
  password: [Str(), null],
} satisfies Record<string, [TSchema, unknown]>;

/** Stored in the settings JSON column. */
export const settingFields = {
  title: [Str(), null],
  subtitle: [Str(), null],
  enabled: [Bool(), null],
  icon: [Nullable(Type.String({ maxLength: 2097152 })), null],
  cleanCache: [Bool(), false],
  createEnvFile: [Type.Boolean(), true],
  // github
  repository: [Str(), null],
  owner: [Str(), null],
  branch: [Str(), null],
  buildPath: [Str(), '/'],
  githubId: [Str(), null],
  triggerType: [Nullable(Type.Enum(['push', 'tag'])), 'push'],
  autoDeploy: [Bool(), true],
  watchPaths: [Strings(), null],
  enableSubmodules: [Type.Boolean(), false],
  // gitlab
  gitlabProjectId: [Num(), null],
  gitlabRepository: [Str(), null],
  gitlabOwner: [Str(), null],
  gitlabBranch: [Str(), null],
  gitlabBuildPath: [Str(), '/'],
  gitlabPathNamespace: [Str(), null],
  gitlabId: [Str(), null],
  // gitea
  giteaRepository: [Str(), null],
  giteaOwner: [Str(), null],
  giteaBranch: [Str(), null],
  giteaBuildPath: [Str(), '/'],
  giteaId: [Str(), null],
  // bitbucket
  bitbucketRepository: [Str(), null],
  bitbucketRepositorySlug: [Str(), null],
  bitbucketOwner: [Str(), null],
  bitbucketBranch: [Str(), null],
  bitbucketBuildPath: [Str(), '/'],
  bitbucketId: [Str(), null],
  // docker image
  username: [Str(), null],
  dockerImage: [Str(), null],
  registryUrl: [Str(), null],
  // custom git
  customGitUrl: [Str(), null],
  customGitBranch: [Str(), null],
  customGitBuildPath: [Str(), '/'],
  customGitSSHKeyId: [Str(), null],
  // drop (upload)
  dropBuildPath: [Str(), null],
  // build
  dockerfile: [Str(), 'Dockerfile'],
  dockerContextPath: [Str(), null],
  dockerBuildStage: [Str(), null],
  herokuVersion: [Str(), '24'],
  railpackVersion: [Str(), null],
  publishDirectory: [Str(), null],
  isStaticSpa: [Bool(), false],
  // swarm (shared with every workload)
  ...swarmSettingFields,
  // registries and build servers (their plugins come later)
  registryId: [Str(), null],
  rollbackRegistryId: [Str(), null],
  buildServerId: [Str(), null],
  buildRegistryId: [Str(), null],
  rollbackActive: [Bool(), false],
  detachDokployNetwork: [Type.Boolean(), false],
  // preview deployments (stored; the preview feature comes later)
  previewLabels: [Strings(), null],
  previewWildcard: [Str(), null],
  // Berth's: the preview's host from ${prNumber}, ${appName} and ${branch}, in place of previewWildcard's label.
  previewDomainTemplate: [
    Nullable(
      Type.String({
        maxLength: 253,
        pattern: '^(?:[a-z0-9-]|\\$\\{(?:prNumber|appName|branch)\\})+(?:\\.(?:[a-z0-9-]|\\$\\{(?:prNumber|appName|branch)\\})+)+$',
        description: 'A host name whose labels may hold ${prNumber}, ${appName} and ${branch} (the head branch as a DNS label), e.g. pr-${prNumber}.${appName}.example.com',
      }),
    ),
    null,
  ],
  previewPort: [Num(), 3000],
  previewHttps: [Type.Boolean(), false],
  previewPath: [Str(), '/'],
  previewCertificateType: [Type.Enum(['letsencrypt', 'none', 'custom']), 'none'],
  previewCustomCertResolver: [Str(), null],
  previewLimit: [Num(), 3],
  isPreviewDeploymentsActive: [Bool(), false],
  previewRequireCollaboratorPermissions: [Bool(), true],
} satisfies Record<string, [TSchema, unknown]>;

export type SealedKey = keyof typeof sealedFields;
export type SettingKey = keyof typeof settingFields;
export const sealedKeys = Object.keys(sealedFields) as SealedKey[];
export const settingKeys = Object.keys(settingFields) as SettingKey[];

/** The columns' fields, with their API schemas. */
export const columnFields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  appName: schema.AppName(),
  description: Str(),
  // What the API accepts comes from the enabled providers (see allowedValues in schemas.ts).
  sourceType: Type.String({ description: 'the id of a provider of contract source (docker, git, ...)' }),
  buildType: Type.String({ description: 'the id of a provider of contract builder (dockerfile, static, nixpacks, ...)' }),
  applicationStatus: schema.Status(),
  environmentId: Type.String({ minLength: 1 }),
  serverId: Str(),
  refreshToken: Str(),
  /** Write-only: deliveries to the refresh-token URL must then be signed with it (answered null; see hasWebhookSecret). */
  webhookSecret: Nullable(Type.String({ minLength: 16, maxLength: 255, description: 'write-only: answered null (hasWebhookSecret says whether one is set); null removes it' })),
};

export const sealedSchemas = schemasOf(sealedFields);
export const settingSchemas = schemasOf(settingFields);
/** The settings' schemas as answers carry them (memory and CPU as text, as the peer stores them). */
export const settingAnswerSchemas = { ...settingSchemas, ...swarmResourceAnswers };
export const settingDefaults = () => defaultsOf(settingFields);
