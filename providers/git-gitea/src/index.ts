// @berth/provider-git-gitea: git provider "gitea" — an OAuth application on a Gitea (or Forgejo)
// server (the account's giteaUrl, or giteaInternalUrl where Berth reaches it), plain fetch.
import { defineProvider, Type } from '@berth/core';
import { GiteaProvider } from './gitea-provider.ts';

export default defineProvider({ contract: 'git', id: 'gitea', options: Type.Object({}, { additionalProperties: false }), create: () => new GiteaProvider() });
export { GiteaProvider, GITEA_COM } from './gitea-provider.ts';
