// What a forge's webhook delivery says, read by the forge's own provider: which event it is (a push
// of a branch or a tag, a pull request, a ping, anything else), its delivery id, the pushed ref, its
// head commit and message, the files the pushed commits touched, and for a pull request what its
// event says of it. And whether it is signed with a secret, by the forge's own scheme. The push
// hooks (deploy-hook) and previews read every forge through this; none of them names a vendor.

/** A request's headers as Node gives them (names in lower case). */
export type DeliveryHeaders = Record<string, string | string[] | undefined>;

export interface GitDelivery {
  /** The forge's event name as sent (push, Push Hook, repo:push...). */
  event: string;
  deliveryId: string | null;
  /** push: a branch or tag was pushed; pullRequest: a pull request changed (previews); ping: the forge checks the hook; other: an event that deploys nothing. */
  kind: 'push' | 'pullRequest' | 'ping' | 'other';
  /** The pushed branch or tag name (a pull request's head branch). */
  branch: string | null;
  tag: string | null;
  /** The ref was deleted (nothing to deploy). */
  deleted: boolean;
  commit: string | null;
  message: string | null;
  /** Files the pushed commits added, modified or removed; null when the forge does not say (Bitbucket). */
  paths: string[] | null;
  /** A pull request event: what it says (kind pullRequest only). */
  pullRequest?: PullRequestEvent;
}

/**
 * A pull request opened, updated or closed, as its event says it. Only a signed delivery's event
 * reaches a preview, and the preview still asks the forge's API for the head, base and author.
 */
export interface PullRequestEvent {
  /** opened, reopened, synchronize, closed (every forge's named as GitHub's), else the forge's own (labeled, edited...). */
  action: string;
  /** The forge's id of the pull request and its number in the repository. */
  id: string;
  number: number;
  url: string;
  title: string;
  /** The branch it merges from and its head commit; the branch it merges into. */
  headBranch: string;
  headSha: string | null;
  baseBranch: string;
  /** The base repository (owner/name) and whether the head is in another repository (a fork). */
  repository: string | null;
  fromFork: boolean;
  /** The repository the head branch is in (owner/name, GitLab's whole path): the fork's for a fork, else the base's. */
  headRepository: string | null;
  /** The author as the forge names them: its id (GitLab's user id, Bitbucket's uuid) and login (user name); what a write-access check asks about. */
  author: { id: string | null; login: string | null };
  labels: string[];
}

/** A signature checked: a refusal says why (bad, stale, missing), for the answer and the delivery log. */
export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/**
 * A forge's app (GitHub's App): one webhook for every repository of its installations, signed with
 * the app's webhook secret, which Berth keeps on each connection of the app. Its deliveries reach
 * `POST /api/deploy/<forge>`; each deploys the workloads that deploy its repository through a
 * connection of the installation whose secret signed it.
 */
export interface AppDeliveryReader {
  /** Where a delivery names its installation, for messages ("installation.id"). */
  readonly installationField: string;
  /** The installation a delivery comes from (an app's ping names its app instead); null when it names none. Never throws. */
  origin(body: Record<string, unknown>, delivery: GitDelivery): { installationId: string | null; appId: string | null };
  /** The repository (owner/name) a delivery concerns; null when it names none. Never throws. */
  repository(body: Record<string, unknown>): string | null;
}

/** How a forge's webhook deliveries are recognised, read and checked. */
export interface GitDeliveryReader {
  /** Its app's deliveries, for a forge with apps installed across repositories (GitHub's App). */
  readonly app?: AppDeliveryReader;
  /** The header whose presence marks the forge's deliveries (its event name): "x-github-event". */
  readonly eventHeader: string;
  /**
   * Forges whose headers its deliveries carry too (Gitea sends GitHub's beside its own): when both
   * are present the delivery is this forge's.
   */
  readonly imitates?: readonly string[];
  /** The header(s) a signed delivery carries, for the message when none did ("X-Hub-Signature-256"). */
  readonly signatureHeader: string;
  /** Reads a delivery its eventHeader marked; never throws on a body of the wrong shape (what it cannot read is null, or kind other). */
  read(headers: DeliveryHeaders, body: Record<string, unknown>): GitDelivery;
  /**
   * Checks the delivery's signature (the raw body, the secret) by the forge's scheme, in constant
   * time; null when the delivery carries none of the forge's signature headers.
   */
  verify(headers: DeliveryHeaders, raw: Buffer, secret: string): SignatureCheck | null;
}
