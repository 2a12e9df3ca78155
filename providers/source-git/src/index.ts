// @berth/source-git: source kind "git".
export { GitFetcher, type GitFetcherOptions } from './git-fetcher.ts';
export { parseGitRemote, checkBranch, type GitRemote } from './git-input.ts';
