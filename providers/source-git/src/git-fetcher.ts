// Source kind "git": a shallow clone of one branch into the deployment's work directory.
// git runs with argument arrays in its own process group (killed on abort), never prompts,
// and may only use the transports the source's own URL needs. A git provider's clone credential
// reaches git only as a header scoped to the provider's host, through the child's environment.
import { cloneCredentialEnv, cloneCredentialSecrets, type BuildIo, type CheckoutSource, type CloneCredential, type SourceProvider, type SourceRequest } from '@berth/core';
import { cancelled, masker } from '@berth/provider-builder-dockerfile/engine';
import { findProgram, runProgram } from '@berth/provider-builder-programs';
import { checkBranch, parseGitRemote } from './git-input.ts';
import { checkKnownHostsFile, sshCommand, withKeyFile, type SshOptions } from './ssh-key.ts';

/** What to clone: the URL, the branch, an SSH key, submodules. */
export interface GitSourceSpec {
  url: unknown;
  branch: unknown;
  sshKey?: { privateKey?: unknown } | null;
  enableSubmodules?: boolean;
  /** A git provider's clone credential: sent only to URLs below its baseUrl, never written anywhere. */
  credential?: CloneCredential | null;
  [field: string]: unknown;
}

export interface FetchRequest extends BuildIo {
  source: GitSourceSpec;
  /** An empty per-deployment directory to clone into. */
  workDir: string;
}

export interface GitFetcherOptions extends SshOptions {
  /** Where git is looked up (default: this process's PATH). */
  searchPath?: string;
}

/** The environment git gets: no prompts, English messages, and none of Berth's own secrets. */
function gitEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'TMPDIR', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy', 'SSL_CERT_FILE', 'SSL_CERT_DIR'];
  const env: NodeJS.ProcessEnv = {};
  for (const k of keep) if (process.env[k] !== undefined) env[k] = process.env[k];
  return { ...env, LANG: 'C', LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0', ...extra };
}

function sshKeyOf(source: GitSourceSpec): string | null {
  const key = source.sshKey;
  if (key === undefined || key === null) return null;
  if (typeof key !== 'object' || typeof key.privateKey !== 'string' || !key.privateKey.trim()) {
    throw new Error('The git source\'s SSH key has no private key');
  }
  return key.privateKey;
}

/** The source's clone credential, checked to be for the repository's own host (else git would silently send none). */
function credentialFor(source: GitSourceSpec, url: string): CloneCredential | null {
  const credential = source.credential ?? null;
  if (credential === null) return null;
  const base = new URL(credential.baseUrl);
  let target: URL | null = null;
  try {
    target = new URL(url);
  } catch {
    // an scp-like or local path: no http(s) host to send a header to
  }
  const scope = base.pathname.endsWith('/') ? base.pathname : `${base.pathname}/`;
  if (target === null || target.origin !== base.origin || !`${target.pathname}/`.startsWith(scope)) {
    throw new Error(`The provider's clone credential is for ${base.origin}${scope}, and the repository URL is not below it`);
  }
  return credential;
}

export class GitFetcher implements SourceProvider {
  readonly id = 'git';
  readonly #options: GitFetcherOptions;

  constructor(options: GitFetcherOptions = {}) {
    checkKnownHostsFile(options.knownHostsFile);
    this.#options = options;
  }

  /** The workload's custom git fields (saveGitProvider), cloned into workDir. */
  async resolve(request: SourceRequest): Promise<CheckoutSource> {
    const field = (k: string) => (request.fields[k] as string | null | undefined) ?? null;
    const url = field('customGitUrl');
    if (!url) throw new Error('No git URL is set: save one with saveGitProvider');
    request.checkLocal(url, 'customGitUrl');
    const keyId = field('customGitSSHKeyId');
    const privateKey = keyId ? await request.sshKey(keyId) : null;
    if (privateKey) request.redact(privateKey);
    const source: GitSourceSpec = { url, branch: field('customGitBranch') || 'main', ...(privateKey ? { sshKey: { privateKey } } : {}), enableSubmodules: Boolean(request.fields.enableSubmodules) };
    const { revision } = await this.fetch({ source, workDir: request.workDir, signal: request.signal, log: request.log });
    return { revision, buildPath: field('customGitBuildPath') };
  }

  async fetch(request: FetchRequest): Promise<{ revision: string | null }> {
    const { source, workDir } = request;
    const remote = parseGitRemote(source.url);
    const branch = checkBranch(source.branch);
    const submodules = source.enableSubmodules === true;
    const privateKey = sshKeyOf(source);
    const credential = credentialFor(source, remote.url);
    const git = findProgram('git', this.#options.searchPath ?? process.env.PATH ?? '');
    if (!git) throw new Error('Fetching a git source needs the "git" program on the host, and it is not installed');
    const mask = masker([...remote.secrets, ...(credential ? cloneCredentialSecrets(credential) : [])]);
    const args = ['clone', '--depth', '1', '--branch', branch, ...(submodules ? ['--recurse-submodules', '--shallow-submodules'] : []), '--', remote.url, workDir];

    const clone = async (keyFile: string | null) => {
      const env = gitEnv({
        GIT_SSH_COMMAND: sshCommand(keyFile, this.#options),
        // Submodules of a remote repository must not read this host's files.
        GIT_ALLOW_PROTOCOL: remote.local ? 'file:http:https:ssh' : 'http:https:ssh',
        ...(credential ? cloneCredentialEnv(credential) : {}),
      });
      request.log(mask(`Cloning ${remote.url} (branch ${branch}${submodules ? ', with submodules' : ''})`));
      let failure: string | null = null;
      let previous: string | null = null;
      const exit = await runProgram({
        file: git, args, cwd: workDir, env, signal: request.signal,
        line: text => {
          const shown = mask(text);
          const bare = shown.trim();
          const fatal = /^(?:fatal|error): (.*)$/.exec(bare);
          // The first one says what went wrong; later ones are consequences. A line just before
          // it that git did not write (ssh's "Host key verification failed.") is the cause.
          if (fatal && failure === null) failure = previous ? `${previous} ${fatal[1]}` : fatal[1]!;
          previous = /^(?:Cloning into |[a-z]+: )/.test(bare) ? null : bare;
          request.log(shown);
        },
      }, () => cancelled(request.signal, 'The source fetch'));
      if (exit.code !== 0) {
        throw new Error(failure ?? (exit.signal ? `git clone was stopped by ${exit.signal}` : `git clone failed with exit code ${exit.code}`));
      }
      let revision: string | null = null;
      const head = await runProgram({
        file: git, args: ['rev-parse', 'HEAD'], cwd: workDir, env, signal: request.signal,
        line: text => { if (/^[0-9a-f]{40,64}$/.test(text.trim())) revision = text.trim(); },
      }, () => cancelled(request.signal, 'The source fetch'));
      if (head.code !== 0 || revision === null) throw new Error('The cloned repository has no commit on its branch');
      request.log(`Checked out ${branch} at ${revision}`);
      return { revision };
    };
    return privateKey === null ? clone(null) : withKeyFile(privateKey, clone);
  }
}
