// patch.* — file patches of the caller's organization's workloads, as the peer has them: each
// writes or deletes one file of the workload's repository, and a deploy applies the enabled ones
// in order of their paths to its fresh checkout before the build. The repository procedures work
// on a checkout kept for reading and editing patches (ensureRepo fetches it). Made once every
// plugin is set up: the kinds are the registered ones that build a checkout.
import { Type, router } from '@berth/core';
import type { PatchService } from './service.ts';
import { CleanInput, PatchIdInput, RepoEntry, ToggleInput, UpdateInput, patchSchemas, type CreateInput, type SaveFileInput } from './schemas.ts';

const patch = router('patch', 'organization');

export const patchProcedures = (service: PatchService) => () => {
  const { PatchView, CreateInput: Create, EntityInput, RepoDirectoriesInput, RepoFileInput, SaveFileInput: SaveFile } = patchSchemas(service.kinds());
  return [
    patch.mutation('create', {
      permission: 'service.create',
      summary: 'Add a patch to a workload: a file of its repository written (create, update) or deleted before each build (409 when the file has one)',
      input: Create,
      output: PatchView,
      handler: (input, ctx) => ctx.cradle.patchRequests.create(input as CreateInput),
    }),
    patch.query('one', {
      permission: 'service.read',
      summary: 'A patch of the organization',
      input: PatchIdInput,
      output: PatchView,
      handler: ({ patchId }, ctx) => ctx.cradle.patchRequests.one(patchId),
    }),
    patch.query('byEntityId', {
      permission: 'service.read',
      summary: "A workload's patches, in the order a deploy applies them (by file path)",
      input: EntityInput,
      output: Type.Array(PatchView),
      handler: ({ id, type }, ctx) => ctx.cradle.patchRequests.byEntityId(id, type as string),
    }),
    patch.mutation('update', {
      permission: 'service.create',
      summary: "Change a patch's file, type, content or switch; answers the patch",
      input: UpdateInput,
      output: PatchView,
      handler: (input, ctx) => ctx.cradle.patchRequests.update(input),
    }),
    patch.mutation('delete', {
      permission: 'service.delete',
      summary: 'Delete a patch; answers it as it was',
      input: PatchIdInput,
      output: PatchView,
      handler: ({ patchId }, ctx) => ctx.cradle.patchRequests.remove(patchId),
    }),
    patch.mutation('toggleEnabled', {
      permission: 'service.create',
      summary: 'Switch a patch on or off (a deploy applies only the enabled ones); answers the patch',
      input: ToggleInput,
      output: PatchView,
      handler: ({ patchId, enabled }, ctx) => ctx.cradle.patchRequests.toggleEnabled(patchId, enabled),
    }),
    patch.mutation('ensureRepo', {
      permission: 'service.create',
      summary: "Fetch the workload's repository afresh, as its deploys fetch it, into the checkout patches are read and edited on; answers the checkout's path",
      input: EntityInput,
      output: Type.String(),
      handler: ({ id, type }, ctx) => ctx.cradle.patchRequests.ensureRepo(id, type as string),
    }),
    patch.query('readRepoDirectories', {
      permission: 'service.read',
      summary: "The files of the workload's checkout as a tree (.git left out; 404 before ensureRepo)",
      input: RepoDirectoriesInput,
      output: Type.Array(RepoEntry),
      handler: ({ id, type, repoPath }, ctx) => ctx.cradle.patchRequests.readRepoDirectories(id, type as string, repoPath),
    }),
    patch.query('readRepoFile', {
      permission: 'service.read',
      summary: "A file as the workload's patch of it writes it, else as its checkout holds it",
      input: RepoFileInput,
      output: Type.String(),
      handler: ({ id, type, filePath }, ctx) => ctx.cradle.patchRequests.readRepoFile(id, type as string, filePath),
    }),
    patch.mutation('saveFileAsPatch', {
      permission: 'service.create',
      summary: "Save a file's new content as its patch (made, or the file's patch changed); answers the patch",
      input: SaveFile,
      output: PatchView,
      handler: (input, ctx) => ctx.cradle.patchRequests.saveFileAsPatch(input as SaveFileInput),
    }),
    patch.mutation('markFileForDeletion', {
      permission: 'service.create',
      summary: "Make the file's patch a delete (made, or the file's patch changed); answers the patch",
      input: RepoFileInput,
      output: PatchView,
      handler: ({ id, type, filePath }, ctx) => ctx.cradle.patchRequests.markFileForDeletion(id, type as string, filePath),
    }),
    patch.mutation('cleanPatchRepos', {
      permission: 'organization.update',
      access: 'admin',
      summary: "Remove the checkouts of the organization's workloads (of those on serverId's server, with one); patches stay. Answers true",
      input: CleanInput,
      output: Type.Boolean(),
      handler: ({ serverId }, ctx) => ctx.cradle.patchRequests.cleanPatchRepos(serverId),
    }),
  ];
};
