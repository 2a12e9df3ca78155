// Sources say what a workload deploys: an image to run as it is (docker) or a checkout to build
// (git; github, gitlab, bitbucket and gitea later). Each source type is a provider of contract
// "source" with the source type as its id; the deployer resolves `source.<sourceType>` and
// never asks which type it has, and the enabled ids are the source types the API accepts.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { BuildIo } from './builders.ts';
import type { CloneCredential } from './git-provider.ts';

/** Registry credentials for pulling an image (as the engine takes them). */
export interface RegistryAuth {
  username: string;
  password: string;
  serveraddress: string;
}

/** The workload a source fetches for, by kind and id (what a source that keeps files per workload files them under). */
export interface SourceOwner {
  kind: string;
  id: string;
}

export interface SourceRequest extends BuildIo {
  /** The workload's saved fields (dockerImage, customGitUrl, ...), as stored. */
  fields: Record<string, unknown>;
  /** Its sealed fields (the registry password, ...), opened. */
  secrets: Record<string, string | null>;
  /** An empty per-deployment directory: a source that builds fetches into it. */
  workDir: string;
  /** A stored SSH key's private key, by id, within the workload's organization (null when there is none). */
  sshKey(keyId: string): Promise<string | null>;
  /** A value never to show in the deployment log (a key, a token). */
  redact(value: string): void;
  /**
   * Asked before reading a location that may be on this host (a repository path or file: URL):
   * throws the host-access policy's refusal (403 naming `field` and the config key) unless allowed.
   */
  checkLocal(location: string, field: string): void;
  /** The workload's organization: a source served by a git provider reads its connection there. */
  organizationId?: string;
  /** The deployment's unit of work, for such reads. */
  em?: EntityManager;
  /** A tag to check out instead of the workload's branch (a deployment queued by a tag push). */
  ref?: string | null;
  /** The workload: a source that keeps what was uploaded for it (drop) finds it by this. */
  owner?: SourceOwner;
}

/** An upload a source keeps as a workload's source (drop: a zip archive). */
export interface SourceUpload {
  owner: SourceOwner;
  /** The uploaded file on this machine (removed by the caller afterwards). */
  file: string;
  /** The input field that carried it: a refusal is a BAD_REQUEST naming it. */
  field: string;
  /** Stops the check (absent: it runs to its end, bounded by the source's limits). */
  signal?: AbortSignal;
}

/** An image to run as it is: the deployer pulls it (with the credentials) and rolls it out. */
export interface ImageSource {
  image: string;
  registryAuth: RegistryAuth | null;
}

/** A checkout written into workDir: the deployer builds it with the workload's builder. */
export interface CheckoutSource {
  /** What was fetched (a commit), for the log. */
  revision: string | null;
  /** The sub-directory of the checkout that is the application ('' or '/' = the root). */
  buildPath: string | null;
}

export type SourceResult = ImageSource | CheckoutSource;

export interface SourceProvider {
  /** The source type it serves (the provider's id). */
  readonly id: string;
  /** The workload field naming the branch it deploys, which a push must name to deploy it; absent, it follows no branch (an image). */
  readonly branchField?: string;
  /** Reads the workload's fields and answers an image, or fetches into workDir; throws with a message fit for the deployment log. */
  resolve(request: SourceRequest): Promise<SourceResult>;
  /**
   * The git source's clone of a URL's branch into workDir with a forge's clone credential (the
   * sources a git provider serves clone through it); absent on a source that clones nothing (docker).
   */
  fetch?(request: GitCloneRequest): Promise<{ revision: string | null }>;
  /**
   * A source of uploaded files (drop): checks the upload and keeps it as the workload's source,
   * in place of the one before only once it is whole (a refused upload leaves that one); answers
   * what it keeps, as a deploy's log names it. Absent on a source that fetches (git, docker).
   */
  receive?(upload: SourceUpload): Promise<{ revision: string }>;
  /** Removes what it keeps for the workload (the workload is being removed); absent when it keeps nothing. */
  forget?(owner: SourceOwner): Promise<void>;
  /** The git source's `git ls-remote` of a URL with a forge's clone credential: its branches and their commits (a connection test's second step). */
  remoteHeads?(request: { url: string; credential?: CloneCredential | null; signal: AbortSignal }): Promise<{ name: string; commit: string }[]>;
}

/** What the git source clones for a forge: a URL's branch, with the forge's credential, into an empty directory. */
export interface GitCloneRequest extends BuildIo {
  source: { url: string; branch: string; enableSubmodules: boolean; credential: CloneCredential };
  workDir: string;
}

declare module '../provider.ts' {
  interface ProviderContracts {
    /** `source.<sourceType>`: what a workload deploys. */
    source: SourceProvider;
  }
}
