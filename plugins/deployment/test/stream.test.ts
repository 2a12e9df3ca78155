// GET /api/deployment.logs/stream: the live log as Server-Sent Events.
import t from 'tap';
import { signUpAdmin, otherOrganization, waitFor } from '@berth/core/testing';
import { startServer, enqueue, waitForStatus, logText, follow, gate, unique } from './helpers.ts';

t.test("following a deployment's log", async t => {
  const server = await startServer();
  t.teardown(() => server.destroy());
  const { client, apiKey, token, userId } = await signUpAdmin(server);
  const auth = { 'x-api-key': apiKey };

  t.test('sends what is written, then each new line, then end with the final status', async t => {
    const d = await enqueue(client, unique('live'), { lines: ['first', 'second uses pa55word', 'third', 'fourth'], secret: 'pa55word', stepMs: 150 });
    await waitFor('the first line', () => logText(d.logPath).includes('first'));
    const followed = await follow(server.url, d.deploymentId, auth);
    t.equal(followed.status, 200);
    t.match(followed.contentType, /^text\/event-stream/);
    const lines = followed.events.filter(e => e.event === 'message').map(e => e.data);
    t.same(lines, ['first', 'second uses ******', 'third', 'fourth'], 'every line once, in order, redacted');
    const end = followed.events.at(-1)!;
    t.equal(end.event, 'end');
    t.same(JSON.parse(end.data), { status: 'done', state: 'done', errorMessage: null });
    t.ok(followed.events.filter(e => e.event === 'end').length === 1);
  });

  t.test('a finished deployment: the whole log and end at once; a failed one ends with its error', async t => {
    const d = await enqueue(client, unique('past'), { lines: ['a', 'b'], fail: 'boom' });
    await waitForStatus(client, d.deploymentId, ['error']);
    const followed = await follow(server.url, d.deploymentId, { authorization: `Bearer ${token}` });
    t.equal(followed.status, 200, 'the bearer token works too');
    t.same(followed.events, [
      { event: 'message', data: 'a' },
      { event: 'message', data: 'b' },
      { event: 'message', data: 'boom' },
      { event: 'end', data: JSON.stringify({ status: 'error', state: 'error', errorMessage: 'boom' }) },
    ]);
  });

  t.test('a queued deployment: the stream waits for it to run', async t => {
    const target = unique('wait');
    const held = gate(server);
    const blocker = await enqueue(client, target, { gate: held.file });
    const waiting = await enqueue(client, target, { lines: ['ran later'] });
    const following = follow(server.url, waiting.deploymentId, auth);
    await waitForStatus(client, blocker.deploymentId, ['running']);
    t.equal((await client.get('deployment.one', { deploymentId: waiting.deploymentId })).body.state, 'queued', 'queued while the stream is asked for');
    held.open();
    const followed = await following;
    t.same(
      followed.events.map(e => (e.event === 'end' ? JSON.parse(e.data).status : e.data)),
      ['ran later', 'done'],
    );
    t.equal((await client.get('deployment.one', { deploymentId: blocker.deploymentId })).body.status, 'done');
  });

  t.test('a client that leaves stops its stream; the deployment goes on', async t => {
    // Held at a gate after its first line: the client leaves while the deployment runs.
    const held = gate(server);
    const d = await enqueue(client, unique('leave'), { lines: ['one'], gate: held.file });
    const partial = await follow(server.url, d.deploymentId, auth, events => events.length >= 1);
    t.same(partial.events, [{ event: 'message', data: 'one' }], 'the client left after the first line, before the end');
    t.equal((await client.get('deployment.one', { deploymentId: d.deploymentId })).body.state, 'running');
    held.open();
    t.equal((await waitForStatus(client, d.deploymentId, ['done', 'error'])).status, 'done');
  });

  t.test('no credential: 401; another organization: 404; no deploymentId: 400', async t => {
    const d = await enqueue(client, unique('priv'), { lines: ['secret stuff'] });
    await waitForStatus(client, d.deploymentId, ['done']);
    const anonymous = await follow(server.url, d.deploymentId, {});
    t.equal(anonymous.status, 401);
    t.equal(JSON.parse(anonymous.body).code, 'UNAUTHORIZED');
    const wrongKey = await follow(server.url, d.deploymentId, { 'x-api-key': 'nope' });
    t.equal(wrongKey.status, 401);
    const other = await otherOrganization(server, userId);
    const foreign = await follow(server.url, d.deploymentId, { 'x-api-key': other.client.apiKey! });
    t.equal(foreign.status, 404);
    t.equal(JSON.parse(foreign.body).code, 'NOT_FOUND');
    t.notMatch(foreign.body, 'secret stuff');
    const missing = await fetch(`${server.url}/api/deployment.logs/stream`, { headers: auth });
    t.equal(missing.status, 400);
    t.match(JSON.stringify((await missing.json()).issues), /deploymentId/);
  });
});
