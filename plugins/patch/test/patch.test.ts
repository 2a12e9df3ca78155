// patch.* through the real kernel, a real PostgreSQL database, real git repositories and, for the
// deploy, the real Docker engine in swarm mode: patches stored per workload, the checkout they are
// read and edited on, paths held inside the repository, another organization refused, and a
// deploy that serves the patched files — or fails naming the file of a patch that cannot apply,
// the previous version still serving.
import t from 'tap';
import { existsSync, symlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startTestServer, signUpAdmin, addMember, otherOrganization, makeGitRepo, commitFiles, freePort, runFinished, waitFor, TEST_BASE_IMAGE, type Client } from '@berth/core/testing';

const PATCH_FIELDS = ['applicationId', 'composeId', 'content', 'createdAt', 'enabled', 'filePath', 'patchId', 'type', 'updatedAt'];
const issueFields = (body: { issues?: { path: (string | number)[] }[] }) => (body.issues ?? []).map(i => String(i.path[0]));

async function must(reply: Promise<{ status: number; body: any }>, what: string) {
  const r = await reply;
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** [status, body] of GET `at` on the port, or undefined while nothing answers. */
async function get(port: number, at = '/'): Promise<[number, string] | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${at}`, { signal: AbortSignal.timeout(2000) });
    return [res.status, await res.text()];
  } catch {
    return undefined;
  }
}

// A deploy builds and rolls out on the engine.
t.setTimeout(600_000);

t.test('patch.*', async t => {
  // The test repositories are on this host: the operator grants that, to the instance owner (the admin below).
  const server = await startTestServer({ proxy: 'none', hostAccess: { bindMountRoots: [], hostNetworks: false, localGit: true } });
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server);
  const c = admin.client;
  const { environment } = await must(c.post('project.create', { name: 'patched' }), 'project.create');
  const environmentId = environment.environmentId as string;
  const newApp = async (name: string) => must(c.post('application.create', { name, environmentId }), 'application.create') as Promise<{ applicationId: string; appName: string }>;
  const stranger = await addMember(server, c, 'stranger@example.com');
  const other = (await otherOrganization(server, stranger.userId)).client;
  t.equal((await c.post('user.remove', { userId: stranger.userId })).status, 200, "the other organization's owner is no member of this one");

  t.test('patches of a workload: create, one, byEntityId, update, toggleEnabled, delete', async t => {
    const app = await newApp('records');
    const stack = await must(c.post('compose.create', { name: 'records', environmentId, composeFile: 'services:\n  web:\n    image: berth-test/busybox:1\n' }), 'compose.create');

    const none = await c.post('patch.create', { filePath: 'a.txt', content: 'x' });
    t.equal(none.status, 400, 'a patch belongs to a workload');
    t.match(none.body.message, /^Either (applicationId or composeId|composeId or applicationId) must be provided$/);
    const both = await c.post('patch.create', { filePath: 'a.txt', content: 'x', applicationId: app.applicationId, composeId: stack.composeId });
    t.equal(both.status, 400, 'to one workload');
    t.ok(['applicationId', 'composeId'].includes(issueFields(both.body)[0]!), 'the refusal names one of its fields');
    t.match(both.body.issues[0].message, /not both/);

    const created = await c.post('patch.create', { filePath: 'src/config.json', content: '{"secret":"patch-secret-1"}', applicationId: app.applicationId });
    t.equal(created.status, 200);
    t.same(Object.keys(created.body).sort(), PATCH_FIELDS, "the peer's patch row, nothing more");
    t.match(created.body, { type: 'update', filePath: 'src/config.json', enabled: true, content: '{"secret":"patch-secret-1"}', applicationId: app.applicationId, composeId: null, updatedAt: null });
    t.ok(!Number.isNaN(Date.parse(created.body.createdAt)), 'createdAt is an ISO date');
    const { patchId } = created.body;
    const db = new pg.Client(server.database);
    await db.connect();
    t.teardown(() => db.end());
    const stored = await db.query('select content from patches where patch_id = $1', [patchId]);
    t.notMatch(stored.rows[0].content, /patch-secret-1/, 'the content is sealed at rest');

    t.equal((await c.post('patch.create', { filePath: 'src/config.json', content: 'y', applicationId: app.applicationId })).status, 409, 'one patch per file of a workload');
    const onStack = await must(c.post('patch.create', { filePath: 'src/config.json', content: 'z', type: 'create', composeId: stack.composeId }), 'patch.create on the stack');
    t.match(onStack, { composeId: stack.composeId, applicationId: null, type: 'create' }, "the same file in another workload is that workload's");
    await must(c.post('patch.create', { filePath: 'Dockerfile', content: '', type: 'delete', applicationId: app.applicationId, enabled: false }), 'patch.create delete');

    t.same((await c.get('patch.one', { patchId })).body, created.body, 'one answers it as created');
    const listed = await must(c.get('patch.byEntityId', { id: app.applicationId, type: 'application' }), 'byEntityId');
    t.same(
      listed.map((p: { filePath: string }) => p.filePath),
      ['Dockerfile', 'src/config.json'],
      "byEntityId lists the workload's patches in the order a deploy applies them",
    );
    t.same((await c.trpc('query', 'patch.byEntityId', { id: stack.composeId, type: 'compose' })).body.result.data.json.length, 1, 'and the tRPC form answers the same');

    const updated = await must(c.post('patch.update', { patchId, content: 'changed', createdAt: '2000-01-01T00:00:00.000Z', updatedAt: null }), 'patch.update');
    t.match(updated, { content: 'changed\n', createdAt: created.body.createdAt }, "an update ends the content with a newline (as the peer's) and keeps createdAt");
    t.ok(updated.updatedAt, 'and sets updatedAt');
    t.equal((await c.post('patch.update', { patchId, filePath: 'Dockerfile' })).status, 409, 'a patch cannot take a file another patch has');
    t.match(await must(c.post('patch.update', { patchId, filePath: 'src/settings.json', type: 'create' }), 'patch.update path'), { filePath: 'src/settings.json', type: 'create' });
    t.match(await must(c.post('patch.toggleEnabled', { patchId, enabled: false }), 'toggleEnabled'), { enabled: false });

    const removed = await must(c.post('patch.delete', { patchId }), 'patch.delete');
    t.match(removed, { patchId, filePath: 'src/settings.json' }, 'delete answers the patch as it was');
    t.equal((await c.get('patch.one', { patchId })).status, 404);
    t.equal((await c.post('patch.delete', { patchId })).status, 404, 'a deleted patch cannot be deleted again');

    // A workload's patches go with it.
    const left = listed.find((p: { filePath: string }) => p.filePath === 'Dockerfile').patchId;
    await must(c.post('application.delete', { applicationId: app.applicationId }), 'application.delete');
    t.equal((await c.get('patch.one', { patchId: left })).status, 404, "a deleted workload's patches are gone");
    await must(c.post('compose.delete', { composeId: stack.composeId, deleteVolumes: false }), 'compose.delete');
    t.equal((await c.get('patch.one', { patchId: onStack.patchId })).status, 404);
  });

  t.test('paths stay inside the repository', async t => {
    const app = await newApp('paths');
    for (const filePath of ['../outside.txt', 'a/../../outside.txt', '/etc/passwd', './a.txt', 'a//b', '.git/config', 'sub/.git/hooks/pre-commit', 'a/..', 'tab\there', `${'n'.repeat(256)}.txt`]) {
      const r = await c.post('patch.create', { filePath, content: 'x', applicationId: app.applicationId });
      t.equal(r.status, 400, `${JSON.stringify(filePath)} is refused`);
      t.same(issueFields(r.body), ['filePath']);
      t.same(issueFields((await c.post('patch.saveFileAsPatch', { id: app.applicationId, type: 'application', filePath, content: 'x' })).body), ['filePath'], 'by saveFileAsPatch too');
    }
    const made = await must(c.post('patch.create', { filePath: 'ok.txt', content: 'x', applicationId: app.applicationId }), 'patch.create');
    t.same(issueFields((await c.post('patch.update', { patchId: made.patchId, filePath: '../ok.txt' })).body), ['filePath'], 'and by update');
    t.same(issueFields((await c.post('patch.create', { filePath: 'x'.repeat(4097), content: 'x', applicationId: app.applicationId })).body), ['filePath'], 'a path has a length limit');
  });

  t.test('the checkout: ensureRepo, readRepoDirectories, readRepoFile, saveFileAsPatch, markFileForDeletion, cleanPatchRepos', async t => {
    const repo = await makeGitRepo({ 'index.html': 'original\n', 'extra.txt': 'extra\n', 'src/app.js': 'console.log(1)\n', 'src/lib/util.js': 'util\n', 'a.txt': 'a\n' });
    t.teardown(() => repo.cleanup());
    // Links a repository may hold: out of it (to read or write this machine's files) and inside it.
    symlinkSync('/etc', path.join(repo.dir, 'escape'));
    symlinkSync('/etc/hostname', path.join(repo.dir, 'hostname-link'));
    symlinkSync('src', path.join(repo.dir, 'inner'));
    await commitFiles(repo.dir, {}, 'links');
    const app = await newApp('checkout');
    await must(c.post('application.saveGitProvider', { applicationId: app.applicationId, customGitUrl: `file://${repo.dir}`, customGitBranch: 'main', customGitBuildPath: '/' }), 'saveGitProvider');
    const entity = { id: app.applicationId, type: 'application' };

    t.equal((await c.get('patch.readRepoDirectories', { ...entity, repoPath: '/nowhere' })).status, 404, 'nothing to read before ensureRepo');
    const repoPath = await must(c.post('patch.ensureRepo', entity), 'ensureRepo');
    t.type(repoPath, 'string');
    t.ok(existsSync(path.join(repoPath, 'index.html')), "the checkout is the workload's repository");
    t.ok(repoPath.startsWith(path.join(server.dataDir, 'patch-repos') + path.sep), "kept under Berth's data directory");

    const tree = await must(c.get('patch.readRepoDirectories', { ...entity, repoPath }), 'readRepoDirectories');
    t.same(
      tree.map((e: { path: string; type: string }) => `${e.type} ${e.path}`),
      ['file a.txt', 'file escape', 'file extra.txt', 'file hostname-link', 'file index.html', 'file inner', 'directory src'],
      "the repository's files in git's order: .git left out, links listed as files and not followed",
    );
    t.same(
      tree.find((e: { path: string }) => e.path === 'src'),
      {
        name: 'src',
        path: 'src',
        type: 'directory',
        children: [
          { name: 'app.js', path: 'src/app.js', type: 'file' },
          { name: 'lib', path: 'src/lib', type: 'directory', children: [{ name: 'util.js', path: 'src/lib/util.js', type: 'file' }] },
        ],
      },
    );
    for (const repoPathGiven of ['/etc', `${repoPath}/..`, '.', 'src']) {
      const r = await c.get('patch.readRepoDirectories', { ...entity, repoPath: repoPathGiven });
      t.same(issueFields(r.body), ['repoPath'], `repoPath ${repoPathGiven} is not the checkout: refused`);
    }

    t.equal(await must(c.get('patch.readRepoFile', { ...entity, filePath: 'index.html' }), 'readRepoFile'), 'original\n');
    t.equal(await must(c.get('patch.readRepoFile', { ...entity, filePath: 'inner/app.js' }), 'through a link inside'), 'console.log(1)\n', 'a link inside the repository is followed');
    for (const filePath of ['escape/hostname', 'hostname-link']) {
      const r = await c.get('patch.readRepoFile', { ...entity, filePath });
      t.equal(r.status, 400, `${filePath}: a link out of the repository is not followed`);
      t.match(r.body.message, /symbolic link that leaves the repository/);
    }
    for (const filePath of ['../../../../etc/hostname', '/etc/hostname']) t.same(issueFields((await c.get('patch.readRepoFile', { ...entity, filePath })).body), ['filePath']);
    t.equal((await c.get('patch.readRepoFile', { ...entity, filePath: 'missing.txt' })).status, 404);
    t.equal((await c.get('patch.readRepoFile', { ...entity, filePath: 'src' })).status, 400, 'a directory is no file');

    const saved = await must(c.post('patch.saveFileAsPatch', { ...entity, filePath: 'index.html', content: 'edited' }), 'saveFileAsPatch');
    t.match(saved, { filePath: 'index.html', type: 'update', content: 'edited', applicationId: app.applicationId, enabled: true });
    t.equal(await must(c.get('patch.readRepoFile', { ...entity, filePath: 'index.html' }), 'readRepoFile patched'), 'edited', "readRepoFile answers the patch's content");
    const again = await must(c.post('patch.saveFileAsPatch', { ...entity, filePath: 'index.html', content: 'edited twice', patchType: 'create' }), 'saveFileAsPatch again');
    t.match(again, { patchId: saved.patchId, content: 'edited twice\n', type: 'create' }, 'saving the file again changes its patch');
    const marked = await must(c.post('patch.markFileForDeletion', { ...entity, filePath: 'extra.txt' }), 'markFileForDeletion');
    t.match(marked, { filePath: 'extra.txt', type: 'delete', content: '' });
    t.equal(await must(c.get('patch.readRepoFile', { ...entity, filePath: 'extra.txt' }), 'readRepoFile deleted'), 'extra\n', 'a file to delete reads as the checkout holds it');
    const remarked = await must(c.post('patch.markFileForDeletion', { ...entity, filePath: 'index.html' }), 'markFileForDeletion of a patched file');
    t.match(remarked, { patchId: saved.patchId, type: 'delete', content: '' }, "a file's patch becomes its delete");

    // Another organization reaches none of it.
    for (const [op, input] of [
      ['patch.ensureRepo', entity],
      ['patch.byEntityId', entity],
      ['patch.readRepoDirectories', { ...entity, repoPath }],
      ['patch.readRepoFile', { ...entity, filePath: 'index.html' }],
      ['patch.saveFileAsPatch', { ...entity, filePath: 'index.html', content: 'theirs' }],
      ['patch.markFileForDeletion', { ...entity, filePath: 'a.txt' }],
      ['patch.create', { filePath: 'b.txt', content: 'theirs', applicationId: app.applicationId }],
      ['patch.one', { patchId: saved.patchId }],
      ['patch.update', { patchId: saved.patchId, content: 'theirs' }],
      ['patch.toggleEnabled', { patchId: saved.patchId, enabled: false }],
      ['patch.delete', { patchId: saved.patchId }],
    ] as const) {
      const r = op === 'patch.byEntityId' || op.startsWith('patch.read') || op === 'patch.one' ? await other.get(op, input) : await other.post(op, input);
      t.equal(r.status, 404, `${op} of another organization's workload or patch: not found`);
    }
    t.equal((await other.post('patch.cleanPatchRepos', {})).status, 200, 'the other organization cleans its own checkouts');
    t.ok(existsSync(repoPath), 'not this one');
    t.match(await must(c.get('patch.one', { patchId: saved.patchId }), 'patch.one'), { type: 'delete', enabled: true }, 'and this patch is as it was');

    const member = await addMember(server, c, 'member@example.com');
    const asMember = member.client as Client;
    t.equal((await asMember.post('patch.cleanPatchRepos', {})).status, 403, 'cleaning the checkouts is for admins');
    t.equal(await must(c.post('patch.cleanPatchRepos', {}), 'cleanPatchRepos'), true);
    t.notOk(existsSync(repoPath), "the organization's checkouts are removed");
    t.equal((await c.get('patch.readRepoDirectories', { ...entity, repoPath })).status, 404, 'until ensureRepo fetches it again');
    t.equal((await c.get('patch.one', { patchId: saved.patchId })).status, 200, 'its patches stay');

    const raw = await must(c.post('compose.create', { name: 'raw', environmentId, composeFile: 'services:\n  web:\n    image: berth-test/busybox:1\n' }), 'compose.create');
    const refused = await c.post('patch.ensureRepo', { id: raw.composeId, type: 'compose' });
    t.equal(refused.status, 400, 'a stored compose file has no repository to patch');
    t.match(refused.body.message, /no repository to patch/);

    const stackRepo = await makeGitRepo({ 'deploy/stack.yml': 'services:\n  web:\n    image: berth-test/busybox:1\n' });
    t.teardown(() => stackRepo.cleanup());
    await must(c.post('compose.update', { composeId: raw.composeId, sourceType: 'git', customGitUrl: stackRepo.dir, customGitBranch: 'main', composePath: './deploy/stack.yml' }), 'compose.update');
    const stackPath = await must(c.post('patch.ensureRepo', { id: raw.composeId, type: 'compose' }), 'ensureRepo of a stack');
    t.same(
      (await must(c.get('patch.readRepoDirectories', { id: raw.composeId, type: 'compose', repoPath: stackPath }), 'readRepoDirectories of a stack')).map((e: { path: string }) => e.path),
      ['deploy'],
      "a compose stack's repository is checked out the same way",
    );
    await must(c.post('compose.delete', { composeId: raw.composeId, deleteVolumes: false }), 'compose.delete');
    t.notOk(existsSync(stackPath), "a deleted workload's checkout goes with it");

    const broken = await newApp('unreachable');
    await must(c.post('application.saveGitProvider', { applicationId: broken.applicationId, customGitUrl: `file://${repo.dir}-missing`, customGitBranch: 'main' }), 'saveGitProvider');
    const failed = await c.post('patch.ensureRepo', { id: broken.applicationId, type: 'application' });
    t.equal(failed.status, 400, 'a repository that cannot be fetched: 400 with why');
    t.match(failed.body.message, /could not be fetched/);
  });

  t.test('a deploy applies the enabled patches in order before the build; one that cannot apply fails it naming the file', async t => {
    const port = await freePort();
    // busybox httpd serves the checkout as it is built: what the patches made of it.
    const repo = await makeGitRepo({ Dockerfile: `FROM ${TEST_BASE_IMAGE}\nCOPY . /www\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`, 'index.html': 'original\n', 'extra.txt': 'extra\n' });
    t.teardown(() => repo.cleanup());
    symlinkSync(os.tmpdir(), path.join(repo.dir, 'tmp-link'));
    await commitFiles(repo.dir, {}, 'a link out of the repository');
    const app = await newApp('served');
    t.teardown(async () => void (await c.post('application.delete', { applicationId: app.applicationId })));
    // busybox httpd as PID 1 ignores SIGTERM: give old tasks 1 s, not the default 10 s, to stop.
    await must(c.post('application.update', { applicationId: app.applicationId, stopGracePeriodSwarm: 1_000_000_000 }), 'application.update');
    await must(c.post('port.create', { applicationId: app.applicationId, publishedPort: port, targetPort: 8080, publishMode: 'host', protocol: 'tcp' }), 'port.create');
    await must(c.post('application.saveGitProvider', { applicationId: app.applicationId, customGitUrl: `file://${repo.dir}`, customGitBranch: 'main', customGitBuildPath: '/' }), 'saveGitProvider');
    await must(c.post('application.saveBuildType', { applicationId: app.applicationId, buildType: 'dockerfile', dockerfile: 'Dockerfile' }), 'saveBuildType');
    const patch = (filePath: string, content: string, type: string, enabled = true) =>
      must(c.post('patch.create', { filePath, content, type, enabled, applicationId: app.applicationId }), `patch ${filePath}`);
    await patch('index.html', 'patched by Berth\n', 'update');
    await patch('docs/new.txt', 'a new file\n', 'create');
    await patch('extra.txt', '', 'delete');
    await patch('Dockerfile', 'FROM nothing-that-builds\n', 'update', false);

    const done = await runFinished(c, 'application.deploy', { applicationId: app.applicationId });
    t.equal(done.status, 'done', done.errorMessage ?? '');
    const served = (at: string, expect: (r: [number, string]) => boolean) =>
      waitFor(
        `port ${port} at ${at}`,
        async () => {
          const r = await get(port, at);
          return r && expect(r) ? r : undefined;
        },
        { timeout: 30_000, interval: 200 },
      );
    t.same(await served('/', r => r[0] === 200), [200, 'patched by Berth\n'], 'the patched file is served');
    t.same(await served('/docs/new.txt', r => r[0] === 200), [200, 'a new file\n'], 'the created file is served');
    t.equal((await served('/extra.txt', r => r[0] !== 200))[0], 404, 'the deleted file is gone');
    const log = (await c.get('deployment.readLogs', { deploymentId: done.deploymentId })).body as string;
    t.match(log, /Applying 3 file patch\(es\)/, 'the disabled patch is left out');
    t.match(log, /Patched docs\/new\.txt \(create\): created/);
    t.notMatch(log, /patched by Berth/, "a patch's content never reaches the log");

    // A patch through a file, and one through a link out of the repository: each fails the deploy naming its file.
    const blocked = await patch('index.html/inside.txt', 'x', 'create');
    const failed = await runFinished(c, 'application.deploy', { applicationId: app.applicationId });
    t.equal(failed.status, 'error');
    t.match(failed.errorMessage, /The patch of index\.html\/inside\.txt \(create\) could not be applied: index\.html is a file, not a directory/);
    t.equal((await c.get('application.one', { applicationId: app.applicationId })).body.applicationStatus, 'error');
    t.same(await get(port, '/'), [200, 'patched by Berth\n'], 'the previous version keeps serving');
    await must(c.post('patch.toggleEnabled', { patchId: blocked.patchId, enabled: false }), 'toggleEnabled');

    const marker = `berth-patch-escape-${Date.now()}`;
    await patch(`tmp-link/${marker}`, 'x', 'create');
    const escaped = await runFinished(c, 'application.deploy', { applicationId: app.applicationId });
    t.equal(escaped.status, 'error');
    t.match(escaped.errorMessage, new RegExp(`The patch of tmp-link/${marker} \\(create\\) could not be applied: tmp-link is a symbolic link that leaves the repository`));
    t.notOk(existsSync(path.join(os.tmpdir(), marker)), 'nothing was written outside the checkout');
    t.same(await get(port, '/'), [200, 'patched by Berth\n'], 'the previous version keeps serving');
  });
});

t.test('a workload that is gone takes its checkout; cleanPatchRepos with a server takes only its workloads', async t => {
  const server = await startTestServer({ jobs: false, proxy: 'none', hostAccess: { bindMountRoots: [], hostNetworks: false, localGit: true } });
  t.teardown(() => server.destroy());
  const { client: c } = await signUpAdmin(server);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'berth-patch-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const repo = await makeGitRepo({ 'a.txt': 'a\n' });
  t.teardown(() => repo.cleanup());
  const { environment } = await must(c.post('project.create', { name: 'clean' }), 'project.create');
  const app = await must(c.post('application.create', { name: 'here', environmentId: environment.environmentId }), 'application.create');
  await must(c.post('application.saveGitProvider', { applicationId: app.applicationId, customGitUrl: repo.dir, customGitBranch: 'main' }), 'saveGitProvider');
  const repoPath = await must(c.post('patch.ensureRepo', { id: app.applicationId, type: 'application' }), 'ensureRepo');
  // A server without a key: nothing connects to it.
  const srv = await must(c.post('server.create', { name: 'far', ipAddress: '192.0.2.10', port: 22, sshKeyId: null }), 'server.create');
  t.equal(await must(c.post('patch.cleanPatchRepos', { serverId: srv.serverId }), 'cleanPatchRepos of a server'), true);
  t.ok(existsSync(repoPath), "a workload of this machine keeps its checkout when a server's are cleaned");
  t.equal((await c.post('patch.cleanPatchRepos', { serverId: 'no-such-server' })).status, 404, 'a server of no organization of the caller is not found');
  t.equal(await must(c.post('patch.ensureRepo', { id: app.applicationId, type: 'application' }), 'ensureRepo again'), repoPath, 'ensureRepo fetches into the same path');
  await must(c.post('application.delete', { applicationId: app.applicationId }), 'application.delete');
  t.notOk(existsSync(repoPath), "the deleted workload's checkout is gone");
});
