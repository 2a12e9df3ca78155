// @berth/provider-git-gitlab: git provider "gitlab" — an OAuth application on gitlab.com or a
// self-managed GitLab (the account's gitlabUrl). Its SDK loads on first use, not here.
import { defineProvider, Type } from '@berth/core';
import { GitlabProvider } from './gitlab-provider.ts';

export default defineProvider({ contract: 'git', id: 'gitlab', options: Type.Object({}, { additionalProperties: false }), create: () => new GitlabProvider() });
export { GitlabProvider, GITLAB_COM } from './gitlab-provider.ts';
