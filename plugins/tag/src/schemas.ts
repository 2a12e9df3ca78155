// What tag.* takes and answers. Field names, nullability and answers follow the peer's API; the
// tag itself is the contract's TagFields, which project answers join too.
import { TagFields, Type, schema, type Static } from '@berth/core';

const { Nullable, NonEmpty, Column } = schema;

const Id = (description: string) => NonEmpty({ maxLength: 64, description });
const TagId = () => Id('a tag of the organization');
const ProjectId = () => Id('a project of the organization');
const Name = () => NonEmpty({ maxLength: 255, description: 'unique in the organization' });
const Color = () => Nullable(Column({ description: 'as the client shows it, e.g. #0ea5e9 (Berth does not read it)' }));

export const CreateInput = Type.Object({ name: Name(), color: Type.Optional(Color()) });
export type CreateInput = Static<typeof CreateInput>;

export const TagIdInput = Type.Object({ tagId: TagId() });

export const UpdateInput = Type.Object({
  tagId: TagId(),
  name: Type.Optional(Name()),
  color: Type.Optional(Color()),
  createdAt: Type.Optional(Type.String({ maxLength: 64, description: "the peer's field: accepted and ignored (a tag keeps when it was made)" })),
  organizationId: Type.Optional(Type.String({ maxLength: 64, description: "the peer's field: accepted and ignored (a tag stays in its organization)" })),
});
export type UpdateInput = Static<typeof UpdateInput>;

export const ProjectTagInput = Type.Object({ projectId: ProjectId(), tagId: TagId() });
export type ProjectTagInput = Static<typeof ProjectTagInput>;

export const BulkAssignInput = Type.Object({ projectId: ProjectId(), tagIds: Type.Array(TagId(), { maxItems: 1000, description: "the project's tags from now on (an empty list removes them all)" }) });
export type BulkAssignInput = Static<typeof BulkAssignInput>;

export const TagView = TagFields;
export type TagView = TagFields;

/** tag.assignToProject: the link made (the peer's project_tag row). */
export const Assignment = Type.Object({ id: Type.String(), projectId: Type.String(), tagId: Type.String() });
export type Assignment = Static<typeof Assignment>;

/** What the peer's remove, removeFromProject and bulkAssign answer. */
export const Success = Type.Object({ success: Type.Boolean({ description: 'true when done' }) });
export type Success = Static<typeof Success>;
