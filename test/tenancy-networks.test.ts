// Tenancy on one engine (issue 46): each organization's workloads are on a network of their own,
// so that from a container of one tenant, another tenant's database and application are
// unreachable by name and by address, while its own services answer by name (the positive
// control) — and the other tenant's application answers from that tenant's own container. Two
// organizations other than the instance operators' (whose workloads stay on the platform network).
// Compose files are held to the same ownership: B's stack naming A's volume as external, a
// container of A's in volumes_from or network_mode, or a service that is not in the file, is
// refused; B's own are accepted. Real engine, real deploys; service names via tasks.<name> (no IPVS
// here, see ../shared/ENVIRONMENT.md).
import t from 'tap';
import http from 'node:http';
import Docker from 'dockerode';
import {
  startTestServer,
  signUpAdmin,
  otherOrganization,
  runFinished,
  waitFor,
  TEST_BASE_IMAGE,
  TEST_CADDY_IMAGE,
  TEST_STATIC_IMAGE,
  TEST_STATIC_ROOT,
  TEST_POSTGRES_IMAGE,
  freePort,
  type Client,
} from '@berth/core/testing';

t.setTimeout(900_000);
const docker = new Docker();

interface Tenant {
  client: Client;
  organizationId: string;
  environmentId: string;
}

/** An application of the tenant from an image, deployed; answers its ids. */
async function app(tenant: Tenant, name: string, o: { page?: string; command?: string }) {
  const made = await tenant.client.post('application.create', { name, environmentId: tenant.environmentId });
  if (made.status !== 200) throw new Error(JSON.stringify(made.body));
  const { applicationId, appName } = made.body as { applicationId: string; appName: string };
  await tenant.client.post('application.saveDockerProvider', { applicationId, dockerImage: o.page === undefined ? TEST_BASE_IMAGE : TEST_STATIC_IMAGE });
  if (o.page !== undefined) {
    const page = await tenant.client.post('mounts.create', { type: 'file', content: o.page, mountPath: `${TEST_STATIC_ROOT}/index.html`, serviceId: applicationId, serviceType: 'application' });
    if (page.status !== 200) throw new Error(JSON.stringify(page.body));
  }
  const command = o.command;
  if (command) {
    const set = await tenant.client.post('application.update', { applicationId, command });
    if (set.status !== 200) throw new Error(JSON.stringify(set.body));
  }
  const done = await runFinished(tenant.client, 'application.deploy', { applicationId });
  if (done.status !== 'done') throw new Error(`deploy of ${name}: ${done.errorMessage}`);
  return { applicationId, appName };
}

/** The running container of a service's task on this engine. */
async function containerOf(service: string): Promise<Docker.Container> {
  const id = await waitFor(`a running task of ${service}`, async () => {
    const tasks = (await docker.listTasks({ filters: JSON.stringify({ service: [service], 'desired-state': ['running'] }) })) as {
      Status?: { State?: string; ContainerStatus?: { ContainerID?: string } };
    }[];
    return tasks.find(x => x.Status?.State === 'running' && x.Status.ContainerStatus?.ContainerID)?.Status?.ContainerStatus?.ContainerID;
  });
  return docker.getContainer(id);
}

/** The addresses of a service's running tasks, on every network they are on. */
async function addressesOf(service: string): Promise<string[]> {
  const tasks = (await docker.listTasks({ filters: JSON.stringify({ service: [service], 'desired-state': ['running'] }) })) as { NetworksAttachments?: { Addresses?: string[] }[] }[];
  return tasks.flatMap(x => (x.NetworksAttachments ?? []).flatMap(n => n.Addresses ?? [])).map(a => a.split('/')[0]!);
}

/** The body the proxy answers on this machine's http port for the host (undefined when it does not answer). */
function throughProxy(port: number, host: string): Promise<string | undefined> {
  return new Promise(resolve => {
    const req = http.request({ host: '127.0.0.1', port, path: '/', method: 'GET', timeout: 3000, headers: { Host: host } }, res => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', c => (body += c));
      res.on('end', () => resolve(res.statusCode === 200 ? body : undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/** Runs a command (an argument array) in the container; answers its exit code and output. */
async function execIn(container: Docker.Container, cmd: string[]): Promise<{ code: number | null; out: string }> {
  const exec = await container.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, Tty: true });
  const stream = await exec.start({ hijack: true, stdin: false, Tty: true });
  const chunks: Buffer[] = [];
  await new Promise<void>(resolve => {
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', resolve);
    stream.on('error', () => resolve());
  });
  for (let i = 0; i < 50; i++) {
    const { Running, ExitCode } = await exec.inspect();
    if (!Running) return { code: ExitCode, out: Buffer.concat(chunks).toString('latin1') };
    await new Promise(r => setTimeout(r, 100));
  }
  return { code: null, out: '' };
}

// This machine's outbound network accepts a TCP connection to any address (an egress proxy), so a
// connection proves nothing: each probe asks for the service's own answer.
/** Whether the page of an application (its index.html, the marker) is served at host from the container. */
const servesPage = async (c: Docker.Container, host: string, marker: string) =>
  (await execIn(c, ['sh', '-c', '(printf "GET / HTTP/1.0\\r\\n\\r\\n"; sleep 1) | nc -w 3 "$0" 80', host])).out.includes(marker);
/** Whether PostgreSQL answers at host:5432 from the container (its one-byte answer, N or S, to an SSLRequest). */
const postgresAnswers = async (c: Docker.Container, host: string) =>
  /^[NS]/.test((await execIn(c, ['sh', '-c', '(printf "\\000\\000\\000\\010\\004\\322\\026\\057"; sleep 2) | nc -w 3 "$0" 5432', host])).out);

t.test("one tenant's container reaches none of another's services; its own answer", async t => {
  // Caddy in front: the proxy joins every organization's network, so each tenant's domain still routes.
  const PROXY = `berth-test-proxy-tenancy-${process.pid}`;
  const proxyHttpPort = await freePort();
  const server = await startTestServer({
    deploySettleSeconds: 0,
    proxy: 'caddy',
    proxyImage: TEST_CADDY_IMAGE,
    proxyHttpPort,
    proxyHttpsPort: await freePort(),
    providers: { proxy: { caddy: { options: { serviceName: PROXY } } } },
  });
  const services: string[] = [PROXY];
  const networks: string[] = [];
  t.teardown(async () => {
    await server.destroy();
    for (const s of services)
      await docker
        .getService(s)
        .remove()
        .catch(() => undefined);
    // A network goes once the removed services' containers have left it.
    for (const n of new Set(networks))
      await waitFor(
        `network ${n} removed`,
        () =>
          docker
            .getNetwork(n)
            .remove()
            .then(
              () => true,
              (e: { statusCode?: number }) => e.statusCode === 404,
            ),
        { timeout: 120_000 },
      ).catch(() => undefined);
  });
  const { userId } = await signUpAdmin(server); // the instance operators' organization
  const tenant = async (): Promise<Tenant> => {
    const { client, organizationId } = await otherOrganization(server, userId);
    const { environment } = (await client.post('project.create', { name: 'tenant' })).body;
    return { client, organizationId, environmentId: environment.environmentId };
  };
  const a = await tenant();
  const b = await tenant();

  // A: a database and an application; B: an application of its own. Each tenant has a probe (busybox, asleep).
  const dbMade = await a.client.post('postgres.create', {
    name: 'db',
    databaseName: 'shop',
    databaseUser: 'shop',
    databasePassword: 'Pg-pass_1-tenancy',
    dockerImage: TEST_POSTGRES_IMAGE,
    environmentId: a.environmentId,
  });
  t.equal(dbMade.status, 200, dbMade.status === 200 ? "A's database made" : JSON.stringify(dbMade.body));
  const db = dbMade.body as { postgresId: string; appName: string };
  services.push(db.appName);
  const dbRun = await runFinished(a.client, 'postgres.deploy', { postgresId: db.postgresId });
  t.equal(dbRun.status, 'done', dbRun.errorMessage ?? "A's database deployed");
  const A_PAGE = `the page of tenant A ${a.organizationId}`;
  const B_PAGE = `the page of tenant B ${b.organizationId}`;
  const aWeb = await app(a, 'web', { page: A_PAGE });
  const aProbe = await app(a, 'probe', { command: 'sleep 3600' });
  const bWeb = await app(b, 'web', { page: B_PAGE });
  const bProbe = await app(b, 'probe', { command: 'sleep 3600' });
  services.push(aWeb.appName, aProbe.appName, bWeb.appName, bProbe.appName);

  const netOf = async (service: string) => {
    const spec = (await docker.getService(service).inspect()).Spec as { TaskTemplate: { Networks?: { Target: string }[] } };
    const ids = (spec.TaskTemplate.Networks ?? []).map(n => n.Target);
    return Promise.all(ids.map(async id => ((await docker.getNetwork(id).inspect()) as { Name: string }).Name));
  };
  const aNets = await netOf(aWeb.appName);
  const bNets = await netOf(bWeb.appName);
  networks.push(...aNets, ...bNets);
  t.equal(aNets.length, 1, "A's application is on one network");
  t.match(aNets[0], /^berth-org-/, "A's own");
  t.not(aNets[0], bNets[0], "B's is another");
  const aNetwork = (await docker.getNetwork(aNets[0]!).inspect()) as { Labels?: Record<string, string> };
  t.equal(aNetwork.Labels?.['berth.organization'], a.organizationId, "A's network is labelled with A");
  t.same(await netOf(db.appName), aNets, "A's database is on A's network too");
  t.same(await netOf(bProbe.appName), bNets, "B's probe is on B's network");

  const fromB = await containerOf(bProbe.appName);
  const fromA = await containerOf(aProbe.appName);
  const aWebAt = await addressesOf(aWeb.appName);
  const dbAt = await addressesOf(db.appName);
  t.ok(aWebAt.length && dbAt.length, `A's tasks have addresses (${[...aWebAt, ...dbAt].join(', ')})`);

  // Positive controls: each tenant's own services answer, by name and by address.
  t.ok(await servesPage(fromB, `tasks.${bWeb.appName}`, B_PAGE), "from B's container, B's application answers by name");
  t.ok(await servesPage(fromA, `tasks.${aWeb.appName}`, A_PAGE), "from A's container, A's application answers by name");
  t.ok(await servesPage(fromA, aWebAt[0]!, A_PAGE), "from A's container, A's application answers by address");
  t.ok(await postgresAnswers(fromA, `tasks.${db.appName}`), "from A's container, A's database answers by name");
  t.ok(await postgresAnswers(fromA, dbAt[0]!), "from A's container, A's database answers by address");

  t.notOk(await servesPage(fromB, `tasks.${aWeb.appName}`, A_PAGE), "from B's container, A's application is unreachable by name");
  t.notOk(await servesPage(fromB, aWeb.appName, A_PAGE), '(nor by its service name)');
  t.notOk(await postgresAnswers(fromB, `tasks.${db.appName}`), "from B's container, A's database is unreachable by name");
  t.notOk(await postgresAnswers(fromB, db.appName), '(nor by its service name)');
  for (const address of aWebAt) t.notOk(await servesPage(fromB, address, A_PAGE), `from B's container, A's application at ${address} is unreachable`);
  for (const address of dbAt) t.notOk(await postgresAnswers(fromB, address), `from B's container, A's database at ${address} is unreachable`);

  t.test("each tenant's domain routes through the proxy, which joins each organization's network", async t => {
    for (const [tenant, web, page, name] of [
      [a, aWeb, A_PAGE, 'a'],
      [b, bWeb, B_PAGE, 'b'],
    ] as const) {
      const host = `${name}-${process.pid}.tenancy.test`;
      const made = await tenant.client.post('domain.create', { host, applicationId: web.applicationId, port: 80, https: false, certificateType: 'none' });
      t.equal(made.status, 200, made.status === 200 ? `a domain of ${name.toUpperCase()}'s` : JSON.stringify(made.body));
      const body = await waitFor(`${host} through the proxy`, () => throughProxy(proxyHttpPort, host), { timeout: 60_000 });
      t.match(body, page, `${host} answers with ${name.toUpperCase()}'s page`);
    }
    t.same((await netOf(PROXY)).filter(n => n.startsWith('berth-org-')).sort(), [aNets[0], bNets[0]].sort(), "the proxy is on both organizations' networks");
  });

  t.test("networkSwarm naming another organization's network is refused; its own is accepted", async t => {
    const other = await b.client.post('application.update', { applicationId: bWeb.applicationId, networkSwarm: [{ Target: aNets[0] }] });
    t.equal(other.status, 403, JSON.stringify(other.body));
    t.same(
      other.body.issues.map((i: { path: string[] }) => i.path.join('.')),
      ['networkSwarm.0.Target'],
    );
    const platform = await b.client.post('application.update', { applicationId: bWeb.applicationId, networkSwarm: [{ Target: server.kernel.container.cradle.hosts.platformNetwork }] });
    t.equal(platform.status, 403, "the platform network is the instance operators' organization's");
    const own = await b.client.post('application.update', { applicationId: bWeb.applicationId, networkSwarm: [{ Target: bNets[0] }] });
    t.equal(own.status, 200, JSON.stringify(own.body));
  });

  t.test("compose: B's stack naming A's volume, container or a service outside the file is refused; its own are accepted", async t => {
    const aContainer = (await fromA.inspect()).Name.replace(/^\//, '');
    const bContainer = (await fromB.inspect()).Name.replace(/^\//, '');
    const stack = (await b.client.post('compose.create', { name: 'stack', environmentId: b.environmentId, composeType: 'docker-compose' })).body as { composeId: string };
    const refused = async (file: string, status: number, field: string, what: string) => {
      const res = await b.client.post('compose.update', { composeId: stack.composeId, composeFile: file });
      t.equal(res.status, status, res.status === status ? what : `${what}: ${JSON.stringify(res.body)}`);
      t.same(
        (res.body.issues ?? []).map((i: { path: string[] }) => i.path.join('.')),
        [field],
        `naming ${field}`,
      );
    };
    const service = (extra: string) => `services:\n  web:\n    image: ${TEST_STATIC_IMAGE}\n${extra}`;
    await refused(`${service('    volumes: [data:/data]\n')}volumes:\n  data:\n    external: true\n    name: ${db.appName}-data\n`, 409, 'composeFile.volumes.data', "A's database volume as external");
    await refused(`${service('    volumes: [data:/data]\n')}volumes:\n  data:\n    name: ${db.appName}-data\n`, 409, 'composeFile.volumes.data', "A's database volume by name");
    await refused(service(`    volumes_from: ['container:${aContainer}']\n`), 409, 'composeFile.services.web.volumes_from.0', "volumes_from a container of A's");
    await refused(service(`    network_mode: 'container:${aContainer}'\n`), 409, 'composeFile.services.web.network_mode', "network_mode of a container of A's");
    await refused(service(`    network_mode: 'service:${aWeb.appName}'\n`), 400, 'composeFile.services.web.network_mode', 'network_mode of a service that is not in the file');
    await refused(`${service('    networks: [theirs]\n')}networks:\n  theirs:\n    external: true\n    name: ${aNets[0]}\n`, 403, 'composeFile.networks.theirs', "A's network as external");

    const accepted = async (file: string, what: string) => {
      const res = await b.client.post('compose.update', { composeId: stack.composeId, composeFile: file });
      t.equal(res.status, 200, res.status === 200 ? what : `${what}: ${JSON.stringify(res.body)}`);
    };
    await accepted(`${service('    volumes: [data:/data]\n')}volumes:\n  data: {}\n`, 'a volume of its own');
    await accepted(service(`    volumes_from: ['container:${bContainer}']\n`), "volumes_from a container of B's");
    await accepted(service(`    network_mode: 'container:${bContainer}'\n`), "network_mode of a container of B's");
    await accepted(`${service('    network_mode: service:side\n')}  side:\n    image: ${TEST_STATIC_IMAGE}\n`, 'network_mode of a service of the file');
    await accepted(`${service('    networks: [own]\n')}networks:\n  own:\n    external: true\n    name: ${bNets[0]}\n`, "B's own network as external");
  });
});
