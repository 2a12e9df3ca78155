// tag.* — the caller's organization's tags, and which of its projects they are on. As with the
// peer, admins and owners make, change and remove tags; every member reads them and tags projects
// (Berth's members reach every project of their organization).
import { Type, router } from '@berth/core';
import { Assignment, BulkAssignInput, CreateInput, ProjectTagInput, Success, TagIdInput, TagView, UpdateInput } from './schemas.ts';

const tag = router('tag', 'organization');

export const tagProcedures = [
  tag.mutation('create', {
    permission: 'tag.create',
    summary: 'Create a tag (its name is unique in the organization: 409 otherwise)',
    input: CreateInput,
    output: TagView,
    handler: (input, ctx) => ctx.cradle.tagRequests.create(input),
  }),
  tag.query('all', {
    permission: 'member',
    summary: 'Every tag of the organization, by name',
    input: Type.Object({}),
    output: Type.Array(TagView),
    handler: (_input, ctx) => ctx.cradle.tagRequests.all(),
  }),
  tag.query('one', { permission: 'member', summary: 'A tag of the organization', input: TagIdInput, output: TagView, handler: ({ tagId }, ctx) => ctx.cradle.tagRequests.one(tagId) }),
  tag.mutation('update', {
    permission: 'tag.update',
    summary: "Change a tag's name or color; answers the tag",
    input: UpdateInput,
    output: TagView,
    handler: (input, ctx) => ctx.cradle.tagRequests.update(input),
  }),
  tag.mutation('remove', {
    permission: 'tag.delete',
    summary: 'Delete a tag; it leaves every project it was on',
    input: TagIdInput,
    output: Success,
    handler: ({ tagId }, ctx) => ctx.cradle.tagRequests.remove(tagId),
  }),
  tag.mutation('assignToProject', {
    permission: 'member',
    summary: 'Put a tag on a project (409 when it is already there); answers the link',
    input: ProjectTagInput,
    output: Assignment,
    handler: (input, ctx) => ctx.cradle.tagRequests.assignToProject(input),
  }),
  tag.mutation('removeFromProject', {
    permission: 'member',
    summary: 'Take a tag off a project (done too when it was not on it)',
    input: ProjectTagInput,
    output: Success,
    handler: (input, ctx) => ctx.cradle.tagRequests.removeFromProject(input),
  }),
  tag.mutation('bulkAssign', {
    permission: 'member',
    summary: "Set a project's tags to exactly the given ones",
    input: BulkAssignInput,
    output: Success,
    handler: (input, ctx) => ctx.cradle.tagRequests.bulkAssign(input),
  }),
];
