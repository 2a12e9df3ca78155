// gitProvider.*, github.* and gitlab.* — the organization's git hosting connections. No answer carries a secret.
import { Type, router, schema } from '@berth/core';
import {
  GitlabAuthorization,
  GitlabBranch,
  GitlabBranchesInput,
  GitlabCreateInput,
  GitlabIdInput,
  GitlabProviderListed,
  GitlabRepository,
  GitlabTestInput,
  GitlabUpdateInput,
  GitlabView,
  GithubBranch,
  GithubBranchesInput,
  GithubIdInput,
  GithubProviderListed,
  GithubRepository,
  GithubSetupInput,
  GithubSetupState,
  GithubUpdateInput,
  GithubView,
  GitProviderIdInput,
  GitProviderListed,
  GitProviderView,
  ToggleShareInput,
} from './schemas.ts';
import { GITLAB_CALLBACK_PATH, SETUP_PATH } from './setup.ts';

const gitProvider = router('gitProvider');
const github = router('github');
const gitlab = router('gitlab');

export const gitProviderProcedures = [
  gitProvider.query('getAll', {
    summary: "Every git provider connection of the organization, newest first, with its type's record (secrets never answered) and whether the caller owns it",
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
    summary: "Every repository the App's installation reaches (all pages)",
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
    summary: "Runs a deploy's path: lists the repositories (API), then git ls-remote on the first with a fresh clone credential; a failure says which step",
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
  gitlab.mutation('create', {
    access: 'admin',
    summary:
      'Connect a GitLab OAuth application (gitlab.com by default, or a self-managed server); gitlab.authorization then the callback give it its tokens. The owner is the caller, whatever authId names',
    input: GitlabCreateInput,
    output: GitlabView,
    handler: (input, ctx) => ctx.cradle.callerGitProviders.gitlabCreate(input),
  }),
  gitlab.query('one', {
    summary: 'A GitLab connection with its git provider (secret and tokens never answered: null)',
    input: GitlabIdInput,
    output: GitlabView,
    handler: ({ gitlabId }, ctx) => ctx.cradle.callerGitProviders.gitlabOne(gitlabId),
  }),
  gitlab.query('gitlabProviders', {
    summary: 'The GitLab connections that are authorized (access and refresh token set)',
    input: Type.Object({}),
    output: Type.Array(GitlabProviderListed),
    handler: (_input, ctx) => ctx.cradle.callerGitProviders.gitlabProviders(),
  }),
  gitlab.query('getGitlabRepositories', {
    summary: "Every project the connection reaches (all pages; the record's groupName filters them), the token renewed first when it expires soon",
    input: GitlabIdInput,
    output: Type.Array(GitlabRepository),
    handler: ({ gitlabId }, ctx) => ctx.cradle.callerGitProviders.gitlabRepositories(gitlabId),
  }),
  gitlab.query('getGitlabBranches', {
    summary: 'Every branch of the project id names (all pages); none without gitlabId or id, as the peer',
    input: GitlabBranchesInput,
    output: Type.Array(GitlabBranch),
    handler: (input, ctx) => ctx.cradle.callerGitProviders.gitlabBranches(input),
  }),
  gitlab.mutation('testConnection', {
    summary: "Runs a deploy's path: lists the projects (API), then git ls-remote on the first with the clone credential; a failure says which step. No gitlabId: NOT_FOUND",
    input: GitlabTestInput,
    output: Type.String(),
    handler: (input, ctx) => ctx.cradle.callerGitProviders.gitlabTestConnection(input),
  }),
  gitlab.mutation('update', {
    access: 'admin',
    summary: 'Rename the connection and change its fields (secret and tokens sealed)',
    input: GitlabUpdateInput,
    output: schema.Ok(),
    handler: (input, ctx) => ctx.cradle.callerGitProviders.gitlabUpdate(input),
  }),
  gitlab.mutation('authorization', {
    access: 'admin',
    summary: `Berth's: GitLab's authorization page for the connection, with a state ${GITLAB_CALLBACK_PATH} accepts from this organization, for this connection, for one hour`,
    input: GitlabIdInput,
    output: GitlabAuthorization,
    handler: ({ gitlabId }, ctx) => ctx.cradle.gitProviderSetup.gitlabAuthorization(ctx.principal, gitlabId, ctx.cradle.em),
  }),
];
