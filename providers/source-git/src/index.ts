// @berth/provider-source-git: source type "git" (any URL: https, ssh with a stored key, file).
import path from 'node:path';
import { defineProvider, Type } from '@berth/core';
import { GitFetcher } from './git-fetcher.ts';

export const GitOptions = Type.Object(
  {
    knownHostsFile: Type.Optional(
      Type.String({ env: 'BERTH_SOURCE_GIT_KNOWN_HOSTS_FILE', pattern: '^/', description: "Where hosts first seen over SSH are remembered (default: dataDir/ssh/known_hosts, not the user's)" }),
    ),
    searchPath: Type.Optional(Type.String({ minLength: 1, description: "Where git is looked up (default: this process's PATH)" })),
  },
  { additionalProperties: false },
);

export default defineProvider({
  contract: 'source',
  id: 'git',
  options: GitOptions,
  create: (options, { config }) =>
    new GitFetcher({ knownHostsFile: options.knownHostsFile ?? path.resolve(config.dataDir, 'ssh', 'known_hosts'), ...(options.searchPath ? { searchPath: options.searchPath } : {}) }),
});
export { GitFetcher, type GitFetcherOptions, type FetchRequest, type GitSourceSpec } from './git-fetcher.ts';
export { parseGitRemote, checkBranch, type GitRemote } from './git-input.ts';
