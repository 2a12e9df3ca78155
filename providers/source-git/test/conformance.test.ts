// The source contract's shared suite, on a real repository made in a temporary directory.
import t from 'tap';
import { makeGitRepo, sourceConformance } from '@berth/core/testing';
import provider from '../src/index.ts';

const repo = await makeGitRepo({ Dockerfile: 'FROM scratch\n', 'web/index.html': 'hi\n' });
t.teardown(repo.cleanup);

sourceConformance(t, provider, {
  valid: [{ name: 'a branch of a repository', fields: { customGitUrl: `file://${repo.dir}`, customGitBranch: 'main', customGitBuildPath: '/web' }, files: ['Dockerfile', 'web/index.html'] }],
  invalid: [
    { name: 'no URL saved', fields: { customGitUrl: null }, message: /^No git URL is set: save one with saveGitProvider$/ },
    {
      name: 'a branch that is an option',
      fields: { customGitUrl: `file://${repo.dir}`, customGitBranch: '--upload-pack=touch' },
      message: /^The branch "--upload-pack=touch" is not a valid branch name/,
    },
  ],
});

t.test('a repository on this host is read only when the host-access policy allows it', async t => {
  const workDir = t.testdir();
  const asked: [string, string][] = [];
  const request = (refuse: boolean) => ({
    fields: { customGitUrl: `file://${repo.dir}`, customGitBranch: 'main' },
    secrets: {},
    workDir,
    signal: new AbortController().signal,
    log: () => {},
    redact: () => {},
    sshKey: async () => null,
    checkLocal: (location: string, field: string) => {
      asked.push([location, field]);
      if (refuse) throw new Error('refused by the policy');
    },
  });
  const source = await provider.create({}, { config: { dataDir: t.testdir() } as never });
  await t.rejects(source.resolve(request(true)), { message: 'refused by the policy' });
  t.same(asked, [[`file://${repo.dir}`, 'customGitUrl']], 'the URL and its field were put to the policy');
  const { readdirSync } = await import('node:fs');
  t.same(readdirSync(workDir), [], 'nothing was cloned');
  await source.resolve(request(false));
  t.ok(readdirSync(workDir).includes('Dockerfile'), 'allowed: cloned');
});
