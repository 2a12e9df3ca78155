// No window between a change and its deliveries: the bus's durable emit stores them with the
// emitter's EntityManager, so they commit (or roll back) with the change. Checked on the bus itself
// (inside a transaction nothing is visible from outside, a rollback leaves nothing, a commit leaves
// them and they go out), and on a real deploy: sampled many times while it runs, the application's
// status and the count of its appDeploy deliveries are read in one statement, and `done` is never
// seen without the delivery. (test/notification-restart.test.ts kills the process after such a
// commit: the delivery goes out after the restart.)
import t from 'tap';
import { deploymentFinished, deploymentIdOf, removeServiceAndVolume, signUpAdmin, startHttpSink, startTestServer, waitFor, TEST_BASE_IMAGE } from '@berth/core/testing';

t.setTimeout(240_000);

const sink = await startHttpSink(t);
const server = await startTestServer({ proxy: 'none', deploySettleSeconds: 0 });
t.teardown(() => server.destroy());
const { client: c, organizationId } = await signUpAdmin(server);
const cradle = server.kernel.container.cradle as any;
const sql = async <T>(query: string, params: unknown[] = []): Promise<T[]> => cradle.orm.em.fork().getConnection().execute(query, params);

const allOff = { appDeploy: false, appBuildError: false, databaseBackup: false, dokployRestart: false, dockerCleanup: false };
const channel = await c.post('notification.createCustom', { name: 'deploys', ...allOff, appDeploy: true, endpoint: `${sink.url}/in` });
t.equal(channel.status, 200, JSON.stringify(channel.body));
const { notificationId } = channel.body;
const deliveriesOf = async (marker: string) =>
  Number((await sql<{ n: string }>(`select count(*) as n from notification_deliveries where notification_id = ? and message::text like ?`, [notificationId, `%${marker}%`]))[0]!.n);
const payload = (appName: string) => ({ applicationId: 'a', organizationId, appName, deploymentId: 'd', image: 'img:1', action: 'deploy', at: new Date().toISOString() });

t.test("the deliveries are part of the emitter's transaction", async t => {
  const rolledBack = await cradle.orm.em
    .fork()
    .transactional(async (tx: any) => {
      await cradle.events.emitDurable('appDeploy', payload('mk-rolled-back'), tx);
      t.equal(await deliveriesOf('mk-rolled-back'), 0, 'not visible outside before the commit');
      throw new Error('the change failed');
    })
    .catch((e: Error) => e.message);
  t.equal(rolledBack, 'the change failed');
  t.equal(await deliveriesOf('mk-rolled-back'), 0, 'a rollback leaves no delivery');

  await cradle.orm.em.fork().transactional(async (tx: any) => {
    await cradle.events.emitDurable('appDeploy', payload('mk-committed'), tx);
    t.equal(await deliveriesOf('mk-committed'), 0, 'not visible outside before the commit');
  });
  t.equal(await deliveriesOf('mk-committed'), 1, "stored when the emitter's transaction returns, nothing to wait for");
  await waitFor('the committed delivery sent', () => sink.requests.some(r => r.body.includes('mk-committed')));
  t.notOk(
    sink.requests.some(r => r.body.includes('mk-rolled-back')),
    'the rolled-back one was never sent',
  );

  await cradle.events.emitDurable('appDeploy', payload('mk-no-transaction'));
  t.equal(await deliveriesOf('mk-no-transaction'), 1, 'without an EntityManager: stored before emitDurable resolves');
});

t.test('a real deploy: its status done and its delivery commit together', async t => {
  const project = await c.post('project.create', { name: 'durable-shop' });
  const app = (await c.post('application.create', { name: 'web', environmentId: project.body.environment.environmentId })).body;
  t.teardown(() => removeServiceAndVolume(app.appName));
  await c.post('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: TEST_BASE_IMAGE });
  await c.post('application.update', { applicationId: app.applicationId, command: 'sleep', args: ['3600'] });

  const snapshot = async () =>
    (
      await sql<{ status: string; deliveries: string }>(
        `select (select application_status from applications where application_id = ?) as status,
            (select count(*) from notification_deliveries where notification_id = ? and event = 'appDeploy' and message::text like ?) as deliveries`,
        [app.applicationId, notificationId, `%${app.appName}%`],
      )
    )[0]!;
  const deploymentId = deploymentIdOf(await c.post('application.deploy', { applicationId: app.applicationId }));
  const seen: { status: string; deliveries: number }[] = [];
  let finished = false;
  const sampling = (async () => {
    while (!finished) {
      const s = await snapshot();
      seen.push({ status: s.status, deliveries: Number(s.deliveries) });
      if (s.status === 'done') break;
    }
  })();
  const done = await deploymentFinished(c, deploymentId);
  finished = true;
  await sampling;
  t.equal(done.status, 'done', done.errorMessage ?? '');
  t.ok(seen.length > 5, `${seen.length} snapshots while it ran`);
  t.same(
    seen.filter(s => (s.status === 'done') !== (s.deliveries === 1)),
    [],
    'never done without its delivery, never a delivery before done',
  );
  t.match(await snapshot(), { status: 'done', deliveries: '1' });
  await waitFor('the deploy at the webhook', () => sink.requests.some(r => r.body.includes(deploymentId)));
});
