// @berth/provider-git-github: git provider "github" — a GitHub App on github.com or a GitHub
// Enterprise server (the account's githubUrl). Its SDKs load on first use, not here.
import { defineProvider, Type } from '@berth/core';
import { GithubProvider } from './github-provider.ts';

export default defineProvider({ contract: 'git', id: 'github', options: Type.Object({}, { additionalProperties: false }), create: () => new GithubProvider() });
export { GithubProvider, apiUrlOf } from './github-provider.ts';
export type { ManifestApp } from './connection.ts';
