// Source types served by a git provider (github, gitlab, …): the workload names a connection, an owner, a
// repository and a branch; the provider mints a clone credential for this one deploy, and the git
// fetcher (source.git) clones `<provider URL>/<owner>/<repository>.git` with it as a header scoped
// to the provider's host — never in the URL, an argument, a file or the log.
import { cloneCredentialSecrets, type CheckoutSource, type GitSourceFields, type EntityManager, type SourceProvider, type SourceRequest } from '@berth/core';
import type { GitProviderService } from './service.ts';
import { cloneUrlOf, repositoryParts, textField } from './records.ts';

export class ProviderGitSource implements SourceProvider {
  readonly id: string;
  readonly #names: GitSourceFields;
  readonly #service: GitProviderService;
  readonly #fetcher: () => SourceProvider | null;
  readonly #em: () => EntityManager;

  constructor(type: string, names: GitSourceFields, service: GitProviderService, fetcher: () => SourceProvider | null, em: () => EntityManager) {
    this.id = type;
    this.#names = names;
    this.#service = service;
    this.#fetcher = fetcher;
    this.#em = em;
  }

  /** A push deploys the workload when it names the branch in the forge's branch field. */
  get branchField(): string {
    return this.#names.branch;
  }

  async resolve(request: SourceRequest): Promise<CheckoutSource> {
    const names = this.#names;
    const field = (k: string) => textField(request.fields, k);
    const { connectionId: id, repo, missing } = repositoryParts(names, request.fields);
    if (missing.length) throw new Error(`The ${this.id} source is not complete: set ${missing.join(', ')} (save${this.id[0]!.toUpperCase()}${this.id.slice(1)}Provider)`);
    const [owner, repository] = [repo.owner, repo.name];
    if (!request.organizationId) throw new Error('The deployer named no organization for the git provider source');
    const fetcher = this.#fetcher();
    if (!fetcher?.fetch) throw new Error(`Deploying from ${this.id} clones with the git source (source.git), and it is not enabled`);
    const provider = this.#service.provider(this.id);
    const account = await this.#service.accountFor(this.id, id, request.organizationId, request.em ?? this.#em()).catch((e: Error) => {
      if ((e as { code?: string }).code === 'NOT_FOUND') throw new Error(`The ${provider.label} connection ${id} is not one of this organization's (${names.id})`);
      throw e;
    });
    request.log(`Minting a ${provider.label} clone credential for ${owner}/${repository}`);
    const credential = await provider.cloneCredential(account, repo).catch((e: Error) => {
      throw new Error(`${provider.label} gave no clone credential: ${e.message}`);
    });
    for (const secret of cloneCredentialSecrets(credential)) request.redact(secret);
    const { revision } = await fetcher.fetch({
      source: { url: cloneUrlOf(credential.baseUrl, owner, repository), branch: request.ref || field(names.branch) || 'main', enableSubmodules: Boolean(request.fields.enableSubmodules), credential },
      workDir: request.workDir,
      signal: request.signal,
      log: request.log,
    });
    return { revision, buildPath: field(names.buildPath) };
  }
}
