// The engine side of a compose stack's runs, as the deploy queue's Deployer for target type
// "compose": fetch the file (stored, or a git checkout), convert it (suffix, isolation, domains,
// owner labels), write it with its .env and file mounts into the stack's directory, run the
// Compose program (`up -d --build --remove-orphans`) or `docker stack deploy`, and wait until
// every service runs. Status: running while deploying; done only once every service runs;
// error (set by settle) when the run fails, times out or dies with the process.
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Cradle, DeploymentRun, EntityManager } from '@berth/core';
import { optionalService } from '@berth/core';
import { RecordLifecycle, resolveEnv, serverFilesDir, type Engine, type MountRecord } from '@berth/plugin-workloads';
import { Compose, type ComposeRow } from './entities.ts';
import { KIND, type ComposeService } from './service.ts';
import {
  ignoredKeys,
  isolate,
  addSuffix,
  joinServiceNetworks,
  parseComposeCommand,
  serviceNames,
  serviceImages,
  withDomains,
  type ComposeDomainRoute,
  type ComposeProxy,
  type ComposeType,
} from './file/index.ts';
import { withOwnership } from './prepare.ts';
import { hostRefusal } from './host-policy.ts';
import { assertOwnReferences, serviceNetworkPlans } from './ownership.ts';
import { StackEngine, projectName, type WaitIo } from './engine.ts';
import { composeCommand, runComposeUp, runProgram } from './program.ts';
import { placeOnServer, tarOf, UNPACK } from './on-server.ts';

/** Where a stack keeps its files on this host: code/ (the file or the checkout), files/ (file mounts). */
export const composeDir = (dataDir: string, appName: string) => path.join(dataDir, 'compose', appName);
/** The file Berth deploys, beside the user's (so relative paths in it mean the same). */
export const DEPLOYED_FILE = '.berth-compose.yml';

/** How the active proxy reaches a stack's routed services, as the compose-file transforms name it (the proxy contract's composeRouting). */
export function proxyKind(cradle: Cradle): ComposeProxy {
  const id = cradle.config.proxy;
  if (id === 'none') return 'none';
  return cradle.providers.get('proxy', id).composeRouting;
}

export class ComposeDeployer extends RecordLifecycle<ComposeRow, ComposeService> {
  readonly targetType = KIND;
  protected readonly noun = 'compose stack';

  constructor(stacks: ComposeService, cradle: () => Cradle) {
    super({ entity: Compose, idField: 'composeId' }, stacks, cradle);
  }

  /** A stack runs as its file says, not by a replica count. */
  protected override replicas(): number {
    return 1;
  }

  /** The stack on the engine of its host (its server's, or this machine's). */
  async stackOf(row: ComposeRow): Promise<StackEngine> {
    const docker = await (await this.cradle().hosts.of(row.serverId ?? null)).engine();
    return new StackEngine(docker, row.composeType as ComposeType, row.appName, row.composeId);
  }

  #waitIo(run: DeploymentRun): WaitIo {
    return { signal: run.signal, log: line => run.log(line), settleMs: this.cradle().config.deploySettleSeconds * 1000 };
  }

  override async run(action: string, run: DeploymentRun): Promise<void> {
    const row = await this.load(run.deployment.targetId, run.em);
    if (!row) throw new Error('The compose stack was deleted before its deployment ran');
    const stack = await this.stackOf(row);
    await stack.assertOurs();
    const io = this.#waitIo(run);
    switch (action) {
      case 'stop':
        run.log(`Stopping ${stack.project}`);
        await stack.stop(io);
        await this.setStatus(row.composeId, 'idle', run.em);
        run.log('Stopped');
        return;
      case 'start': {
        if (!(await stack.exists())) throw new Error(`${row.appName} has never been deployed: deploy it first`);
        await this.setStatus(row.composeId, 'running', run.em);
        run.log(`Starting ${stack.project}`);
        await stack.start(await this.#deployedServices(row), io);
        await this.setStatus(row.composeId, 'done', run.em);
        run.log('Started');
        return;
      }
      case 'deploy':
      case 'redeploy':
        return this.#deployAndTell(action, row, run, stack);
      default:
        throw new Error(`Unknown compose action "${action}"`);
    }
  }

  protected deploy(): Promise<void> {
    throw new Error('compose runs go through run()');
  }

  override async settle(targetId: string, outcome: 'error' | 'cancelled', _reason: string, em: EntityManager): Promise<void> {
    const row = await this.load(targetId, em);
    if (!row) return;
    const exists =
      outcome === 'cancelled' &&
      (await this.stackOf(row)
        .then(s => s.exists())
        .catch(() => false));
    await this.setStatus(targetId, outcome === 'error' ? 'error' : exists ? 'done' : 'idle', em);
  }

  /** The user's file as last fetched (null before the first deploy). */
  async fetchedFile(row: ComposeRow): Promise<string | null> {
    const composePath = path.normalize(String(this.records.settingsOf(row).composePath ?? './docker-compose.yml'));
    return readFile(path.join(composeDir(this.cradle().config.dataDir, row.appName), 'code', composePath), 'utf8').catch(() => null);
  }

  /** The services of the file last deployed (start waits for them). */
  async #deployedServices(row: ComposeRow): Promise<string[]> {
    const text = await readFile(await this.#deployedPath(row), 'utf8').catch(() => row.composeFile);
    return serviceNames(text);
  }

  async #deployedPath(row: ComposeRow): Promise<string> {
    const composePath = String(this.records.settingsOf(row).composePath ?? './docker-compose.yml');
    return path.join(composeDir(this.cradle().config.dataDir, row.appName), 'code', path.dirname(path.normalize(composePath)), DEPLOYED_FILE);
  }

  /**
   * Deploys, and says on the bus how it went (appDeploy / appBuildError with composeId), durably:
   * appDeploy commits with the status `done`, appBuildError is stored before the run ends in
   * error. A cancelled run says nothing.
   */
  async #deployAndTell(action: string, row: ComposeRow, run: DeploymentRun, stack: StackEngine): Promise<void> {
    const about = { composeId: row.composeId, organizationId: row.organizationId, appName: row.appName, deploymentId: run.deployment.deploymentId };
    const { events } = this.cradle();
    try {
      await this.#deploy(row, run, stack);
    } catch (e) {
      if (!run.signal.aborted) await events.emitDurable('appBuildError', { ...about, error: (e as Error).message, at: new Date().toISOString() }, run.em);
      throw e;
    }
    await run.em.transactional(async tx => {
      await this.setStatus(row.composeId, 'done', tx);
      await events.emitDurable('appDeploy', { ...about, image: '', action, at: new Date().toISOString() }, tx);
    });
    run.log(`${stack.project} is running`);
  }

  async #deploy(row: ComposeRow, run: DeploymentRun, stack: StackEngine): Promise<void> {
    const cradle = this.cradle();
    const type = row.composeType as ComposeType;
    const settings = this.records.settingsOf(row);
    await this.setStatus(row.composeId, 'running', run.em);
    const dir = composeDir(cradle.config.dataDir, row.appName);
    const codeDir = path.join(dir, 'code');
    const composePath = path.normalize(String(settings.composePath ?? './docker-compose.yml'));
    if (path.isAbsolute(composePath) || composePath.startsWith('..')) throw new Error('composePath must name a file inside the source');

    // Environment first: a missing reference fails before anything runs.
    const texts = await cradle.environments.variables(row.environmentId, row.organizationId, run.em);
    const env = resolveEnv(this.records.envOf(row), texts);
    for (const value of Object.values(env)) run.redact(value);

    await this.#fetch(row, settings, codeDir, composePath, run);
    const userFile = path.join(codeDir, composePath);
    let text = await readFile(userFile, 'utf8').catch(() => {
      throw new Error(`The source has no compose file at ${settings.composePath}`);
    });

    for (const issue of ignoredKeys(text, type)) run.log(`Note: ${issue.service ? `service ${issue.service}: ` : ''}${issue.key}: ${issue.reason}`);
    const serverId = row.serverId ?? null;
    // The organization's network (the platform network for the instance operators'), made on first use: its services with domains join it, and the proxy does.
    const docker = await (await cradle.hosts.of(serverId)).engine();
    const network = await cradle.hosts.ensureNetworkOf(docker, row.organizationId);
    if (settings.randomize && settings.suffix) text = addSuffix(text, String(settings.suffix), network);
    if (settings.isolatedDeployment) text = isolate(text, stack.project);
    const routes = await this.routes(row, run.em);
    text = withDomains(text, routes, { type, proxy: proxyKind(cradle), platformNetwork: network, appName: row.appName });
    // After the domains: a service that detaches leaves the organization's network they joined it to.
    const plans = await serviceNetworkPlans(settings.serviceNetworks, { organizationId: row.organizationId, serverId }, type, cradle, run.em, docker);
    if (plans.length) {
      const joined = joinServiceNetworks(text, plans, network);
      text = joined.text;
      for (const name of joined.skipped) run.log(`Note: serviceNetworks names ${name}, which is no service of the file: skipped`);
    }
    text = withOwnership(text, type, this.labels(row, run));
    const refused = hostRefusal(text, path.dirname(userFile), dir, cradle.hostAccess);
    if (refused) throw new Error(`Refused by this instance's host access policy: ${refused.message}`);
    await assertOwnReferences(text, { organizationId: row.organizationId, serverId }, cradle, run.em, env);
    // On a server, the bind sources inside the stack's directory are copied there (below).
    let copies: { local: string; remote: string }[] = [];
    if (serverId !== null) ({ text, copies } = placeOnServer(text, path.dirname(userFile), dir, await serverFilesDir(cradle.hosts, serverId, row.appName), type));
    const deployed = path.join(path.dirname(userFile), DEPLOYED_FILE);
    await writeFile(deployed, text, { mode: 0o600 });
    // The env reaches the program through a file (docker-compose) or its own environment (stack), never its command line.
    const envFile = path.join(path.dirname(userFile), '.env');
    if (settings.createEnvFile !== false)
      await writeFile(
        envFile,
        Object.entries(env)
          .map(([k, v]) => `${k}=${v.replace(/\n/g, '\\n')}`)
          .join('\n') + '\n',
        { mode: 0o600 },
      );
    await this.#writeFileMounts(row, dir, run);
    if (serverId !== null) await this.#copyToServer(serverId, copies, run);
    const services = serviceNames(text);
    // The images as the program reads them: interpolated from the env it gets (the env file, or a stack's own environment).
    const images = serviceImages(text, type === 'stack' || settings.createEnvFile !== false ? env : {});
    // On a server: the program drives its engine through the forwarded socket (build contexts
    // stream over the connection), and the images it lacks are copied from this machine's first.
    const dockerHost = await cradle.hosts.dockerHost(serverId);
    // A stack's services are placed by ownership: the nodes its organization may use carry its label first.
    if (type === 'stack') await cradle.hosts.ensurePlacement(serverId, row.organizationId);
    if (serverId !== null) {
      for (const image of images) {
        if ((await cradle.hosts.provideImage(serverId, image, run.signal)) === 'copied') run.log(`Copied ${image} to the server`);
      }
    }
    const argv = await this.#command(row, settings, deployed, envFile, dir, stack, type);
    run.log(`Running ${argv.join(' ')}`);
    const since = new Date(Date.now() - 1000);
    // A custom command's paths are the workload directory's (where the parser confined them).
    const cwd = String(settings.command ?? '').trim() ? dir : path.dirname(userFile);
    // Images from the organization's registries: a login for this run only (the CLI has no per-call credentials).
    const logins = await optionalService(cradle, 'registries')?.cliLogins(row.organizationId, images, run.em, {
      dockerHost,
      signal: run.signal,
      log: line => run.log(line),
      redact: value => run.redact(value),
    });
    try {
      const io = { cwd, env: { ...(type === 'stack' ? env : {}), ...logins?.env }, dockerHost, signal: run.signal, log: (line: string) => run.log(line) };
      await (type === 'stack' ? runProgram(argv, io) : runComposeUp(argv, io));
    } finally {
      await logins?.close();
    }
    run.log(`Waiting until ${services.join(', ')} run`);
    try {
      await stack.waitRunning(services, since, this.#waitIo(run));
    } catch (e) {
      // A stack goes back as a whole: the services this release changed return to their previous spec.
      if (type !== 'stack' || run.signal.aborted) throw e;
      run.log(`${(e as Error).message}: rolling the stack back to its previous release`);
      const { rolledBack, created } = await stack.rollBack(since, this.#waitIo(run));
      run.log(`Rolled back: ${rolledBack.join(', ') || 'none'}${created.length ? `; new in this release, kept: ${created.join(', ')}` : ''}`);
      throw new Error(`${(e as Error).message} — the stack was rolled back to its previous release (${rolledBack.join(', ') || 'no service had one'})`, { cause: e });
    }
    await this.#checkProxyReach(stack, routes, run, network);
    await stack.tagRunningImages();
  }

  /** The program's argv: the record's custom command (checked by the parser), or the default for its type. */
  async #command(row: ComposeRow, settings: Record<string, unknown>, deployed: string, envFile: string, dir: string, stack: StackEngine, type: ComposeType): Promise<string[]> {
    const custom = String(settings.command ?? '').trim();
    if (custom) return parseComposeCommand(custom, dir, { projectName: stack.project });
    if (type === 'stack') return ['docker', 'stack', 'deploy', '-c', deployed, '--with-registry-auth', '--prune', stack.project];
    return [...(await composeCommand()), '-p', stack.project, '-f', deployed, ...(settings.createEnvFile !== false ? ['--env-file', envFile] : []), 'up', '-d', '--build', '--remove-orphans'];
  }

  /** The stored file (raw) or a fresh checkout from the record's source provider (git...). */
  async #fetch(row: ComposeRow, settings: Record<string, unknown>, codeDir: string, composePath: string, run: DeploymentRun): Promise<void> {
    await rm(codeDir, { recursive: true, force: true });
    await mkdir(codeDir, { recursive: true, mode: 0o700 });
    if (row.sourceType === 'raw') {
      await mkdir(path.dirname(path.join(codeDir, composePath)), { recursive: true });
      await writeFile(path.join(codeDir, composePath), row.composeFile, { mode: 0o600 });
      return;
    }
    const cradle = this.cradle();
    if (!cradle.providers.has('source', row.sourceType)) throw new Error(`The source type ${row.sourceType} is not enabled on this instance`);
    const fetched = await cradle.providers.get('source', row.sourceType).resolve({ fields: settings, secrets: {}, workDir: codeDir, ...this.sourceIo(row, run) });
    if ('image' in fetched) throw new Error(`The source type ${row.sourceType} gives an image, not a compose file`);
    if (fetched.revision) run.log(`Fetched ${fetched.revision}`);
    // The stack's file patches (patch.*), before its file is read: a stored file (raw) has none, as with the peer.
    await this.applyPatches(row, codeDir, run);
  }

  /** File mounts are written under the stack's files/ directory (the file refers to them as ../files/<path>). */
  async #writeFileMounts(row: ComposeRow, dir: string, run: DeploymentRun): Promise<void> {
    const records = ((await optionalService(this.cradle(), 'mounts')?.forServices(KIND, [row.composeId], run.em))?.get(row.composeId) ?? []) as MountRecord[];
    const files = records.filter(m => m.type === 'file' && m.filePath);
    for (const m of files) {
      const target = path.join(dir, 'files', m.filePath!);
      if (!target.startsWith(path.join(dir, 'files') + path.sep)) throw new Error(`The file mount ${m.filePath} is outside the stack's files directory`);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, m.content ?? '', { mode: 0o644 });
    }
    if (files.length) run.log(`Wrote ${files.length} file mount(s) under files/`);
  }

  /** The bind sources placeOnServer moved: each a tar archive over the connection, unpacked at its place there. */
  async #copyToServer(serverId: string, copies: { local: string; remote: string }[], run: DeploymentRun): Promise<void> {
    const host = await this.cradle().hosts.of(serverId);
    copies = copies.filter(c => existsSync(c.local));
    for (const { local, remote } of copies) {
      const unpacked = await host.run([...UNPACK, path.posix.dirname(remote), remote], { stdin: await tarOf(local, run.signal), signal: run.signal });
      if (unpacked.code !== 0) throw new Error(`${remote} could not be written on the server: ${unpacked.stderr.trim()}`);
    }
    if (copies.length) run.log(`Copied ${copies.length} bind source(s) of the stack's directory to the server: ${copies.map(c => c.remote).join(', ')}`);
  }

  /** The stack's domains as the compose-file transforms take them. */
  async routes(row: ComposeRow, em: EntityManager): Promise<ComposeDomainRoute[]> {
    const directory = optionalService(this.cradle(), 'domains');
    if (!directory?.routesOf) return [];
    return (await directory.routesOf(this.records.ref(row), em))
      .filter(r => r.serviceName)
      .map(r => ({
        serviceName: r.serviceName!,
        host: r.host,
        path: r.path,
        port: r.port,
        https: r.https,
        uniqueConfigKey: r.uniqueConfigKey,
        appName: row.appName,
        certificateType: r.certificateType,
        stripPath: r.stripPath,
        internalPath: r.internalPath,
        customEntrypoint: r.customEntrypoint,
        customCertResolver: r.customCertResolver,
        middlewares: r.middlewares,
      }));
  }

  /** Says, per domain, whether its service is on the proxy's network (the peer's most common 502). */
  async #checkProxyReach(stack: StackEngine, routes: ComposeDomainRoute[], run: DeploymentRun, network: string): Promise<void> {
    if (!routes.length) return;
    const containers = await stack.containers(false);
    for (const r of routes) {
      const label = stack.type === 'stack' ? 'com.docker.swarm.service.name' : 'com.docker.compose.service';
      const value = stack.type === 'stack' ? `${stack.project}_${r.serviceName}` : r.serviceName;
      const own = containers.filter(c => c.Labels?.[label] === value);
      const reached = own.length > 0 && own.every(c => Object.keys(c.NetworkSettings?.Networks ?? {}).includes(network));
      run.log(
        reached
          ? `Domain ${r.host}: service ${r.serviceName} is on ${network}, the proxy reaches it`
          : `Warning: domain ${r.host}: service ${r.serviceName} is not on ${network}; the proxy cannot reach it (502) until it is`,
      );
    }
  }

  /** Takes the stack off the host (its volumes too when asked). */
  async removeStack(row: ComposeRow, volumes: boolean): Promise<void> {
    const stack = await this.stackOf(row);
    await stack.assertOurs();
    await stack.remove(volumes, { log: () => {}, settleMs: 0 });
  }

  /** The upstream the proxy dials for a compose service: its network alias (docker-compose) or its tasks' DNS name (stack). */
  upstreamOf(row: ComposeRow, serviceName: string, port: number): string {
    return row.composeType === 'stack' ? `tasks.${projectName(row.appName)}_${serviceName}:${port}` : `${row.appName}-${serviceName}:${port}`;
  }
}
