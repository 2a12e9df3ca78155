// settings.* about Berth itself through the real kernel: its version under both names; the update
// check with no feed (no update, nothing asked) and with a loopback release feed (a list of
// versions, GitHub's releases answer, a feed that fails); updateServer refused with the upgrade
// steps; who may call each.
import { createServer, type Server } from 'node:http';
import t from 'tap';
import { addMember, otherOrganization, signUpAdmin, startTestServer } from '@berth/core/testing';
import { berthVersion, compareReleases, releaseOf } from '@berth/plugin-platform';

/** A loopback release feed whose answer the test sets; counts the requests it received. */
async function feed(): Promise<{ url: string; answer: { status: number; body: string }; hits: number; close(): Promise<void> }> {
  const state = { answer: { status: 200, body: '[]' }, hits: 0 };
  const server: Server = createServer((_req, res) => {
    state.hits++;
    res.writeHead(state.answer.status, { 'content-type': 'application/json' }).end(state.answer.body);
  });
  await new Promise<void>(r => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return Object.assign(state, { url: `http://127.0.0.1:${port}/releases`, close: () => new Promise<void>(r => server.close(() => r())) });
}

t.test('versions compare by their numbers; pre-releases are not releases', async t => {
  t.same(releaseOf('v1.2.3'), [1, 2, 3]);
  t.equal(releaseOf('1.3.0-rc.1'), null);
  t.ok(compareReleases([0, 10, 0], [0, 9, 9]) > 0, '0.10.0 is newer than 0.9.9');
  t.equal(compareReleases([1, 0, 0], [1, 0, 0]), 0);
});

t.test('without a release feed', async t => {
  const server = await startTestServer({ proxy: 'none' });
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server);
  const c = admin.client;
  const version = berthVersion();
  t.match(version, /^\d+\.\d+\.\d+/);

  t.equal((await c.get('settings.getPlatformVersion')).body, version, "getPlatformVersion answers Berth's version");
  t.equal((await c.get('settings.getDokployVersion')).body, version, 'so does the peer’s getDokployVersion');
  for (const op of ['settings.checkAndUpdateImage', 'settings.getUpdateData']) {
    const r = await c.post(op, {});
    t.equal(r.status, 200, op);
    t.same(r.body, { latestVersion: version, updateAvailable: false, currentVersion: version, message: r.body.message }, `${op}: no update, the running version`);
    t.match(r.body.message, /No release feed is configured \(releaseFeedUrl/);
  }
  const refused = await c.post('settings.updateServer', {});
  t.equal(refused.status, 409, 'updateServer is refused');
  t.equal(refused.body.code, 'CONFLICT');
  t.match(refused.body.message, /stop it, bring its directory to the new release .*bash scripts\/start\.sh/, 'with the upgrade steps');

  const notStarted = await c.post('settings.reloadServer', {});
  t.equal(notStarted.status, 409, 'reloadServer needs the operator command (test/reload-server.test.ts runs it)');
  t.match(notStarted.body.message, /not started by `berth start`/);

  const member = await addMember(server, c, 'member@example.com', 'member');
  t.equal((await member.client.get('settings.getDokployVersion')).status, 200, 'a member reads the version');
  t.equal((await member.client.post('settings.getUpdateData', {})).status, 200, 'and the update data, as the peer lets every signed-in user');
  t.equal((await member.client.post('settings.checkAndUpdateImage', {})).status, 403, 'checkAndUpdateImage is for admins');
  t.equal((await member.client.post('settings.updateServer', {})).status, 403, 'so is updateServer');
  t.equal((await member.client.post('settings.reloadServer', {})).status, 403, 'and reloadServer');
  const otherOwner = await otherOrganization(server, member.userId);
  const notInstanceOwner = await otherOwner.client.post('settings.reloadServer', {});
  t.equal(notInstanceOwner.status, 403, "another organization's owner may not restart the instance");
  t.match(notInstanceOwner.body.message, /only the instance's operators/);
});

t.test('with a loopback release feed', async t => {
  const releases = await feed();
  t.teardown(() => releases.close());
  const server = await startTestServer({ proxy: 'none', releaseFeedUrl: releases.url });
  t.teardown(() => server.destroy());
  const { client: c } = await signUpAdmin(server);
  const version = berthVersion();
  const [major, minor, patch] = releaseOf(version)!;

  releases.answer = { status: 200, body: JSON.stringify(['0.0.1', `v${major}.${minor + 1}.0`, `${major}.${minor}.${patch}`, `${major + 1}.0.0-rc.1`, 'nightly']) };
  let r = await c.post('settings.getUpdateData', {});
  t.same(r.body, { latestVersion: `v${major}.${minor + 1}.0`, updateAvailable: true, currentVersion: version, message: r.body.message }, 'the newest release listed is newer: an update');
  t.match(r.body.message, /newer than the running/);
  t.equal(releases.hits, 1, 'the feed was asked');

  releases.answer = {
    status: 200,
    body: JSON.stringify([
      { tag_name: `v${major + 1}.0.0`, draft: true, prerelease: false },
      { tag_name: `v${major}.${minor}.${patch + 1}`, draft: false, prerelease: true },
      { tag_name: `v${major}.${minor}.${patch}`, draft: false, prerelease: false },
    ]),
  };
  r = await c.post('settings.checkAndUpdateImage', {});
  t.same(
    r.body,
    { latestVersion: `v${major}.${minor}.${patch}`, updateAvailable: false, currentVersion: version, message: r.body.message },
    "GitHub's releases answer: drafts and pre-releases skipped, the running one is the newest",
  );

  releases.answer = { status: 503, body: 'down' };
  r = await c.post('settings.getUpdateData', {});
  t.equal(r.status, 200, 'a feed that fails is no error of the call');
  t.same(r.body, { latestVersion: null, updateAvailable: false, currentVersion: version, message: r.body.message });
  t.match(r.body.message, /could not be read: it answered HTTP 503/);

  releases.answer = { status: 200, body: '{"not":"a list"}' };
  t.match((await c.post('settings.getUpdateData', {})).body, { updateAvailable: false, message: /not answer a JSON array/ });
});

t.test('a release feed that is not an http(s) URL stops the start, naming the key', async t => {
  await t.rejects(startTestServer({ releaseFeedUrl: 'ftp://example.com/feed' }), /releaseFeedUrl/);
});
