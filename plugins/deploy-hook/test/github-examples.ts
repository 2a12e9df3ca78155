// GitHub's deliveries as @octokit/webhooks-examples has them (the payloads GitHub documents, collected
// by Octokit), filled in with what a test controls: the repository, the App installation, the ref, the
// pushed or head commit. Everything else is the example's own (Codertocat/Hello-World's metadata,
// which Berth ignores). Each call answers a fresh copy.
import { createRequire } from 'node:module';
import type { WebhookDefinition } from '@octokit/webhooks-examples';

// The package's main is its JSON list of definitions (its index.d.ts types it).
const examples: WebhookDefinition[] = createRequire(import.meta.url)('@octokit/webhooks-examples');

type Payload = Record<string, any>;

/** A copy of the first example of `event` that `pick` accepts. */
export function githubExample(event: string, pick: (p: Payload) => boolean = () => true): Payload {
  const found = examples.find(d => d.name === event)?.examples.find(e => pick(e));
  if (!found) throw new Error(`@octokit/webhooks-examples has no such ${event} example`);
  return structuredClone<Payload>(found);
}

/** A repository object of the example, renamed to `fullName` (owner/name). */
function renamed(repo: Payload, fullName: string): Payload {
  const [owner, name] = fullName.split('/');
  return { ...repo, name, full_name: fullName, owner: { ...repo.owner, login: owner, ...('name' in repo.owner ? { name: owner } : {}) } };
}

interface Common {
  /** owner/name; the example's Codertocat/Hello-World when not given. */
  repository?: string;
  /** The GitHub App installation that sent it; the example's (if any) when not given. */
  installationId?: number;
}

/** The repository and installation fields every event has. */
function fill(p: Payload, o: Common): Payload {
  return {
    ...p,
    ...(o.repository ? { repository: renamed(p.repository, o.repository) } : {}),
    ...(o.installationId !== undefined ? { installation: { ...p.installation, id: o.installationId } } : {}),
  };
}

export interface PushFill extends Common {
  /** refs/heads/<branch> or refs/tags/<tag>. */
  ref: string;
  sha: string;
  message?: string;
  /** The files the commit modified. */
  files?: string[];
}

/**
 * A push: of a branch, the example's push to refs/heads/master (one commit); of a tag (a `refs/tags/` ref),
 * the example's creation of refs/tags/simple-tag (no commits, the tagged commit as head_commit, as GitHub
 * sends a tag push).
 */
export function githubPush(o: PushFill): Payload {
  const tag = o.ref.startsWith('refs/tags/');
  const p = githubExample('push', e => e.ref.startsWith(tag ? 'refs/tags/' : 'refs/heads/') && e.head_commit !== null);
  const commit = { ...p.head_commit, id: o.sha, ...(o.message !== undefined ? { message: o.message } : {}), ...(o.files ? { added: [], removed: [], modified: o.files } : {}) };
  return fill({ ...p, ref: o.ref, after: o.sha, head_commit: commit, commits: tag ? [] : [commit] }, o);
}

/** The ping GitHub sends when a repository's webhook is created. */
export function githubPing(o: Common = {}): Payload {
  return fill(
    githubExample('ping', e => e.hook?.type === 'Repository'),
    o,
  );
}

export interface PullRequestFill extends Common {
  /** opened, synchronize, closed, …: the example of that action. */
  action: string;
  number: number;
  /** The head branch and commit. */
  branch: string;
  sha: string;
  /** The base branch; main when not given. */
  base?: string;
  /** The repository the head branch is in (owner/name): a fork's; the base repository when not given. */
  headRepository?: string;
  /** Replace the example's labels. */
  labels?: string[];
}

/** A pull_request event: the example of the action, its number, head and base filled in. */
export function githubPullRequest(o: PullRequestFill): Payload {
  const p = fill(
    githubExample('pull_request', e => e.action === o.action),
    o,
  );
  const pr = p.pull_request;
  const baseRepo = o.repository ? renamed(pr.base.repo, o.repository) : pr.base.repo;
  const headRepo = o.headRepository ? renamed(pr.head.repo, o.headRepository) : baseRepo;
  return {
    ...p,
    number: o.number,
    ...('after' in p ? { after: o.sha } : {}),
    pull_request: {
      ...pr,
      number: o.number,
      head: { ...pr.head, label: `${headRepo.owner.login}:${o.branch}`, ref: o.branch, sha: o.sha, repo: headRepo },
      base: { ...pr.base, label: `${baseRepo.owner.login}:${o.base ?? 'main'}`, ref: o.base ?? 'main', repo: baseRepo },
      ...(o.labels ? { labels: o.labels.map((name, i) => ({ id: i + 1, name, color: 'ededed', default: false })) } : {}),
    },
  };
}
