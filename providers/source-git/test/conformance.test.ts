// The source contract's shared suite, on a real repository made in a temporary directory.
import t from 'tap';
import { makeGitRepo, sourceConformance } from '@berth/core/testing';
import provider from '../src/index.ts';

const repo = await makeGitRepo({ 'Dockerfile': 'FROM scratch\n', 'web/index.html': 'hi\n' });
t.teardown(repo.cleanup);

sourceConformance(t, provider, {
  valid: [
    { name: 'a branch of a repository', fields: { customGitUrl: `file://${repo.dir}`, customGitBranch: 'main', customGitBuildPath: '/web' }, files: ['Dockerfile', 'web/index.html'] },
  ],
  invalid: [
    { name: 'no URL saved', fields: { customGitUrl: null }, message: /^No git URL is set: save one with saveGitProvider$/ },
    { name: 'a branch that is an option', fields: { customGitUrl: `file://${repo.dir}`, customGitBranch: '--upload-pack=touch' }, message: /^The branch "--upload-pack=touch" is not a valid branch name/ },
  ],
});
