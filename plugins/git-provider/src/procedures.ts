// gitProvider.* and github.* — the organization's git hosting connections. No answer carries a secret.
import { Type, router, schema } from '@berth/core';
import {
  GithubBranch, GithubBranchesInput, GithubIdInput, GithubProviderListed, GithubRepository, GithubSetupInput, GithubSetupState, GithubUpdateInput, GithubView,
  GitProviderIdInput, GitProviderListed, GitProviderView, ToggleShareInput,
} from './schemas.ts';
import { SETUP_PATH } from './setup.ts';

const gitProvider = router('gitProvider');
const github = router('github');

export const gitProviderProcedures = [
  gitProvider.query('getAll', {
    summary: 'Every git provider connection of the organization, newest first, with its type\'s record (secrets never answered) and whether the caller owns it',
    input: Type.Object({}),
    output: Type.Array(GitProviderListed),
    handler: (_input, ctx) => ctx.cradle.callerGitProviders.all(),
  }),
  gitProvider.mutation('toggleShare', {
    summary: 'Share a connection with the organization or stop sharing it (its owner only)',
    input: ToggleShareInput,
    output: GitProviderView,
    handler: ({ gitProviderId, sharedWithOrganization }, ctx) => ctx.cradle.callerGitProviders.toggleShare(gitProviderId, sharedWithOrganization),
  }),
  gitProvider.mutation('remove', {
    access: 'admin',
    summary: 'Delete a connection; refused (409, naming them) while applications or compose stacks deploy from it',
    input: GitProviderIdInput,
    output: Type.Object({ success: Type.Boolean() }),
    handler: ({ gitProviderId }, ctx) => ctx.cradle.callerGitProviders.remove(gitProviderId),
  }),
  github.query('one', {
    summary: 'A GitHub App connection with its git provider (secrets never answered: null)',
    input: GithubIdInput,
    output: GithubView,
    handler: ({ githubId }, ctx) => ctx.cradle.callerGitProviders.githubOne(githubId),
  }),
  github.query('githubProviders', {
    summary: 'The GitHub connections that are configured (App id, private key and installation set)',
    input: Type.Object({}),
    output: Type.Array(GithubProviderListed),
    handler: (_input, ctx) => ctx.cradle.callerGitProviders.githubProviders(),
  }),
  github.query('getGithubRepositories', {
    summary: 'Every repository the App\'s installation reaches (all pages)',
    input: GithubIdInput,
    output: Type.Array(GithubRepository),
    handler: ({ githubId }, ctx) => ctx.cradle.callerGitProviders.githubRepositories(githubId),
  }),
  github.query('getGithubBranches', {
    summary: 'Every branch of a repository (all pages); none without githubId',
    input: GithubBranchesInput,
    output: Type.Array(GithubBranch),
    handler: (input, ctx) => ctx.cradle.callerGitProviders.githubBranches(input),
  }),
  github.mutation('testConnection', {
    summary: 'Runs a deploy\'s path: lists the repositories (API), then git ls-remote on the first with a fresh clone credential; a failure says which step',
    input: GithubIdInput,
    output: Type.String(),
    handler: ({ githubId }, ctx) => ctx.cradle.callerGitProviders.githubTestConnection(githubId),
  }),
  github.mutation('update', {
    summary: 'Rename the connection and its App name',
    input: GithubUpdateInput,
    output: schema.Ok(),
    handler: (input, ctx) => ctx.cradle.callerGitProviders.githubUpdate(input),
  }),
  github.mutation('setupState', {
    access: 'admin',
    summary: `Berth's: the state to put in a GitHub App manifest form; ${SETUP_PATH} accepts it from this organization only, for one hour`,
    input: GithubSetupInput,
    output: GithubSetupState,
    handler: ({ githubUrl }, ctx) => ctx.cradle.gitProviderSetup.issue(ctx.principal, githubUrl ?? 'https://github.com'),
  }),
];
