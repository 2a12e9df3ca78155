// compose.* inputs and replies. Both API variants at once: create takes environmentId (current)
// or projectId (older); the replies are the peer's (its compose table's columns, `one` with its
// relations).
import { Type, schema, type Static, type TSchema } from '@berth/core';
import { logQuery, type relationSchemas } from '@berth/plugin-workloads';
import { COMPOSE_TYPES, type StackFields } from './fields.ts';

const { Nullable, NonEmpty, AppName, Paging, Timestamp } = schema;
const Opt = <T extends TSchema>(t: T) => Type.Optional(t);
const partial = <T extends Record<string, TSchema>>(o: T) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Type.Optional(v)])) as { [K in keyof T]: ReturnType<typeof Type.Optional<T[K]>> };
const Id = NonEmpty({ maxLength: 255 });
const ComposeId = { composeId: Id };
const Base64 = () => Type.String({ minLength: 1, maxLength: 2_000_000, pattern: '^[A-Za-z0-9+/=\\s_-]*$', description: 'base64 of the JSON {"compose": <compose file>, "config": <template.toml>}' });
const BaseUrl = () => Opt(Type.String({ maxLength: 2048, description: 'a template catalog (directory or http(s) URL) instead of the configured one' }));

/**
 * The schemas made from the stack's fields (stackFields: the enabled forges' among them): the
 * record, its answer with its relations, `one`'s, and update's input.
 */
export function composeSchemas(fields: StackFields) {
  /** A compose stack as stored: every API field. */
  const ComposeFields = Type.Object({ composeId: Type.String(), ...fields.columns, ...fields.settings, hasWebhookSecret: Type.Boolean(), organizationId: Type.String(), createdAt: Timestamp() });
  /** The record with where it lives and what hangs off it, as the peer's findComposeById answers it (one, delete). */
  const composeFound = (relations: ReturnType<typeof relationSchemas>) =>
    Type.Object({
      ...ComposeFields.properties,
      environment: relations.environment,
      deployments: relations.deployments,
      mounts: relations.mounts,
      domains: relations.domains,
      backups: relations.backups,
      ...relations.git,
      server: relations.server,
      webhookRegistration: relations.webhookRegistration,
    });
  const composeView = (relations: ReturnType<typeof relationSchemas>) =>
    Type.Object({
      ...composeFound(relations).properties,
      hasGitProviderAccess: Type.Boolean({ description: "whether the caller may use the stack's git provider (no provider: true)" }),
      unauthorizedProvider: Nullable(Type.String({ description: 'the source type whose provider the caller may not use, or null' })),
    });
  const UpdateInput = Type.Object({ ...ComposeId, ...partial({ ...fields.columns, ...fields.settings }), createdAt: Opt(Type.String({ maxLength: 64 })) });
  return { ComposeFields, composeFound, composeView, UpdateInput };
}
export type ComposeSchemas = ReturnType<typeof composeSchemas>;
export type ComposeFields = Static<ComposeSchemas['ComposeFields']>;
export type ComposeFound = Static<ReturnType<ComposeSchemas['composeFound']>>;
export type ComposeView = Static<ReturnType<ComposeSchemas['composeView']>>;
export type UpdateInput = Static<ComposeSchemas['UpdateInput']>;

export const CreateInput = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  appName: Opt(AppName()),
  description: Opt(Nullable(Type.String({ maxLength: 4096 }))),
  environmentId: Opt(NonEmpty({ maxLength: 255, description: 'current variant: the environment that holds the stack' })),
  projectId: Opt(NonEmpty({ maxLength: 255, description: 'older variant: the project, whose default environment holds the stack' })),
  composeType: Opt(Type.Enum([...COMPOSE_TYPES])),
  serverId: Opt(Nullable(Type.String({ maxLength: 255 }))),
  composeFile: Opt(Type.String({ maxLength: 1048576 })),
});
export type CreateInput = Static<typeof CreateInput>;

export const IdInput = Type.Object(ComposeId);
export const DeleteInput = Type.Object({ ...ComposeId, deleteVolumes: Type.Boolean({ description: 'also remove the named volumes the stack declared' }) });
export const DeployInput = Type.Object({ ...ComposeId, title: Opt(Type.String({ maxLength: 255 })), description: Opt(Type.String({ maxLength: 2000 })) });
export const SaveEnvironmentInput = Type.Object({ ...ComposeId, env: Nullable(Type.String({ maxLength: 1048576 })), createEnvFile: Opt(Type.Boolean()) });
export const LoadServicesInput = Type.Object({ ...ComposeId, type: Opt(Type.Enum(['fetch', 'cache'], { default: 'cache' })) });
export const MountsByServiceInput = Type.Object({ ...ComposeId, serviceName: NonEmpty({ maxLength: 255 }) });
const Suffix = (description: string) => Opt(Type.String({ maxLength: 64, pattern: '^([a-zA-Z0-9][a-zA-Z0-9_.-]*)?$', description }));
export const SuffixInput = Type.Object({
  ...ComposeId,
  suffix: Suffix("what is appended to every name; absent or empty = 8 random hex characters (randomizeCompose) or the stack's project name (isolatedDeployment)"),
  prefix: Suffix("the older variant's name of suffix: the same input (suffix wins when both are sent)"),
});
/** The suffix a randomizeCompose/isolatedDeployment call asks for: `suffix`, else the older variant's `prefix`; undefined when neither is set. */
export const requestedSuffix = (i: { suffix?: string; prefix?: string }): string | undefined => i.suffix || i.prefix || undefined;
export const MoveInput = Type.Object({ ...ComposeId, targetEnvironmentId: Id });
export const Base64Input = Type.Object({ ...ComposeId, base64: Base64() });
export const PreviewInput = Type.Object({ base64: Base64(), appName: AppName(), serverId: Opt(Type.String({ maxLength: 255 })) });
export const CatalogInput = Type.Object({ baseUrl: BaseUrl() });
export const DeployTemplateInput = Type.Object({
  environmentId: Opt(NonEmpty({ maxLength: 255 })),
  projectId: Opt(NonEmpty({ maxLength: 255, description: 'older variant: the project, whose default environment holds the stack' })),
  serverId: Opt(Type.String({ maxLength: 255 })),
  id: NonEmpty({ maxLength: 255, pattern: '^[a-zA-Z0-9._-]+$' }),
  baseUrl: BaseUrl(),
});

export const SearchInput = Type.Object({
  q: Opt(Type.String({ maxLength: 255, description: 'matches name, appName or description (case-insensitive)' })),
  name: Opt(Type.String({ maxLength: 255 })),
  appName: Opt(Type.String({ maxLength: 255 })),
  description: Opt(Type.String({ maxLength: 255 })),
  projectId: Opt(Type.String({ maxLength: 255 })),
  environmentId: Opt(Type.String({ maxLength: 255 })),
  ...Paging,
});
export type SearchInput = Static<typeof SearchInput>;
export const SearchResult = Type.Object({
  items: Type.Array(
    Type.Object({
      composeId: Type.String(),
      name: Type.String(),
      appName: Type.String(),
      description: Nullable(Type.String()),
      environmentId: Type.String(),
      composeStatus: Type.String(),
      sourceType: Type.String(),
      createdAt: Timestamp(),
    }),
  ),
  total: Type.Integer({ minimum: 0 }),
});

export const ReadLogsInput = Type.Object({ ...ComposeId, containerId: Type.String({ minLength: 1, maxLength: 255, pattern: '^[a-zA-Z0-9.\\-_]+$' }), ...logQuery() });
export type ReadLogsInput = Static<typeof ReadLogsInput>;

/** What deploy and redeploy answer (the peer's), with the queued deployment's id. */
export const Queued = Type.Object({ success: Type.Boolean(), message: Type.String(), composeId: Type.String() });
export const Done = Type.Object({ success: Type.Boolean(), message: Type.String() });
/** A volume mount of a running service's container, as the engine reports it. */
export const ContainerMount = Type.Object({
  Type: Type.String(),
  Name: Opt(Type.String()),
  Source: Type.String(),
  Destination: Type.String(),
  Driver: Opt(Type.String()),
  Mode: Type.String(),
  RW: Type.Boolean(),
  Propagation: Type.String(),
});
export const Template = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  version: Type.String(),
  logo: Type.String({ description: "the logo's file name or URL; '' when the template has none" }),
  links: Type.Record(Type.String(), Type.String()),
  tags: Type.Array(Type.String()),
});
/** The peer's processed template: env lines, file mounts and domains, as previewTemplate and processTemplate answer it. */
export const ProcessedTemplate = Type.Object({
  compose: Type.String(),
  template: Type.Object({
    envs: Type.Array(Type.String()),
    mounts: Type.Array(Type.Object({ filePath: Type.String(), content: Type.String() })),
    domains: Type.Array(Type.Object({ serviceName: Type.String(), port: Type.Number(), host: Type.String(), path: Type.String() })),
  }),
});
export type ProcessedTemplate = Static<typeof ProcessedTemplate>;
