// Source kind "git": a shallow clone of one branch into the deployment's work directory.
// git runs with argument arrays in its own process group (killed on abort), never prompts,
// and may only use the transports the source's own URL needs. A git provider's clone credential
// reaches git only as a header scoped to the provider's host, through the child's environment.
import os from 'node:os';
import { cloneCredentialEnv, cloneCredentialSecrets, type BuildIo, type CheckoutSource, type CloneCredential, type SourceProvider, type SourceRequest } from '@berth/core';
import { cancelled, masker } from '@berth/provider-builder-dockerfile/engine';
import { findProgram, runProgram } from '@berth/provider-builder-programs';
import { checkBranch, parseGitRemote, type GitRemote } from './git-input.ts';
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
    throw new Error("The git source's SSH key has no private key");
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
  /** A push deploys the workload when it names this branch (the peer's column). */
  readonly branchField = 'customGitBranch';
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
    const source: GitSourceSpec = {
      url,
      branch: request.ref || field('customGitBranch') || 'main',
      ...(privateKey ? { sshKey: { privateKey } } : {}),
      enableSubmodules: Boolean(request.fields.enableSubmodules),
    };
    const { revision } = await this.fetch({ source, workDir: request.workDir, signal: request.signal, log: request.log });
    return { revision, buildPath: field('customGitBuildPath') };
  }

  /** git's environment for one remote: no prompts, the transports it needs, the clone credential as a header scoped to its host. */
  #env(remote: GitRemote, credential: CloneCredential | null, keyFile: string | null): NodeJS.ProcessEnv {
    return gitEnv({
      GIT_SSH_COMMAND: sshCommand(keyFile, this.#options),
      // Submodules of a remote repository must not read this host's files.
      GIT_ALLOW_PROTOCOL: remote.local ? 'file:http:https:ssh' : 'http:https:ssh',
      ...(credential ? cloneCredentialEnv(credential) : {}),
    });
  }

  #git(): string {
    const git = findProgram('git', this.#options.searchPath ?? process.env.PATH ?? '');
    if (!git) throw new Error('Fetching a git source needs the "git" program on the host, and it is not installed');
    return git;
  }

  /**
   * The branches of a remote repository and their commits, read with `git ls-remote` the way a clone
   * reads them (same environment, same credential): a git provider's testConnection runs it to prove
   * the clone path, not only the API. Throws git's own reason, credentials masked.
   */
  async remoteHeads(request: { url: string; credential?: CloneCredential | null; signal: AbortSignal }): Promise<{ name: string; commit: string }[]> {
    const remote = parseGitRemote(request.url);
    const credential = credentialFor({ url: request.url, branch: null, credential: request.credential ?? null }, remote.url);
    const mask = masker([...remote.secrets, ...(credential ? cloneCredentialSecrets(credential) : [])]);
    const heads: { name: string; commit: string }[] = [];
    let failure: string | null = null;
    const exit = await runProgram(
      {
        file: this.#git(),
        args: ['ls-remote', '--heads', '--', remote.url],
        cwd: os.tmpdir(),
        env: this.#env(remote, credential, null),
        signal: request.signal,
        line: text => {
          const head = /^([0-9a-f]{40,64})\trefs\/heads\/(.+)$/.exec(text.trim());
          if (head) heads.push({ name: head[2]!, commit: head[1]! });
          const fatal = /^(?:fatal|error): (.*)$/.exec(text.trim());
          if (fatal && failure === null) failure = mask(fatal[1]!);
        },
      },
      () => cancelled(request.signal, 'Listing the remote branches'),
    );
    if (exit.code !== 0) throw new Error(failure ?? `git ls-remote failed with exit code ${exit.code}`);
    return heads;
  }

  async fetch(request: FetchRequest): Promise<{ revision: string | null }> {
    const { source, workDir } = request;
    const remote = parseGitRemote(source.url);
    const branch = checkBranch(source.branch);
    const submodules = source.enableSubmodules === true;
    const privateKey = sshKeyOf(source);
    const credential = credentialFor(source, remote.url);
    const git = this.#git();
    const mask = masker([...remote.secrets, ...(credential ? cloneCredentialSecrets(credential) : [])]);
    const args = ['clone', '--depth', '1', '--branch', branch, ...(submodules ? ['--recurse-submodules', '--shallow-submodules'] : []), '--', remote.url, workDir];

    const clone = async (keyFile: string | null) => {
      const env = this.#env(remote, credential, keyFile);
      request.log(mask(`Cloning ${remote.url} (branch ${branch}${submodules ? ', with submodules' : ''})`));
      let failure: string | null = null;
      let previous: string | null = null;
      const exit = await runProgram(
        {
          file: git,
          args,
          cwd: workDir,
          env,
          signal: request.signal,
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
        },
        () => cancelled(request.signal, 'The source fetch'),
      );
      if (exit.code !== 0) {
        throw new Error(failure ?? (exit.signal ? `git clone was stopped by ${exit.signal}` : `git clone failed with exit code ${exit.code}`));
      }
      let revision: string | null = null;
      const head = await runProgram(
        {
          file: git,
          args: ['rev-parse', 'HEAD'],
          cwd: workDir,
          env,
          signal: request.signal,
          line: text => {
            if (/^[0-9a-f]{40,64}$/.test(text.trim())) revision = text.trim();
          },
        },
        () => cancelled(request.signal, 'The source fetch'),
      );
      if (head.code !== 0 || revision === null) throw new Error('The cloned repository has no commit on its branch');
      request.log(`Checked out ${branch} at ${revision}`);
      return { revision };
    };
    return privateKey === null ? clone(null) : withKeyFile(privateKey, clone);
  }
}
