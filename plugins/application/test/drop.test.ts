// application.dropDeployment on the real engine: zip archives sent as the peer's clients send them
// (multipart/form-data, the fields as text, on the REST and the tRPC form), built with their
// Dockerfile or as a static site, the container answering; a redeploy building the last archive;
// bad archives refused with a 400 naming zip and nothing changed (the source before kept, nothing
// queued, the running version serving); another organization's application NOT_FOUND as a missing
// one; the archive gone with the application.
import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import {
  startTestServer,
  signUpAdmin,
  otherOrganization,
  deploymentFinished,
  deploymentIdOf,
  freePort,
  waitFor,
  TEST_BASE_IMAGE,
  TEST_STATIC_IMAGE,
  TEST_STATIC_ROOT,
  type Reply,
} from '@berth/core/testing';
import { renamed, zipOf } from '@berth/provider-source-drop/testing';
import { engineApps, served } from './engine-apps.ts';

// Builds and rollouts on the engine take longer than tap's default per-file limit.
t.setTimeout(600_000);

const UPLOAD_LIMIT = 256 * 1024;
const MAX_ENTRIES = 20;
const MAX_UNPACKED = 64 * 1024;

/** A site whose Dockerfile (in app/) serves its index page with busybox httpd on 8080; README.md beside app/ keeps the archive from being one folder. */
const dockerSite = (text: string) =>
  zipOf({
    'README.md': 'an uploaded site',
    'app/': '',
    'app/Dockerfile': `FROM ${TEST_BASE_IMAGE}\nCOPY index.html /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`,
    'app/index.html': text,
  });

t.test('application.dropDeployment', async t => {
  const server = await startTestServer({
    uploadLimit: UPLOAD_LIMIT,
    providers: { source: { drop: { options: { maxEntries: MAX_ENTRIES, maxUnpackedBytes: MAX_UNPACKED } } }, builder: { static: { options: { image: TEST_STATIC_IMAGE, root: TEST_STATIC_ROOT } } } },
  });
  t.teardown(() => server.destroy());
  const { client, userId } = await signUpAdmin(server);
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Drops' });
  const { call, newApp } = engineApps(t, client, environment.environmentId);
  const one = async (applicationId: string) => (await client.get('application.one', { applicationId })).body;
  const upload = (applicationId: string, zip: Buffer, fields: Record<string, unknown> = {}, o: { trpc?: boolean; as?: typeof client } = {}) =>
    (o.as ?? client).upload('application.dropDeployment', { applicationId, ...fields }, { field: 'zip', name: 'site.zip', content: zip }, { trpc: o.trpc ?? false });

  const port = await freePort();
  const web = await newApp('drop-web', port, 8080);
  await call('application.saveBuildType', { applicationId: web.applicationId, buildType: 'dockerfile', dockerfile: 'Dockerfile' });

  t.test('an archive with a Dockerfile is kept as the source, built from dropBuildPath and served; a redeploy builds it again', async t => {
    const reply = await upload(web.applicationId, await dockerSite('drop v1'), { dropBuildPath: 'app' });
    t.equal(reply.status, 200, JSON.stringify(reply.body));
    t.equal(reply.body, true, 'answers true, as the peer does');
    const done = await deploymentFinished(client, deploymentIdOf(reply));
    t.equal(done.status, 'done', done.errorMessage ?? '');
    t.equal(done.title, 'Manual deployment', "the peer's title");
    t.equal((await served(port, /drop v1/)).trim(), 'drop v1');
    const log = (await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body as string;
    t.match(log, /Fetched the archive sha256:[0-9a-f]{12} \(4 entries, \d+ bytes\)/, 'the log names the archive');
    t.match(await one(web.applicationId), { sourceType: 'drop', dropBuildPath: 'app', applicationStatus: 'done' });

    const again = await deploymentFinished(client, deploymentIdOf(await client.post('application.redeploy', { applicationId: web.applicationId })));
    t.equal(again.status, 'done', again.errorMessage ?? '');
    t.equal((await served(port, /drop v1/)).trim(), 'drop v1', 'the redeploy built the last archive');
  });

  t.test('a bad archive is a 400 naming zip, and nothing changes', async t => {
    const before = await one(web.applicationId);
    const big = randomBytes(MAX_UNPACKED).toString('hex');
    const cases: [string, Buffer, RegExp, number?][] = [
      ['a name climbing out (../x)', renamed(await zipOf({ 'zz/evil': 'x', Dockerfile: 'FROM scratch' }), 'zz/evil', '../evil'), /^zip: invalid relative path: \.\.\/evil$/],
      ['an absolute name', renamed(await zipOf({ 'zetc/evil': 'x' }), 'zetc/evil', '/etc/evil'), /^zip: absolute path: \/etc\/evil$/],
      ['a symbolic link', await zipOf({ Dockerfile: 'FROM scratch', link: { content: '/etc/passwd', mode: 0o120777 } }), /^zip: the entry "link" is a symbolic link/],
      ['too many entries', await zipOf(Object.fromEntries(Array.from({ length: MAX_ENTRIES + 1 }, (_, i) => [`f${i}`, 'x']))), /^zip: holds 21 entries, more than the 20/],
      ['too large once inflated', await zipOf({ a: big }), /^zip: declares more than 65536 bytes once inflated/],
      ['not a zip', Buffer.from('just text'), /^zip: not a zip archive/],
      ['larger than uploadLimit', await zipOf({ a: { content: randomBytes(UPLOAD_LIMIT), compress: false } }), /^zip: larger than/, 413],
    ];
    for (const [name, zip, message, status = 400] of cases) {
      const reply = await upload(web.applicationId, zip, { dropBuildPath: 'elsewhere' });
      t.equal(reply.status, status, `${name}: refused`);
      t.match(reply.body.message, message, `${name}: says why (${reply.body.message})`);
      t.same(
        reply.body.issues.map((i: { path: string[] }) => i.path),
        [['zip']],
        `${name}: names the field zip`,
      );
    }
    const after = await one(web.applicationId);
    t.same([after.sourceType, after.dropBuildPath, after.deployments.length], [before.sourceType, before.dropBuildPath, before.deployments.length], 'the source is as it was and nothing was queued');
    t.equal((await served(port, /drop v1/)).trim(), 'drop v1', 'the running version serves still');

    // An application deployed from git keeps its git source.
    const git = (await call('application.create', { name: 'from-git', environmentId: environment.environmentId })) as { applicationId: string };
    await call('application.saveGitProvider', { applicationId: git.applicationId, customGitUrl: 'https://example.com/repo.git', customGitBranch: 'main' });
    t.equal((await upload(git.applicationId, Buffer.from('no zip'))).status, 400);
    t.match(await one(git.applicationId), { sourceType: 'git', customGitUrl: 'https://example.com/repo.git', dropBuildPath: null, deployments: [] }, 'still a git application');

    const json = await client.post('application.dropDeployment', { applicationId: web.applicationId });
    t.equal(json.status, 400, 'no file (a JSON body): refused');
    t.same(json.body.issues[0].path, ['zip']);
  });

  t.test('a good archive whose deployment cannot be queued changes nothing either: the archive before is kept', async t => {
    const kept = path.join(server.dataDir, 'sources', 'drop', 'application', web.applicationId, 'archive.json');
    const archive = readFileSync(kept, 'utf8');
    const before = await one(web.applicationId);
    // While workloads deploy to servers only, queueing this one (on Berth's machine) is refused.
    t.equal((await client.post('settings.updateRemoteServersOnly', { remoteServersOnly: true })).status, 200);
    t.teardown(() => client.post('settings.updateRemoteServersOnly', { remoteServersOnly: false }));
    const reply = await upload(web.applicationId, await dockerSite('drop v2'), { dropBuildPath: 'elsewhere' });
    t.equal(reply.status, 409, JSON.stringify(reply.body));
    t.equal(readFileSync(kept, 'utf8'), archive, 'the archive kept is the one before');
    const after = await one(web.applicationId);
    t.same([after.sourceType, after.dropBuildPath, after.deployments.length], [before.sourceType, before.dropBuildPath, before.deployments.length], 'the record is as it was and nothing was queued');
    t.equal((await client.post('settings.updateRemoteServersOnly', { remoteServersOnly: false })).status, 200);
  });

  t.test('the peer\'s client on the tRPC form: a static site, no dropBuildPath (the archive\'s root, stored as "")', async t => {
    const staticPort = await freePort();
    const site = await newApp('drop-static', staticPort, 80);
    await call('application.saveBuildType', { applicationId: site.applicationId, buildType: 'static', publishDirectory: 'public' });
    // A zipped folder: its one top-level directory is unwrapped, as the peer does.
    const zip = await zipOf({ 'my-site/': '', 'my-site/public/': '', 'my-site/public/index.html': 'static drop' });
    const reply = await upload(site.applicationId, zip, {}, { trpc: true });
    t.equal(reply.status, 200, JSON.stringify(reply.body));
    t.same(reply.body, { result: { data: { json: true } } });
    const done = await deploymentFinished(client, deploymentIdOf(reply));
    t.equal(done.status, 'done', done.errorMessage ?? '');
    t.equal((await served(staticPort, /static drop/)).trim(), 'static drop');
    t.match(await one(site.applicationId), { sourceType: 'drop', dropBuildPath: '' });

    // Removing the application forgets its archive.
    const kept = path.join(server.dataDir, 'sources', 'drop', 'application', site.applicationId);
    t.ok(existsSync(kept), 'the archive is kept under the data directory');
    await call('application.delete', { applicationId: site.applicationId });
    t.notOk(existsSync(kept), 'and goes with the application');
  });

  t.test("another organization's application is not found, as a missing one", async t => {
    const other = await otherOrganization(server, userId);
    const zip = await dockerSite('intruder');
    const foreign: Reply = await upload(web.applicationId, zip, { dropBuildPath: 'app' }, { as: other.client });
    const missing: Reply = await upload('M'.repeat(web.applicationId.length), zip, { dropBuildPath: 'app' }, { as: other.client });
    t.equal(foreign.status, 404);
    t.same(foreign.body, missing.body, 'the same answer as for an id of no application');
    const after = await one(web.applicationId);
    t.equal(after.deployments.filter((d: { status: string }) => d.status === 'queued' || d.status === 'running').length, 0, 'nothing was queued');
    t.equal((await served(port, /drop v1/)).trim(), 'drop v1', 'the archive kept is still the owner’s');
    const redeployed = await deploymentFinished(client, deploymentIdOf(await client.post('application.redeploy', { applicationId: web.applicationId })));
    t.equal(redeployed.status, 'done');
    t.equal((await served(port, /drop v1/)).trim(), 'drop v1', 'a redeploy builds the owner’s archive, not the intruder’s');
  });
});
