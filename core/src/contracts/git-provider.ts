// A git hosting service (GitHub, GitLab, Bitbucket, Gitea, a third party's) as one provider:
// its API for repositories, branches, commits, webhooks and pull-request comments, and the
// credential a clone uses. The gitProvider plugin keeps the connected accounts and passes each
// call the account it concerns; the provider keeps no state of its own, so one instance serves
// every account of its type. Enabled like every provider: `providers.git.<id>`.
import type { TObject, TProperties, TSchema } from 'typebox';
import type { GitDeliveryReader } from './git-delivery.ts';

/**
 * One connected account as its record holds it: `settings` in clear (URLs, app and installation
 * ids, user names, token expiry...), `secrets` opened (private keys, client secrets, tokens).
 * Which keys exist is the provider's business; shared code never reads them.
 */
export interface GitAccount {
  settings: Record<string, string | number | null>;
  secrets: Record<string, string | null>;
}

/** What connect or refresh learned and the record must keep (new tokens, their expiry...); empty objects when nothing changed. */
export interface GitAccountUpdate {
  settings: Record<string, string | number | null>;
  secrets: Record<string, string | null>;
}

/** A repository the account can reach, as the provider's API names it. */
export interface GitRepository {
  /** The provider's id of it (GitHub's numeric id, GitLab's project id), as text. */
  id: string;
  /** Its name without the owner ("app"). */
  name: string;
  /** The owner, group path or workspace ("team", "group/sub"). */
  owner: string;
  /** What clones it over https; never carries a credential. */
  cloneUrl: string;
  /** Its default branch, when the API says it. */
  defaultBranch: string | null;
  private: boolean;
}

/** Which repository a call is about: owner and name as listRepositories answered them. */
export interface GitRepositoryRef {
  owner: string;
  name: string;
}

/** A branch and the commit it points at. */
export interface GitBranch {
  name: string;
  commit: string;
}

/**
 * What a clone sends: HTTP basic credentials for the hosts below `baseUrl` only. It reaches git
 * as an `http.<baseUrl>.extraHeader` in the child's environment (cloneCredentialEnv), never in
 * a URL, an argument or a file.
 */
export interface CloneCredential {
  /** The origin (and optional path prefix) the credential is for, ending in "/": "https://github.com/". */
  baseUrl: string;
  /** The basic-auth user name the service expects with a token ("x-access-token", "oauth2"...). */
  username: string;
  /** The token or password. */
  password: string;
  /** When it stops working (null = not known to expire). */
  expiresAt: Date | null;
}

/** A push webhook the provider registered. */
export interface GitWebhook {
  /** The provider's id of it, for removeWebhook. */
  id: string;
}

/**
 * A pull (merge) request as the service holds it, read through its API: what a preview deploys
 * and whose access it checks, never taken from a webhook's payload (anyone holding a hook's URL
 * can write one).
 */
export interface GitPullRequest {
  /** Its number in the repository (GitLab's iid). */
  number: number;
  /** open, or closed (merged or declined). */
  state: 'open' | 'closed';
  /** The repository its head branch is in (owner/name, GitLab's whole path): a fork's, or the repository itself. */
  headRepository: string;
  headBranch: string;
  /** The head commit as the service names it (Bitbucket's is its short hash). */
  headSha: string;
  /** The branch it merges into. */
  baseBranch: string;
  /** Its author: the service's id and login, as hasWriteAccess takes them. */
  author: { id: string | null; login: string | null };
}

/** Which step of talking to the provider failed: for testConnection's answer and the deployment log. */
export type GitFailure = 'connect' | 'credentials' | 'repositories' | 'branches' | 'commit' | 'clone' | 'webhook' | 'comment' | 'access' | 'pullRequest' | 'missing';

/**
 * The fields of a workload (the peer's columns) that say what to clone from a forge: the connection,
 * owner, repository, branch and build path. `path`: a field holding the repository's whole path
 * (GitLab's `group/sub/project`), used in place of owner and repository when set; `slug`: a field
 * that, when set, names the repository in place of `repository` (Bitbucket's).
 */
export interface GitSourceFields {
  id: string;
  owner: string;
  repository: string;
  branch: string;
  buildPath: string;
  path?: string;
  slug?: string;
  /** Further fields that say which repository (GitLab's project id): changing one is changing the source, as changing the repository is. */
  identity?: readonly string[];
  /**
   * What `application.save<Id>Provider` takes besides the application's id and the git options, in
   * order, where the peer's differs from the generated input (each source field optional text, the
   * branch a branch name): its fields' schemas, and fields of its own (GitHub's triggerType,
   * GitLab's project id).
   */
  save?: TProperties;
}

/**
 * What a connection of a forge keeps, for a forge that brings no record of its own (the four
 * built-in ones keep the peer's tables): `settings` in clear (URLs, user names), `secrets` sealed
 * (tokens, keys). The git-provider plugin stores them in one generic record and serves
 * `<id>.create`, `<id>.one`, `<id>.<id>Providers`, `get<Id>Repositories`, `get<Id>Branches`,
 * `<id>.testConnection` and `<id>.update` from these schemas; an account is `settings` and
 * `secrets` as given (opened).
 */
export interface GitConnectionForm {
  /** The fields kept in clear: an object of strings, numbers or nulls (answered by `<id>.one`). */
  readonly settings: TObject;
  /** The fields kept sealed (never answered): an object of strings. */
  readonly secrets: TObject;
  /**
   * For a forge whose deliveries have an app (`deliveries.app`): which setting holds a connection's
   * installation id (and its app id, for the app's ping) and which secret its webhook secret.
   */
  readonly app?: { readonly installation: string; readonly app?: string; readonly secret: string };
  /**
   * The router's wire where the forge keeps another platform's (the peer's field names and answers):
   * each operation named replaces the generated one's input or answer, every other one is generated.
   */
  readonly wire?: GitConnectionWire;
  /** How a connection is authorized through the service's OAuth flow, for a forge with one (the provider's exchangeCode completes it). */
  readonly oauth?: GitOAuthFlow;
  /** How a connection is made by registering an app on the service and installing it (GitHub's App manifest flow); its `wire.create` is then null. */
  readonly appSetup?: GitAppSetup;
}

/**
 * How a connection is made by registering an app on the service from a manifest, then installing
 * it (GitHub's App manifest flow). Berth seals the states: `<statePrefix>_init:` for the start
 * (`<id>.setupState`, bound to the caller's organization and the service address chosen there) and
 * `<statePrefix>_setup:` for the app's installation page (`<id>.installState`, bound to the caller and
 * the connection); the service sends the user back to `/api/providers/<id>/setup` with a code (the
 * app was made: `convert` answers the new connection) or an installation id (the app was installed:
 * stored in the setting `app.installation` names).
 */
export interface GitAppSetup {
  readonly statePrefix: string;
  /** The setting holding the service's address the flow starts from, and its default. */
  readonly url: { readonly setting: string; readonly default: string };
  /** The app the code names, converted through the service: the new connection's name, settings and secrets. */
  convert(serviceUrl: string, code: string): Promise<{ name: string; settings: GitAccount['settings']; secrets: GitAccount['secrets'] }>;
  /** The app's installation page for a connection (without its query). */
  installPage(account: GitAccount): string;
}

/**
 * A connection as the generated router answers it: its id under the forge's id field, its git
 * provider id, its settings; with `wire.record`, every setting (null when unset) and every secret
 * field (always null) besides. `gitProvider` (the shared row) is added where an answer joins it.
 */
export type GitConnectionView = Record<string, unknown> & { gitProviderId: string };

/** One operation of a forge's wire: its summary, and its input and answer where they differ from the generated ones. */
export interface GitWireOperation {
  readonly summary?: string;
  readonly input?: TObject;
}

export interface GitConnectionWire {
  /** Answer every field of the form, as a record of the peer's table does: unset settings null, secrets null (never their value). */
  readonly record?: boolean;
  /** Settings that are a server's web address: kept as an http(s) origin and path without a trailing slash (a 400 naming the field otherwise). */
  readonly webUrls?: readonly string[];
  /** Settings a new connection takes when create does not give them (gitlab.com's address). */
  readonly defaults?: Readonly<Record<string, string>>;
  /** Settings a workload's `one` does not join (the peer's join leaves them out). */
  readonly unjoined?: readonly string[];
  /**
   * create: `checked: false` stores the fields without calling the service first (the peer's
   * create, for a forge whose test is testConnection); `fields` answers only these fields of the
   * record (the peer's short answer), an unset one among them "" (never null, as the peer's).
   */
  readonly create?: (GitWireOperation & { readonly checked?: boolean; readonly fields?: readonly string[] }) | null;
  /** Where gitProvider.getAll answers the record, a flag (`field`) saying whether the settings or secrets `when` names are all set (GitHub's isConfigured). */
  readonly configured?: { readonly field: string; readonly when: readonly string[]; readonly description: string };
  /** `<id>Providers`: the fields of the record each connection is answered with, besides its git provider row; `when`: only the connections with these settings or secrets set. */
  readonly providers?: GitWireOperation & { readonly fields: readonly string[]; readonly when?: readonly string[] };
  /** `get<Id>Repositories`: each repository's answer and its schema. */
  readonly repositories?: GitWireOperation & { readonly output: TSchema; view(repository: GitRepository): unknown };
  /**
   * `get<Id>Branches`: the repository the input names — by owner and name, or by its `id` among
   * those the connection lists; null: no branches, as the peer — and each branch's answer. Without
   * the connection's id the peer answers no branches, or, with `idRequired`, refuses naming it.
   */
  readonly branches?: GitWireOperation & {
    readonly output: TSchema;
    readonly idRequired?: boolean;
    repository(input: Record<string, unknown>): GitRepositoryRef | { readonly id: string } | null;
    view(branch: GitBranch): unknown;
  };
  /**
   * testConnection: the account tested, made of the stored one and the input's fields (the peer
   * tests credentials or a filter given in the call); `stamp`: a setting set to the time (seconds
   * since the epoch) when the test passes.
   */
  readonly testConnection?: GitWireOperation & { account?(input: Record<string, unknown>, stored: GitAccount): GitAccount; readonly stamp?: string };
  /** update: `checked: false` as for create; the answer: the connection (default), its record without the git provider row, `true`, or `{ success: true }`. */
  readonly update?: GitWireOperation & { readonly checked?: boolean; readonly answer?: 'record' | 'ok' | 'success' };
  /** Queries answering one setting of a connection, by procedure name (the peer's gitea.getGiteaUrl). */
  readonly settingQueries?: Readonly<Record<string, { readonly setting: string; readonly summary: string }>>;
}

/**
 * How a connection gets its first token pair through the service's OAuth authorization (GitLab's,
 * Gitea's): the user is sent to the service's authorization page with a state Berth seals, and the
 * service sends them back to `/api/providers/<id>/callback` with a code the provider exchanges.
 */
export interface GitOAuthFlow {
  /** The setting holding the OAuth application's client id. */
  readonly clientId: string;
  /** The setting holding the connection's own redirect URI (unset: Berth's callback). */
  readonly redirectUri: string;
  /** The scopes asked for. */
  readonly scope: string;
  /** The service's authorization page for an account (without its query). */
  authorizePage(account: GitAccount): string;
  /** The redirect URI names the connection in its query, under the forge's id field (GitLab's, as the peer). */
  readonly redirectNamesConnection?: boolean;
  /**
   * Where the user starts: Berth's procedure `<id>.authorization` answering the page and the state
   * (GitLab's), or the peer's route `/api/providers/<id>/authorize` redirecting to the page (Gitea's).
   */
  readonly start: 'procedure' | 'route';
}

export interface GitProvider {
  /** The provider type it serves (the provider's id, the workload's `sourceType`): "github", "gitlab"... */
  readonly id: string;
  /** What users call it ("GitHub"), for messages. */
  readonly label: string;
  /** The workload's fields that name what to clone from it; absent, workloads do not deploy from it (it is no source type). */
  readonly sourceFields?: GitSourceFields;
  /** What a connection keeps, for a forge without a record of its own: the plugin then stores and serves its connections (see GitConnectionForm). */
  readonly connection?: GitConnectionForm;
  /** How its webhook deliveries are recognised, read and checked; absent, its deliveries are read as a plain POST (a push of whatever the workload watches). */
  readonly deliveries?: GitDeliveryReader;
  /** Checks the account against the service (the API answers with its credentials) and answers what to store; GitProviderError 'connect' or 'credentials' otherwise. */
  connect(account: GitAccount): Promise<GitAccountUpdate>;
  /** An OAuth flow's code exchanged for the connection's first token pair (a forge declaring `connection.oauth`); answers the fields to store. */
  exchangeCode?(account: GitAccount, code: string, redirectUri: string): Promise<GitAccountUpdate>;
  /** Renews credentials that expire within `marginMs` (OAuth refresh); answers the fields to store, or null when nothing needed renewing. */
  refresh(account: GitAccount, marginMs: number): Promise<GitAccountUpdate | null>;
  /** Every repository the account reaches, all pages read. */
  listRepositories(account: GitAccount): Promise<GitRepository[]>;
  /** Every branch of the repository, all pages read. */
  listBranches(account: GitAccount, repo: GitRepositoryRef): Promise<GitBranch[]>;
  /** The commit a branch, tag or sha names; GitProviderError 'missing' when it names none. */
  resolveCommit(account: GitAccount, repo: GitRepositoryRef, ref: string): Promise<string>;
  /** A credential a clone of the repository uses, made for this one use (short-lived where the service allows it). */
  cloneCredential(account: GitAccount, repo: GitRepositoryRef): Promise<CloneCredential>;
  /** Registers a webhook that the service calls on every push to the repository (and on its pull requests where it can), signed with `secret`. */
  registerWebhook(account: GitAccount, repo: GitRepositoryRef, hook: { url: string; secret: string }): Promise<GitWebhook>;
  /** Removes a webhook registerWebhook made (no error when it is already gone). */
  removeWebhook(account: GitAccount, repo: GitRepositoryRef, hookId: string): Promise<void>;
  /** Adds a comment to a pull (merge) request; answers the comment's id, so that a later call can find it. */
  commentOnPullRequest(account: GitAccount, repo: GitRepositoryRef, number: number, body: string): Promise<{ id: string }>;
  /**
   * Replaces the body of a comment commentOnPullRequest made on the pull (merge) request, found by
   * the id it answered; a GitProviderError (step 'comment') when the service refuses it or the
   * comment is gone. Optional: where a provider has none, callers add a new comment instead.
   */
  updatePullRequestComment?(account: GitAccount, repo: GitRepositoryRef, number: number, commentId: string, body: string): Promise<void>;
  /**
   * Whether a user (as pullRequest names its author: the service's `id`, its `login`) may push to
   * the repository — the service's collaborator permission: true for a write role or above, false
   * for a lesser one or no member; GitProviderError (step 'access') when the service cannot say.
   */
  hasWriteAccess(account: GitAccount, repo: GitRepositoryRef, author: { id: string | null; login: string | null }): Promise<boolean>;
  /** The pull (merge) request `number` of the repository as the service holds it; GitProviderError 'missing' when there is none. */
  pullRequest(account: GitAccount, repo: GitRepositoryRef, number: number): Promise<GitPullRequest>;
}

declare module '../provider.ts' {
  interface ProviderContracts {
    /** `git.<type>`: a git hosting service's API and clone credentials. */
    git: GitProvider;
  }
}
