// docker.* through the real kernel, a real PostgreSQL and the real Docker engine, every procedure on
// both wire forms (REST and tRPC). On this machine an organization reaches only the containers and
// services Berth labelled as its own: another organization's answer 404 exactly as a name that
// names nothing, and nothing of theirs is stopped, removed or written; an instance operator reaches
// everything. Uploads go as multipart/form-data, land in the container (read back with the
// engine's archive API), are refused past the upload limit with 413 (with a declared length and
// chunked) and outside an absolute path with a 400 naming destinationPath, and leave no file behind.
// On a kit host (its own sshd and dockerd), a serverId reaches that server's engine, where
// everything is its organization's. Every container and service made here is removed at the end.
import { randomBytes } from 'node:crypto';
import { readdirSync, readlinkSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import t from 'tap';
import Docker from 'dockerode';
import tar from 'tar-stream';
import { addMember, canRun, Client, otherOrganization, signUpAdmin, startTestServer, TEST_BASE_IMAGE, waitFor, type Reply } from '@berth/core/testing';
import { loadImage, remoteHostsMissing, sharedRemoteHosts } from '@berth/test/remote-hosts';

t.setTimeout(600_000);

const docker = new Docker();
/** Every name made here starts with it: the teardown removes what a failed test left. */
const PREFIX = `bdk-${process.pid}-${randomBytes(3).toString('hex')}`;
let made = 0;
const name = (what: string) => `${PREFIX}-${what}-${++made}`;
/** The largest upload of the test server: small, so the refusal is quick. */
const UPLOAD_LIMIT = 200_000;

/** The labels Berth puts on what it makes for an organization's record. */
const ownedBy = (organizationId: string) => ({ 'berth.kind': 'application', 'berth.id': `rec-${randomBytes(4).toString('hex')}`, 'berth.organization': organizationId });

/** A running container of the test image (its init forwards a stop at once). */
async function run(what: string, labels: Record<string, string>, engine = docker): Promise<{ id: string; name: string }> {
  const n = name(what);
  const c = await engine.createContainer({ name: n, Image: TEST_BASE_IMAGE, Cmd: ['sleep', '3600'], Labels: labels, HostConfig: { Init: true } });
  await c.start();
  return { id: c.id, name: n };
}

/** A swarm service of one task of the test image, and its running task. */
async function service(what: string, labels: Record<string, string>): Promise<{ name: string; task: { ID: string; Status: { ContainerStatus: { ContainerID: string } } } }> {
  const n = name(what);
  await docker.createService({
    Name: n,
    Labels: labels,
    TaskTemplate: { ContainerSpec: { Image: TEST_BASE_IMAGE, Command: ['sleep', '3600'], Labels: labels, Init: true }, RestartPolicy: { Condition: 'none' } },
    Mode: { Replicated: { Replicas: 1 } },
  } as Docker.CreateServiceOptions);
  const task = await waitFor(
    `the task of ${n} running`,
    async () =>
      ((await docker.listTasks({ filters: { service: [n] } })) as { ID: string; Status: { State: string; ContainerStatus: { ContainerID: string } } }[]).find(x => x.Status.State === 'running'),
    { timeout: 60_000 },
  );
  return { name: n, task };
}

const state = async (id: string, engine = docker) =>
  (engine.getContainer(id).inspect() as Promise<{ State: { Running: boolean; StartedAt: string } }>).then(
    i => i.State,
    () => null,
  );

/** A file of the container, read back through the engine's archive API. */
async function readBack(id: string, file: string, engine = docker): Promise<Buffer | null> {
  let archive: NodeJS.ReadableStream;
  try {
    archive = await engine.getContainer(id).getArchive({ path: file });
  } catch {
    return null;
  }
  const extract = tar.extract();
  archive.pipe(extract);
  const chunks: Buffer[] = [];
  for await (const entry of extract) for await (const chunk of entry) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

t.teardown(async () => {
  for (const s of (await docker.listServices({ filters: { name: [PREFIX] } })) as { ID: string; Spec: { Name: string } }[]) {
    if (s.Spec.Name.startsWith(PREFIX)) await docker.getService(s.ID).remove();
  }
  for (const c of await docker.listContainers({ all: true, filters: { name: [PREFIX] } })) {
    await docker
      .getContainer(c.Id)
      .remove({ force: true })
      .catch(() => undefined);
  }
});

const server = await startTestServer({ proxy: 'none', uploadLimit: UPLOAD_LIMIT });
t.teardown(() => server.destroy());
const admin = await signUpAdmin(server);
/** A: the instance operators' organization, its admin an operator. */
const a = admin.client;
/** A member of A's organization: no operator. */
const member = (await addMember(server, a, 'member@example.com')).client;
// B: another account's organization, not the instance operators'.
const stranger = await a.post('user.createUserWithCredentials', { email: 'stranger@example.com', password: 'stranger-password-1', role: 'member' });
const other = await otherOrganization(server, stranger.body.userId);
const b = other.client;
// B's admin is no member of A (a top-level assertion here would end the file's test before its subtests).
if ((await a.post('user.remove', { userId: stranger.body.userId })).status !== 200) throw new Error('user.remove failed');

type Kind = 'query' | 'mutation';
/** Both wire forms of a call. */
const FORMS = {
  rest: (c: Client, kind: Kind, op: string, input: Record<string, unknown>) => (kind === 'query' ? c.get(`docker.${op}`, input) : c.post(`docker.${op}`, input)),
  trpc: (c: Client, kind: Kind, op: string, input: Record<string, unknown>) => c.trpc(kind, `docker.${op}`, input),
} as const;
const forms = Object.entries(FORMS);
/** The answer's value, whichever form carried it. */
const data = (r: Reply) => (r.body?.result?.data ? r.body.result.data.json : r.body);
/** The error's message and issue paths, whichever form carried it. */
const failure = (r: Reply) => ({ status: r.status, message: r.body?.message, paths: ((r.body?.issues ?? []) as { path: string[] }[]).map(i => i.path.join('.')) });

const aBox = await run('a', ownedBy(admin.organizationId));
const bBox = await run('b', ownedBy(other.organizationId));
const plain = await run('plain', {});

t.test("getContainers: this machine's containers as the caller's organization may see them", async t => {
  for (const [form, call] of forms) {
    const seen = async (c: Client) => {
      const r = await call(c, 'query', 'getContainers', {});
      t.equal(r.status, 200, `${form}: ${JSON.stringify(r.body).slice(0, 200)}`);
      return (data(r) as { name: string }[]).map(x => x.name).filter(n => n.startsWith(PREFIX));
    };
    t.same((await seen(b)).sort(), [bBox.name], `${form}: B sees its own container, not A's nor one Berth did not make`);
    t.same((await seen(member)).sort(), [aBox.name], `${form}: a member of A (no operator) sees A's only`);
    t.same((await seen(a)).sort(), [aBox.name, bBox.name, plain.name].sort(), `${form}: an instance operator sees every container`);
    const row = (data(await call(b, 'query', 'getContainers', {})) as Record<string, unknown>[]).find(x => x.name === bBox.name);
    t.same(row, { containerId: bBox.id.slice(0, 12), name: bBox.name, image: TEST_BASE_IMAGE, ports: '', state: 'running', status: row?.status }, `${form}: the peer's row`);
    t.match(row?.status, /^Up /);
  }
});

t.test("swarm.getContainerStats: a reading of each running container the caller may see, in docker stats' strings", async t => {
  const names = async (c: Client, form: 'rest' | 'trpc') => {
    const r = form === 'rest' ? await c.get('swarm.getContainerStats', {}) : await c.trpc('query', 'swarm.getContainerStats', {});
    t.equal(r.status, 200, `${form}: ${JSON.stringify(r.body).slice(0, 200)}`);
    return data(r) as { Name: string; MemUsage: string }[];
  };
  for (const form of ['rest', 'trpc'] as const) {
    const ofB = (await names(b, form)).filter(s => s.Name.startsWith(PREFIX));
    t.same(
      ofB.map(s => s.Name),
      [bBox.name],
      `${form}: B reads its own running container only`,
    );
    t.match(ofB[0], {
      Container: bBox.id.slice(0, 12),
      ID: bBox.id.slice(0, 12),
      CPUPerc: /^\d+\.\d\d%$/,
      MemPerc: /^\d+\.\d\d%$/,
      MemUsage: /^[\d.]+(B|KiB|MiB|GiB) \/ [\d.]+(B|KiB|MiB|GiB|TiB)$/,
      NetIO: /^[\d.]+(B|kB|MB|GB) \/ [\d.]+(B|kB|MB|GB)$/,
      BlockIO: /^[\d.]+(B|kB|MB|GB) \/ [\d.]+(B|kB|MB|GB)$/,
    });
    t.same(
      (await names(a, form))
        .map(s => s.Name)
        .filter(n => n.startsWith(PREFIX))
        .sort(),
      [aBox.name, bBox.name, plain.name].sort(),
      `${form}: an instance operator reads every running container`,
    );
  }
  // The memory figure is the container's own: sleep holds well under a mebibyte beside its limit (the host's memory).
  const own = (await names(b, 'rest')).find(s => s.Name === bBox.name)!;
  const [used] = own.MemUsage.split(' / ');
  t.ok(/(B|KiB|MiB)$/.test(used!) && !/GiB$/.test(used!), `a sleeping container uses little memory (${own.MemUsage})`);
});

t.test("getConfig: the engine's object for the organization's container; another's answers as none", async t => {
  for (const [form, call] of forms) {
    for (const ref of [bBox.name, bBox.id, bBox.id.slice(0, 12)]) {
      const r = await call(b, 'query', 'getConfig', { containerId: ref });
      t.equal(r.status, 200, `${form} ${ref}`);
      t.equal(data(r).Id, bBox.id, `${form}: by ${ref === bBox.name ? 'name' : 'id'}`);
      t.equal(data(r).Config.Labels['berth.organization'], other.organizationId);
    }
    const none = failure(await call(b, 'query', 'getConfig', { containerId: `${PREFIX}-nothing` }));
    t.equal(none.status, 404);
    for (const ref of [aBox.name, aBox.id, plain.name]) {
      const theirs = failure(await call(b, 'query', 'getConfig', { containerId: ref }));
      t.same(
        { ...theirs, message: theirs.message?.replace(ref, '<c>') },
        { ...none, message: none.message?.replace(`${PREFIX}-nothing`, '<c>') },
        `${form}: ${ref} answers B as a container that does not exist`,
      );
    }
    t.equal(data(await call(a, 'query', 'getConfig', { containerId: bBox.name })).Id, bBox.id, `${form}: the operator reaches B's`);
    t.same(failure(await call(b, 'query', 'getConfig', { containerId: '..' })).paths, ['containerId'], `${form}: a name the engine would not take is refused`);
    t.equal((await call(a, 'query', 'getConfig', { containerId: bBox.id.slice(0, 11) })).status, 404, `${form}: an id prefix shorter than 12 characters names no container`);
  }
});

t.test("restart, start, stop, kill and remove act on the organization's container, never on another's", async t => {
  for (const [form, call] of forms) {
    const box = await run(`acts-${form}`, ownedBy(other.organizationId));
    const act = async (op: string, containerId = box.name) => {
      const r = await call(b, 'mutation', op, { containerId });
      return { status: r.status, value: data(r) };
    };
    t.same(await act('stopContainer'), { status: 200, value: null }, `${form}: stop answers nothing, as the peer`);
    t.equal((await state(box.id))?.Running, false, 'stopped');
    t.equal((await act('stopContainer')).status, 200, 'stopping a stopped container is no error');
    t.equal((await act('startContainer')).status, 200);
    t.equal((await state(box.id))?.Running, true, 'started');
    t.equal((await act('startContainer')).status, 200, 'starting a running container is no error');
    const before = (await state(box.id))?.StartedAt;
    t.equal((await act('restartContainer')).status, 200);
    t.not((await state(box.id))?.StartedAt, before, 'restarted');
    t.equal((await act('killContainer')).status, 200);
    t.equal((await state(box.id))?.Running, false, 'killed');
    t.equal((await act('killContainer')).status, 200, 'killing a stopped container is no error');
    t.equal((await act('startContainer')).status, 200);
    t.equal((await act('removeContainer')).status, 200);
    t.equal(await state(box.id), null, 'removed, running as it was');

    for (const op of ['stopContainer', 'killContainer', 'restartContainer', 'removeContainer', 'startContainer']) {
      for (const target of [aBox, plain]) {
        const r = await call(b, 'mutation', op, { containerId: target.id });
        t.equal(r.status, 404, `${form}: B's ${op} of a container not its own is not found`);
      }
    }
    t.equal((await state(aBox.id))?.Running, true, "A's container runs on, untouched");
    t.equal((await state(plain.id))?.Running, true, 'and so does the one Berth did not make');
  }
  const ops = await run('operator', {});
  t.equal((await a.post('docker.stopContainer', { containerId: ops.name })).status, 200, 'the operator acts on a container Berth did not make');
  t.equal((await state(ops.id))?.Running, false);
});

t.test("by app name: services, stacks and compose projects, the organization's own", async t => {
  const stack = name('stack');
  const project = name('project');
  const mine = { ...ownedBy(other.organizationId), 'com.docker.stack.namespace': stack };
  const [svc, stackSvc, theirs] = [
    await service('svc', ownedBy(other.organizationId)),
    await service('stacked', mine),
    await service('theirs', { ...ownedBy(admin.organizationId), 'com.docker.stack.namespace': stack }),
  ];
  const composed = await run('composed', { ...ownedBy(other.organizationId), 'com.docker.compose.project': project });
  const composedA = await run('composed-a', { ...ownedBy(admin.organizationId), 'com.docker.compose.project': project });
  const hostname = ((await docker.info()) as { Name: string }).Name;
  for (const [form, call] of forms) {
    const get = async (c: Client, op: string, input: Record<string, unknown>) => {
      const r = await call(c, 'query', op, input);
      t.equal(r.status, 200, `${form} ${op}: ${JSON.stringify(r.body).slice(0, 200)}`);
      return data(r) as Record<string, unknown>[];
    };
    t.match(
      await get(b, 'getServiceContainersByAppName', { appName: svc.name }),
      [{ containerId: svc.task.ID, name: `${svc.name}.1`, state: 'running', node: hostname, currentState: /^Running \w/, error: '' }],
      `${form}: the service's task as \`docker service ps --no-trunc\` lists it`,
    );
    t.same(await get(b, 'getServiceContainersByAppName', { appName: theirs.name }), [], `${form}: A's service is none of B's`);
    t.equal((await get(a, 'getServiceContainersByAppName', { appName: theirs.name })).length, 1, `${form}: the operator sees it`);

    t.same(
      (await get(b, 'getStackContainersByAppName', { appName: stack })).map(x => x.name),
      [`${stackSvc.name}.1`],
      `${form}: the stack's tasks, B's service only`,
    );
    t.same(
      (await get(a, 'getStackContainersByAppName', { appName: stack })).map(x => x.name).sort(),
      [`${stackSvc.name}.1`, `${theirs.name}.1`].sort(),
      `${form}: the operator sees every service of the stack`,
    );
    t.match(
      await get(b, 'getContainersByAppNameMatch', { appName: stack, appType: 'stack' }),
      [{ containerId: stackSvc.task.Status.ContainerStatus.ContainerID.slice(0, 12), name: `${stackSvc.name}.1.${stackSvc.task.ID}`, node: hostname, state: 'running', status: /^Running / }],
      `${form}: the stack's running tasks with their containers`,
    );
    t.match(
      await get(b, 'getContainersByAppNameMatch', { appName: project, appType: 'docker-compose' }),
      [{ containerId: composed.id.slice(0, 12), name: composed.name, state: 'running', status: /^Up / }],
      `${form}: the compose project's containers, B's only`,
    );
    t.equal((await get(a, 'getContainersByAppNameMatch', { appName: project, appType: 'docker-compose' })).length, 2, `${form}: the operator sees both`);
    t.same(
      (await get(b, 'getContainersByAppNameMatch', { appName: bBox.name })).map(x => x.name),
      [bBox.name],
      `${form}: the containers whose name starts with appName`,
    );
    t.same(await get(b, 'getContainersByAppNameMatch', { appName: aBox.name }), [], `${form}: A's is none of B's`);

    t.same(
      await get(b, 'getContainersByAppLabel', { appName: svc.name, type: 'swarm' }),
      [
        {
          containerId: svc.task.Status.ContainerStatus.ContainerID.slice(0, 12),
          name: (await docker.getContainer(svc.task.Status.ContainerStatus.ContainerID).inspect()).Name.slice(1),
          state: 'running',
        },
      ],
      `${form}: the service's running containers`,
    );
    t.same(await get(b, 'getContainersByAppLabel', { appName: bBox.name, type: 'standalone' }), [{ containerId: bBox.id.slice(0, 12), name: bBox.name, state: 'running' }], `${form}: by name`);
    t.same(await get(b, 'getContainersByAppLabel', { appName: composedA.name, type: 'standalone' }), [], `${form}: not A's`);
    t.same(await get(b, 'getServiceContainersByAppName', { appName: name('none') }), [], `${form}: a service that does not exist has no tasks`);
  }
});

t.test('uploadFileToContainer: multipart, into the container, checked and limited', async t => {
  const uploads = path.join(server.dataDir, 'uploads');
  const left = () => {
    try {
      return readdirSync(uploads);
    } catch {
      return [];
    }
  };
  const box = await run('upload', ownedBy(other.organizationId));
  const small = Buffer.from('hello from berth\n');
  const big = randomBytes(150_000);
  for (const trpc of [false, true]) {
    const form = trpc ? 'trpc' : 'rest';
    const into = await b.upload('docker.uploadFileToContainer', { containerId: box.name, destinationPath: '/tmp' }, { field: 'file', name: `hello-${form}.txt`, content: small }, { trpc });
    t.equal(into.status, 200, `${form}: ${JSON.stringify(into.body).slice(0, 300)}`);
    t.same(data(into), { success: true, message: 'File uploaded successfully' }, `${form}: the peer's answer`);
    t.same(await readBack(box.id, `/tmp/hello-${form}.txt`), small, `${form}: a directory takes the file under its own name`);
    const at = await b.upload('docker.uploadFileToContainer', { containerId: box.id, destinationPath: `/tmp/renamed-${form}.bin` }, { field: 'file', name: 'whatever.bin', content: big }, { trpc });
    t.equal(at.status, 200, `${form}: ${JSON.stringify(at.body).slice(0, 300)}`);
    t.same(await readBack(box.id, `/tmp/renamed-${form}.bin`), big, `${form}: a path that is no directory is the file's (150 kB, byte for byte)`);

    for (const destinationPath of ['/tmp/../etc/passwd', 'tmp/x.txt', './x', '/tmp/./x', '/nowhere/x.txt', '/tmp/hello-rest.txt/', '/tmp/a b']) {
      const r = await b.upload('docker.uploadFileToContainer', { containerId: box.name, destinationPath }, { field: 'file', name: 'x.txt', content: small }, { trpc });
      t.same(failure(r).status, 400, `${form}: ${destinationPath} is refused`);
      t.same(failure(r).paths, ['destinationPath'], `${form}: naming destinationPath (${failure(r).message})`);
    }
    t.equal(await readBack(box.id, '/etc/passwd').then(x => x?.includes('hello from berth')), false, 'nothing was written outside');

    const large = await b.upload(
      'docker.uploadFileToContainer',
      { containerId: box.name, destinationPath: '/tmp/large.bin' },
      { field: 'file', name: 'large.bin', content: randomBytes(UPLOAD_LIMIT + 50_000) },
      { trpc },
    );
    t.equal(large.status, 413, `${form}: a file past the limit is refused with 413`);
    t.same(failure(large).paths, ['file'], `${form}: naming the file (${failure(large).message})`);
    t.equal(await readBack(box.id, '/tmp/large.bin'), null, 'and nothing of it is in the container');

    const theirs = await b.upload('docker.uploadFileToContainer', { containerId: aBox.name, destinationPath: '/tmp/intruder.txt' }, { field: 'file', name: 'x.txt', content: small }, { trpc });
    t.equal(theirs.status, 404, `${form}: A's container is not found`);
    t.equal(await readBack(aBox.id, '/tmp/intruder.txt'), null, "nothing was written in A's container");

    const noFile = await b.upload('docker.uploadFileToContainer', { containerId: box.name, destinationPath: '/tmp/x' }, null, { trpc });
    t.same(failure(noFile).paths, ['file'], `${form}: a form without its file is refused naming file`);
    t.same(failure(noFile).status, 400);
  }
  t.same(failure(await b.post('docker.uploadFileToContainer', { containerId: box.name, destinationPath: '/tmp/x' })).paths, ['file'], 'a JSON body has no file: 400 naming file');
  t.same(failure(await b.trpc('mutation', 'docker.uploadFileToContainer', { containerId: box.name, destinationPath: '/tmp/x' })).paths, ['file'], 'on the tRPC form too');

  // Chunked, no declared length: cut off as it streams.
  const boundary = `----berth${randomBytes(8).toString('hex')}`;
  const chunked = await new Promise<number>((resolve, reject) => {
    const req = request(
      `${server.url}/api/docker.uploadFileToContainer`,
      { method: 'POST', headers: { 'x-api-key': b.apiKey!, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' } },
      res => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="containerId"\r\n\r\n${box.name}\r\n`);
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="destinationPath"\r\n\r\n/tmp/chunked.bin\r\n`);
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="chunked.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    for (let i = 0; i < 10; i++) req.write(randomBytes(50_000));
    req.end(`\r\n--${boundary}--\r\n`);
  });
  t.equal(chunked, 413, 'a chunked body past the limit is refused with 413');
  t.equal(await readBack(box.id, '/tmp/chunked.bin'), null, 'and nothing of it is in the container');

  // A client that goes away halfway through its file: the read ends, its file is closed and removed
  // (the server runs in this process: no descriptor of it may stay open on dataDir/uploads).
  const openUploads = () =>
    readdirSync('/proc/self/fd').filter(fd => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`).startsWith(uploads);
      } catch {
        return false;
      }
    });
  const halfway = request(`${server.url}/api/docker.uploadFileToContainer`, {
    agent: false, // a connection of its own: not one the refused upload above left behind
    method: 'POST',
    headers: { 'x-api-key': b.apiKey!, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' },
  });
  halfway.on('error', () => undefined); // the test cuts it
  halfway.write(`--${boundary}\r\nContent-Disposition: form-data; name="containerId"\r\n\r\n${box.name}\r\n`);
  halfway.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="half.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  halfway.write(randomBytes(60_000));
  await waitFor('the abandoned upload is being written', () => openUploads().length > 0, { timeout: 10_000 });
  halfway.destroy();
  await waitFor('the abandoned upload is closed and removed', () => openUploads().length === 0 && left().length === 0, { timeout: 10_000 }).catch(() => undefined);
  t.same(openUploads(), [], 'no descriptor is left open on an abandoned upload');
  t.same(left(), [], 'and its file is gone');

  const anonymous = await new Client(server.url).upload('docker.uploadFileToContainer', { containerId: box.name, destinationPath: '/tmp/anon.txt' }, { field: 'file', name: 'a.txt', content: small });
  t.equal(anonymous.status, 401, 'no credential: 401');
  await waitFor('no upload left in dataDir/uploads', () => left().length === 0, { timeout: 5_000 }).catch(() => undefined);
  t.same(left(), [], 'every upload was removed once answered');
});

t.test("serverId: the organization's servers only", async t => {
  const srv = (await a.post('server.create', { name: 'a-server', ipAddress: '192.0.2.10', port: 22, sshKeyId: null })).body as { serverId: string };
  for (const [form, call] of forms) {
    for (const [kind, op, input] of [
      ['query', 'getContainers', {}],
      ['query', 'getConfig', { containerId: 'x' }],
      ['mutation', 'stopContainer', { containerId: 'x' }],
      ['query', 'getContainersByAppLabel', { appName: 'x', type: 'swarm' }],
      ['query', 'getStackContainersByAppName', { appName: 'x' }],
    ] as const) {
      const theirs = failure(await call(b, kind, op, { ...input, serverId: srv.serverId }));
      const none = failure(await call(b, kind, op, { ...input, serverId: 'no-such-server' }));
      t.equal(theirs.status, 404, `${form} ${op}: A's server answers B 404`);
      t.same({ ...theirs, message: theirs.message?.replace(srv.serverId, '<s>') }, { ...none, message: none.message?.replace('no-such-server', '<s>') }, 'as one that does not exist');
    }
    t.match(failure(await call(a, 'query', 'getContainers', { serverId: srv.serverId })), { status: 400, message: /has no SSH key/ }, `${form}: A's own server is reached (it has no key)`);
  }
  const upload = await b.upload('docker.uploadFileToContainer', { containerId: 'x', destinationPath: '/tmp/x', serverId: srv.serverId }, { field: 'file', name: 'x', content: 'x' });
  t.equal(upload.status, 404, "an upload to A's server answers B 404");
});

t.test("on a server: its engine, where everything is the organization's", async t => {
  if (!canRun(t, 'remote-hosts', remoteHostsMissing())) return;
  const {
    hosts: [host],
  } = await sharedRemoteHosts(1);
  const remote = new Docker({ socketPath: host!.socket });
  await remote
    .getImage(TEST_BASE_IMAGE)
    .inspect()
    .catch(() => loadImage(host!, TEST_BASE_IMAGE));
  const key = (await b.post('sshKey.create', { name: 'kit host', privateKey: host!.privateKey, publicKey: host!.publicKey })).body as { sshKeyId: string };
  const srv = (await b.post('server.create', { name: 'kit host', ipAddress: host!.address, port: 22, username: host!.user, sshKeyId: key.sshKeyId, hostKeyFingerprint: host!.hostKeyFingerprint }))
    .body as { serverId: string };
  t.ok(srv.serverId, "B's server");
  const box = await run('remote', {}, remote);
  t.teardown(() =>
    remote
      .getContainer(box.id)
      .remove({ force: true })
      .catch(() => undefined),
  );
  for (const [form, call] of forms) {
    const listed = await call(b, 'query', 'getContainers', { serverId: srv.serverId });
    t.equal(listed.status, 200, `${form}: ${JSON.stringify(listed.body).slice(0, 200)}`);
    t.match(
      (data(listed) as { name: string }[]).find(x => x.name === box.name),
      { containerId: box.id.slice(0, 12), state: 'running', serverId: srv.serverId },
      `${form}: a container Berth did not make is the organization's on its own server`,
    );
    t.notOk(
      (data(await call(b, 'query', 'getContainers', {})) as { name: string }[]).some(x => x.name === box.name),
      "this machine's list does not hold it",
    );
    t.equal(data(await call(b, 'query', 'getConfig', { containerId: box.name, serverId: srv.serverId })).Id, box.id, `${form}: inspected on the server`);
    t.equal((await call(b, 'query', 'getConfig', { containerId: box.name })).status, 404, `${form}: not on this machine`);
    t.equal((await call(a, 'query', 'getConfig', { containerId: box.name, serverId: srv.serverId })).status, 404, `${form}: B's server is not A's, operator or not`);
    const up = await b.upload(
      'docker.uploadFileToContainer',
      { containerId: box.name, destinationPath: `/tmp/on-server-${form}.txt`, serverId: srv.serverId },
      { field: 'file', name: 'x', content: `over ssh ${form}` },
      { trpc: form === 'trpc' },
    );
    t.equal(up.status, 200, `${form}: ${JSON.stringify(up.body).slice(0, 200)}`);
    t.equal((await readBack(box.id, `/tmp/on-server-${form}.txt`, remote))?.toString(), `over ssh ${form}`, `${form}: the file is in the server's container`);
  }
  t.equal((await b.post('docker.stopContainer', { containerId: box.name, serverId: srv.serverId })).status, 200);
  t.equal((await state(box.id, remote))?.Running, false, "stopped on the server's engine");
  t.equal((await b.trpc('mutation', 'docker.removeContainer', { containerId: box.name, serverId: srv.serverId })).status, 200);
  t.equal(await state(box.id, remote), null, 'removed from it');
});
