// Every field of a compose stack that the API reads and writes, in one table: its schema and its
// default. Columns the platform queries or acts on live in the entity; the rest is kept in one
// JSON column and the env in one sealed column. Schemas, storage and views are derived from here,
// with the enabled forges' (stackFields, once the providers are known).
import { Type, schema, type TSchema } from '@berth/core';
import { BranchName, defaultsOf, schemasOf, unknownForgeFields, type ForgeSource } from '@berth/plugin-workloads';

const { Nullable } = schema;
const Str = (opts: object = {}) => Nullable(Type.String({ maxLength: 4096, ...opts }));
const Bool = () => Nullable(Type.Boolean());
const Num = () => Nullable(Type.Number());
const Strings = () => Nullable(Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 100 }));

export const COMPOSE_TYPES = ['docker-compose', 'stack'] as const;

/** The service networks the peer keeps per compose service. */
const ServiceNetworks = Nullable(
  Type.Array(Type.Object({ serviceName: Type.String({ maxLength: 255 }), networkIds: Type.Array(Type.String({ maxLength: 255 }), { maxItems: 50 }), detachDokployNetwork: Type.Boolean() }), {
    maxItems: 200,
  }),
);

/** Stored in the settings JSON column: the peer's fields (a forge it does not know adds its own, see stackFields). */
const settingFields = {
  // github
  repository: [Str(), null],
  owner: [Str(), null],
  branch: [BranchName(), null],
  autoDeploy: [Bool(), true],
  githubId: [Str(), null],
  // gitlab
  gitlabProjectId: [Num(), null],
  gitlabRepository: [Str(), null],
  gitlabOwner: [Str(), null],
  gitlabBranch: [BranchName(), null],
  gitlabPathNamespace: [Str(), null],
  gitlabId: [Str(), null],
  // bitbucket
  bitbucketRepository: [Str(), null],
  bitbucketRepositorySlug: [Str(), null],
  bitbucketOwner: [Str(), null],
  bitbucketBranch: [BranchName(), null],
  bitbucketId: [Str(), null],
  // gitea
  giteaRepository: [Str(), null],
  giteaOwner: [Str(), null],
  giteaBranch: [BranchName(), null],
  giteaId: [Str(), null],
  // custom git
  customGitUrl: [Str(), null],
  customGitBranch: [BranchName(), null],
  customGitSSHKeyId: [Str(), null],
  // how it runs
  command: [Type.String({ maxLength: 4096 }), ''],
  createEnvFile: [Type.Boolean(), true],
  enableSubmodules: [Type.Boolean(), false],
  composePath: [Type.String({ minLength: 1, maxLength: 1024, pattern: '^[A-Za-z0-9._/-]+$' }), './docker-compose.yml'],
  suffix: [Type.String({ maxLength: 64, pattern: '^[a-zA-Z0-9_-]*$' }), ''],
  randomize: [Type.Boolean(), false],
  isolatedDeployment: [Type.Boolean(), false],
  isolatedDeploymentsVolume: [Type.Boolean(), false],
  triggerType: [Nullable(Type.Enum(['push', 'tag'])), 'push'],
  icon: [Nullable(Type.String({ maxLength: 2097152 })), null],
  watchPaths: [Strings(), null],
  serviceNetworks: [ServiceNetworks, []],
} satisfies Record<string, [TSchema, unknown]>;

export type SettingKey = keyof typeof settingFields;

/** The columns' fields, with their API schemas; `sourceTypes`: what sourceType takes. */
const columnFields = (sourceTypes: string[]) => ({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  appName: schema.AppName(),
  description: Str(),
  /** Sealed at rest, answered by `one` (as the peer does), never logged. */
  env: Nullable(Type.String({ maxLength: 1048576 })),
  composeFile: Type.String({ maxLength: 1048576 }),
  refreshToken: Str(),
  /** Write-only: deliveries to the refresh-token URL must then be signed with it (answered null; see hasWebhookSecret). */
  webhookSecret: Nullable(Type.String({ minLength: 16, maxLength: 255, description: 'write-only: answered null (hasWebhookSecret says whether one is set); null removes it' })),
  sourceType: Type.Enum(sourceTypes),
  composeType: Type.Enum([...COMPOSE_TYPES]),
  composeStatus: schema.Status(),
  environmentId: Type.String({ minLength: 1, maxLength: 255 }),
  serverId: Str(),
});

/**
 * The stack's fields with the enabled forges (known at setup): its source types are a git URL,
 * each forge's and a stored file; a forge the peer's table does not know (one written out of tree)
 * adds its source fields to the settings, kept and answered like the peer's forges' own.
 */
export function stackFields(forges: readonly ForgeSource[]) {
  // cast: a forge's own fields are known at run time only; the type stays the peer's table.
  const settings = { ...settingFields, ...unknownForgeFields(settingFields, forges) } as typeof settingFields;
  return {
    columns: columnFields(['git', ...forges.map(f => f.id), 'raw']),
    settings: schemasOf(settings),
    settingKeys: Object.keys(settings) as SettingKey[],
    settingDefaults: () => defaultsOf(settings),
  };
}
export type StackFields = ReturnType<typeof stackFields>;
