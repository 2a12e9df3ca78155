// What patch.* takes and answers. Field names, nullability and answers follow the peer's API; the
// workload kinds a patch may belong to (the peer's `type`: application or compose) and the owner
// fields of a patch (applicationId, composeId) are those of the registered kinds that build a
// checkout (WorkloadKind.checkout), made once every plugin is set up.
import { Type, schema, type Static, type TSchema } from '@berth/core';
import { PATCH_TYPES } from './entities.ts';

const { Nullable, NonEmpty } = schema;

/** The largest file a patch holds or readRepoFile answers (the default request body limit). */
export const MAX_CONTENT = 1_048_576;

/** A kind patches may belong to: wire name and id field. */
export interface PatchKind {
  kind: string;
  idField: string;
  label: string;
}

const Id = (description: string) => NonEmpty({ maxLength: 64, description });
const PatchId = () => Id('a patch of the organization');
const Kind = Type.Enum(PATCH_TYPES, { description: 'create or update: write the whole file with content; delete: remove the file' });
const FilePath = () =>
  NonEmpty({ maxLength: 4096, description: 'the file inside the repository: a relative path of "/"-separated names, none of them empty, ".", ".." or .git, nor longer than 255 bytes' });
const Content = () => Type.String({ maxLength: MAX_CONTENT, description: "the file's whole new content (a delete ignores it)" });

export function patchSchemas(kinds: PatchKind[]) {
  const names = kinds.map(k => k.kind);
  const EntityType = Type.Enum(names, { description: `the kind of workload \`id\` names (${names.join(', ')})` });
  const entity = { id: Id(`the workload (its ${kinds.map(k => k.idField).join(' or ')})`), type: EntityType };
  /** A stored patch, as every operation answers it (the content in plain text). */
  const PatchView = Type.Object({
    patchId: Type.String(),
    type: Kind,
    filePath: Type.String(),
    enabled: Type.Boolean(),
    content: Type.String(),
    createdAt: Type.String({ description: 'ISO 8601' }),
    updatedAt: Nullable(Type.String({ description: 'ISO 8601; null until the first change' })),
    ...Object.fromEntries(kinds.map(k => [k.idField, Nullable(Type.String({ description: `the ${k.label} the patch belongs to (null for another kind's)` }))])),
  });
  const CreateInput = Type.Object({
    filePath: FilePath(),
    content: Content(),
    type: Type.Optional(Kind),
    enabled: Type.Optional(Type.Boolean({ description: 'default true' })),
    ...Object.fromEntries(kinds.map(k => [k.idField, Type.Optional(Nullable(Type.String({ maxLength: 64, description: `the ${k.label} the patch belongs to (give exactly one workload)` })))])),
  });
  const EntityInput = Type.Object(entity);
  const RepoDirectoriesInput = Type.Object({ ...entity, repoPath: Type.String({ maxLength: 4096, description: 'the path patch.ensureRepo answered for this workload' }) });
  const RepoFileInput = Type.Object({ ...entity, filePath: FilePath() });
  const SaveFileInput = Type.Object({
    ...entity,
    filePath: FilePath(),
    content: Content(),
    patchType: Type.Optional(Type.Enum(['create', 'update'], { default: 'update', description: 'create: a new file; update: a file of the repository' })),
  });
  return { PatchView, CreateInput, EntityInput, RepoDirectoriesInput, RepoFileInput, SaveFileInput };
}

export const PatchIdInput = Type.Object({ patchId: PatchId() });

export const UpdateInput = Type.Object({
  patchId: PatchId(),
  type: Type.Optional(Kind),
  filePath: Type.Optional(FilePath()),
  enabled: Type.Optional(Type.Boolean()),
  content: Type.Optional(Content()),
  createdAt: Type.Optional(Type.String({ maxLength: 64, description: "the peer's field: accepted and ignored (a patch keeps when it was made)" })),
  updatedAt: Type.Optional(Nullable(Type.String({ maxLength: 64, description: "the peer's field: accepted and ignored (Berth sets it)" }))),
});
export type UpdateInput = Static<typeof UpdateInput>;

export const ToggleInput = Type.Object({ patchId: PatchId(), enabled: Type.Boolean() });

export const CleanInput = Type.Object({
  serverId: Type.Optional(Type.String({ maxLength: 64, description: "a server of the organization: only the checkouts of its workloads; absent: every checkout of the organization's workloads" })),
});

/** One entry of readRepoDirectories' tree: a file, or a directory with its entries. */
export interface RepoEntry {
  name: string;
  path: string;
  type: 'file' | 'directory';
  children?: RepoEntry[];
}
export const RepoEntry: TSchema = Type.Cyclic(
  {
    PatchRepoEntry: Type.Object({
      name: Type.String(),
      path: Type.String({ description: 'relative to the repository, as patches name files' }),
      type: Type.Enum(['file', 'directory']),
      children: Type.Optional(Type.Array(Type.Ref('PatchRepoEntry'))),
    }),
  },
  'PatchRepoEntry',
);

/** The peer's view of a patch, with its owner under its kind's id field. */
export type PatchView = { patchId: string; type: (typeof PATCH_TYPES)[number]; filePath: string; enabled: boolean; content: string; createdAt: string; updatedAt: string | null } & Record<
  string,
  unknown
>;

export interface CreateInput {
  filePath: string;
  content: string;
  type?: (typeof PATCH_TYPES)[number];
  enabled?: boolean;
  [ownerField: string]: unknown;
}

export interface SaveFileInput {
  id: string;
  type: string;
  filePath: string;
  content: string;
  patchType?: 'create' | 'update';
}
