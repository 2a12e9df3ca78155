// The conformance suite every GitProvider's test calls. The test brings the service: its API on
// loopback (answering with the service's own payloads), an account for it, and the repositories
// that API lists, served for real by git http-backend (startGitHttpServer). The suite then asks
// the provider everything the contract promises and checks it against what the service holds,
// down to a real `git ls-remote` with the clone credential.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Test } from 'tap';
import { cloneCredentialEnv } from './clone-credentials.ts';
import { GitProviderError } from './provider-errors.ts';
import type { GitAccount, GitBranch, GitProvider, GitPullRequest, GitRepositoryRef } from './contracts/git-provider.ts';
import type { ProviderDescriptor } from './provider.ts';
import { descriptorConformance } from './testing-conformance.ts';

const run = promisify(execFile);

export interface GitProviderConformanceOptions {
  /** The provider's options in the config (defaults apply). */
  options?: Record<string, unknown>;
  /** An account the loopback service accepts. */
  account: GitAccount;
  /** The same account with a credential the service refuses. */
  refusedAccount: GitAccount;
  /** "owner/name" of every repository the account reaches: more than one page of the service's listing. */
  repositories: string[];
  /** A repository among them whose clone URL the git server serves behind the account's clone credential. */
  repository: GitRepositoryRef;
  /** Its branches as the service holds them: more than one page. */
  branches: GitBranch[];
  /** An open pull request of the repository. */
  pullRequest: number;
  /** That pull request as the service holds it (pullRequest must answer it; a fork's head names the fork). */
  pullRequestHeld: GitPullRequest;
  /** Users of the repository as pullRequest names authors: one with write access, one with a lesser role, and one who is no member. */
  writeAccess: { writer: GitAuthor; reader: GitAuthor; stranger: GitAuthor };
  /** What the service holds now, read on its side: the repository's webhooks (id and URL) and a pull request's comment bodies. */
  service: { webhooks(repo: GitRepositoryRef): { id: string; url: string }[]; comments(repo: GitRepositoryRef, pullRequest: number): string[] };
}

type GitAuthor = { id: string | null; login: string | null };

const failureOf = (e: unknown) => (e instanceof GitProviderError ? e.failure : `not a GitProviderError: ${(e as Error)?.message}`);

/** The shared suite of the git provider contract. */
export function gitProviderConformance(t: Test, descriptor: ProviderDescriptor, o: GitProviderConformanceOptions): void {
  t.test(`git provider ${descriptor.id}: conformance`, async t => {
    const provider = await descriptorConformance<GitProvider>(t, descriptor, 'git', o.options);
    t.ok(typeof provider.label === 'string' && provider.label.length > 0, 'it has a label for messages');
    if (provider.sourceFields) {
      // A source type: the workload fields naming what to clone, each a distinct field name.
      const { path, slug, identity = [], save: _save, ...required } = provider.sourceFields;
      const names = [...Object.values(required), ...(path ? [path] : []), ...(slug ? [slug] : []), ...identity];
      t.same(Object.keys(required).sort(), ['branch', 'buildPath', 'id', 'owner', 'repository'], 'its source fields name the connection, owner, repository, branch and build path');
      t.ok(
        names.every(n => /^[a-z][A-Za-z]*$/.test(n)),
        `each a field name (${names.join(', ')})`,
      );
      t.equal(new Set(names).size, names.length, 'no field serves twice');
    }
    t.ok(o.repositories.length > 1 && o.branches.length > 1, 'the suite is given more than one repository and branch');
    const reader = provider.deliveries;
    if (reader) {
      // Its webhook deliveries: recognised by a header Node names in lower case, read from bodies of
      // any shape without throwing, and a delivery that carries none of its signature headers is
      // left to the push hook (null), not refused here.
      t.match(reader.eventHeader, /^[a-z0-9-]+$/, 'its deliveries are recognised by a header name in lower case');
      t.ok(reader.signatureHeader.length > 0, 'it names the signature header a delivery should carry');
      const odd: Record<string, unknown>[] = [{}, { ref: 42, commits: 'x', pull_request: [], push: null, object_attributes: 7 }, { branch: ['main'], sha: {}, message: 9 }];
      for (const body of odd) {
        const d = reader.read({ [reader.eventHeader]: 'push' }, body);
        t.ok(['push', 'pullRequest', 'ping', 'other'].includes(d.kind), `a body of the wrong shape is read (${JSON.stringify(body)} → ${d.kind})`);
        t.ok(
          [d.branch, d.tag, d.commit, d.message].every(v => v === null || typeof v === 'string'),
          'what it could not read is null',
        );
      }
      t.equal(reader.verify({ [reader.eventHeader]: 'push' }, Buffer.from('{}'), 'a-secret'), null, 'no signature header: left to the push hook');
    }

    t.test('connect: the service accepts the account, and refuses a wrong credential naming the step', async t => {
      const update = await provider.connect(o.account);
      t.type(update.settings, 'object', 'settings to store');
      t.type(update.secrets, 'object', 'secrets to store');
      const refused = await provider.connect(o.refusedAccount).then(() => 'connected', failureOf);
      t.equal(refused, 'credentials', 'a refused credential fails as "credentials"');
      const refreshed = await provider.refresh(o.account, 60_000);
      t.ok(refreshed === null || (typeof refreshed.settings === 'object' && typeof refreshed.secrets === 'object'), 'refresh answers null or the fields to store');
    });

    t.test('lists every repository and every branch, all pages read', async t => {
      const repos = await provider.listRepositories(o.account);
      t.same(repos.map(r => `${r.owner}/${r.name}`).sort(), [...o.repositories].sort(), 'the repositories of every page');
      for (const r of repos) {
        const url = new URL(r.cloneUrl);
        t.ok(!url.username && !url.password, `${r.owner}/${r.name}'s clone URL carries no credential`);
      }
      const branches = await provider.listBranches(o.account, o.repository);
      const byName = (a: GitBranch, b: GitBranch) => a.name.localeCompare(b.name);
      t.same([...branches].sort(byName), [...o.branches].sort(byName), 'the branches of every page, with their commits');
      const refused = await provider.listRepositories(o.refusedAccount).then(() => 'listed', failureOf);
      t.equal(refused, 'credentials', 'a refused credential lists nothing');
    });

    t.test('resolves a branch to its commit, and a missing ref as missing', async t => {
      const branch = o.branches[0]!;
      t.equal(await provider.resolveCommit(o.account, o.repository, branch.name), branch.commit);
      t.equal(await provider.resolveCommit(o.account, o.repository, 'berth-no-such-branch').then(() => 'resolved', failureOf), 'missing');
    });

    t.test('the clone credential lets git read the repository, from the environment alone', async t => {
      const repos = await provider.listRepositories(o.account);
      const repo = repos.find(r => r.owner === o.repository.owner && r.name === o.repository.name);
      if (!repo) return t.fail(`${o.repository.owner}/${o.repository.name} is not listed`);
      const credential = await provider.cloneCredential(o.account, o.repository);
      t.ok(credential.password.length > 0, 'a token');
      t.ok(repo.cloneUrl.startsWith(credential.baseUrl), 'for the host of the clone URL');
      const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
      const { stdout } = await run('git', ['ls-remote', '--heads', '--', repo.cloneUrl], { env: { ...env, ...cloneCredentialEnv(credential) } });
      const heads = Object.fromEntries(
        stdout
          .trim()
          .split('\n')
          .map(l => l.split('\t'))
          .map(([sha, ref]) => [ref!.replace('refs/heads/', ''), sha]),
      );
      for (const b of o.branches) t.equal(heads[b.name], b.commit, `git sees ${b.name} at its commit`);
      await t.rejects(run('git', ['ls-remote', '--heads', '--', repo.cloneUrl], { env }), Error, 'without it the server refuses');
    });

    t.test('registers a push webhook and removes it, twice without error', async t => {
      const url = 'https://berth.example.com/api/deploy/github';
      const hook = await provider.registerWebhook(o.account, o.repository, { url, secret: 'webhook-secret-1' });
      t.type(hook.id, 'string');
      t.same(
        o.service
          .webhooks(o.repository)
          .filter(h => h.id === hook.id)
          .map(h => h.url),
        [url],
        'the service has it',
      );
      await provider.removeWebhook(o.account, o.repository, hook.id);
      t.same(
        o.service.webhooks(o.repository).filter(h => h.id === hook.id),
        [],
        'and no longer after removeWebhook',
      );
      await provider.removeWebhook(o.account, o.repository, hook.id);
    });

    t.test('hasWriteAccess: a writer yes; a lesser role and a stranger no; a refused credential is an error', async t => {
      const users = o.writeAccess;
      t.equal(await provider.hasWriteAccess(o.account, o.repository, users.writer), true, 'the writer');
      t.equal(await provider.hasWriteAccess(o.account, o.repository, users.reader), false, 'a lesser role');
      t.equal(await provider.hasWriteAccess(o.account, o.repository, users.stranger), false, 'no member');
      t.equal(await provider.hasWriteAccess(o.account, o.repository, { id: null, login: null }).then(String, failureOf), 'access', 'no user named: step "access"');
      t.equal(await provider.hasWriteAccess(o.refusedAccount, o.repository, users.writer).then(String, failureOf), 'credentials', 'a refused credential says nothing');
    });

    t.test("pullRequest: the pull request's head, base, state and author as the service holds them; none is missing", async t => {
      t.same(await provider.pullRequest(o.account, o.repository, o.pullRequest), o.pullRequestHeld, 'as the service holds it');
      t.equal(await provider.pullRequest(o.account, o.repository, 987654).then(() => 'found', failureOf), 'missing', 'a number with no pull request: step "missing"');
      t.equal(await provider.pullRequest(o.refusedAccount, o.repository, o.pullRequest).then(() => 'found', failureOf), 'credentials', 'a refused credential says nothing');
    });

    t.test('comments on a pull request, and updates the comment', async t => {
      const body = `Deployed preview ${Date.now()}`;
      const comment = await provider.commentOnPullRequest(o.account, o.repository, o.pullRequest, body);
      t.type(comment.id, 'string');
      t.ok(o.service.comments(o.repository, o.pullRequest).includes(body), 'the service has the comment');
      if (!provider.updatePullRequestComment) return;
      const count = o.service.comments(o.repository, o.pullRequest).length;
      await provider.updatePullRequestComment(o.account, o.repository, o.pullRequest, comment.id, `${body}, updated`);
      const now = o.service.comments(o.repository, o.pullRequest);
      t.ok(now.includes(`${body}, updated`) && !now.includes(body), 'updatePullRequestComment replaced its body');
      t.equal(now.length, count, 'in place: no comment added');
      const gone = await provider.updatePullRequestComment(o.account, o.repository, o.pullRequest, '987654321', 'no such comment').then(() => 'updated', failureOf);
      t.not(gone, 'updated', 'a comment that is not there is an error');
    });
  });
}
