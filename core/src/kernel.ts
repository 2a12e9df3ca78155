// The kernel: boots configuration, database, container, plugins, transports and jobs in
// that order, and takes them down in reverse.
import Fastify, { type FastifyInstance } from 'fastify';
import { asValue, asClass, type AwilixContainer } from 'awilix';
import type { EntitySchema, MigrationObject } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { PoolConfig } from 'pg';
import { loadConfig, type BerthConfig } from './config.ts';
import { SecretBox } from './crypto.ts';
import { systemClock } from './clock.ts';
import { newContainer, optionalService, type BerthContainer, type Cradle } from './container.ts';
import { AuditCapture } from './audit/capture.ts';
import { ProcedureRegistry } from './procedure.ts';
import { JobScheduler } from './jobs.ts';
import { EventBus } from './events.ts';
import { openDatabase, type DatabaseEndpoint } from './persistence/database.ts';
import { openOrm, migrate } from './persistence/orm.ts';
import { identityEntities } from './identity/entities.ts';
import { identityMigrations } from './identity/migrations.ts';
import { prepareSetupToken } from './identity/setup-token.ts';
import { AccountService } from './identity/accounts.ts';
import { OutboundGuard } from './outbound.ts';
import { SessionService } from './identity/sessions.ts';
import { ApiKeyService } from './identity/api-keys.ts';
import { loadConfiguredPlugins, type LoadedPlugin } from './loader.ts';
import { refuseUnknown } from './config-sections.ts';
import { loadProviders } from './provider-loader.ts';
import type { BerthHost, Kernel, KernelOptions, PluginInfo } from './plugin.ts';
import { credentials, mountProcedures } from './transport/http.ts';
import { addRecordOwners, type RecordOwners } from './transport/permission-check.ts';
import { handleError } from './transport/errors.ts';
import { registerOpenApi } from './transport/openapi.ts';
import { coreProcedures } from './core-procedures.ts';
import { badRequest, notFound, unauthorized } from './errors.ts';

const SHUTDOWN_GRACE_MS = 10_000;

/** fastify's usual pretty printer, loaded only for a terminal. */
async function prettyLines(): Promise<NodeJS.WritableStream> {
  const { default: pretty } = await import('pino-pretty');
  return pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'hostname', sync: true });
}

export type { Kernel, KernelOptions } from './plugin.ts';

export async function createKernel(options: KernelOptions = {}): Promise<Kernel> {
  const config = loadConfig(options.env ?? process.env, options.config);
  // Every enabled plugin's section is validated before anything starts.
  const { plugins, warnings } = await loadConfiguredPlugins(config);
  const secrets = SecretBox.fromConfig(config.secret, config.dataDir);
  const app = Fastify({
    logger: {
      level: config.logLevel,
      // Never log credentials: no headers, no query strings (tokens may travel there).
      serializers: { req: (req: { method: string; url: string; id: string }) => ({ method: req.method, url: req.url.split('?')[0], id: req.id }) },
      redact: ['req.headers.authorization', 'req.headers["x-api-key"]', 'password', 'token', 'key'],
      // A terminal gets readable lines; a file or a pipe keeps one JSON object per line.
      ...(process.stdout.isTTY ? { stream: await prettyLines() } : {}),
    },
    bodyLimit: config.bodyLimit,
    forceCloseConnections: 'idle',
    return503OnClosing: true,
  });
  const routes: { method: string; url: string }[] = [];
  const getHandlers = new WeakSet<object>();
  // On the root instance before anything registers, so every plugin's scope inherits it. The HEAD
  // route Fastify adds beside each GET answers with the GET's own handler: it is left out.
  app.addHook('onRoute', route => {
    const methods = [route.method].flat();
    if (methods.length === 1 && methods[0] === 'HEAD' && getHandlers.has(route.handler)) return;
    if (methods.includes('GET')) getHandlers.add(route.handler);
    for (const method of methods) routes.push({ method, url: route.url });
  });
  const log = app.log;
  for (const warning of warnings) log.warn(warning);

  let endpoint: DatabaseEndpoint | undefined;
  let orm: MikroORM | undefined;
  let jobs: JobScheduler | undefined;
  let kernel: Kernel | undefined;
  try {
    endpoint = await openDatabase(config, {
      log,
      // Never serve on a dead database: stop everything, then let the caller decide.
      onLost: error => {
        log.fatal({ err: error }, 'the embedded database is gone');
        void kernel
          ?.stop()
          .catch(err => log.error({ err }, 'stopping after the database was lost failed'))
          .finally(() => (options.onDatabaseLost ?? (() => {}))(error));
      },
    });
    const container = newContainer();
    const registry = new ProcedureRegistry();
    const events = new EventBus(
      (err, event) => log.error({ err, event }, 'event listener failed'),
      () => container.cradle.orm.em.fork(),
    );
    jobs = new JobScheduler(endpoint.pool, log);
    container.register({
      config: asValue(config),
      logger: asValue(log),
      clock: asValue(systemClock),
      secrets: asValue(secrets),
      registry: asValue(registry),
      events: asValue(events),
      outbound: asValue(new OutboundGuard({ allow: () => config.outboundAllow, instanceOrganization: async () => (orm ? container.cradle.accounts.instanceOrganizationId() : null) })),
      jobs: asValue(jobs),
      principal: asValue(null),
      openapi: asValue(() => app.swagger()),
      reload: asValue(options.onReload),
      database: asValue({ pool: endpoint.pool, embedded: endpoint.embedded }),
    });
    // Providers before plugins: a plugin's setup and its schemas read the enabled ones.
    container.register({ providers: asValue(await loadProviders(config, container)) });
    refuseUnknown(config);

    const entities: EntitySchema<any, any>[] = [...identityEntities];
    const migrations: MigrationObject[] = [...identityMigrations];
    const startHooks: ((c: Cradle) => Promise<void> | void)[] = [];
    const recordOwners: RecordOwners = new Map();
    const host: BerthHost = {
      config,
      container,
      jobs,
      events,
      entities: (...s) => void entities.push(...s),
      migrations: (...m) => void migrations.push(...m),
      procedures: (...p) => registry.add(...p),
      provide: regs => void container.register(regs as never), // cast: a plugin's own Cradle keys
      onStart: fn => void startHooks.push(fn),
      recordOwners: owners => addRecordOwners(recordOwners, owners),
      headless: options.headless === true,
      http: routes =>
        void app.register(async scope => {
          await routes(scope);
        }),
      authenticate: async req => {
        const { apiKey, bearer } = credentials(req);
        const principal = await container.cradle.sessions.authenticate(apiKey, bearer);
        if (!principal) throw unauthorized();
        return principal;
      },
    };
    app.decorate('berth', host);
    app.setErrorHandler(handleError);
    app.setNotFoundHandler((req, reply) => handleError(notFound(`Operation ${req.method} ${req.url.split('?')[0]}`), req, reply));
    // JSON bodies: an empty body is "no input"; anything unparsable is a 400 naming the problem.
    const defaultJson = app.getDefaultJsonParser('error', 'error');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
      if (body === '' || (typeof body === 'string' && body.trim() === '')) return done(null, undefined);
      // Called with a callback, the default parser answers through it: no promise is dropped here.
      void defaultJson(req, body as string, (err, value) => (err ? done(badRequest(`Malformed JSON in the request body: ${err.message}`)) : done(null, value)));
    });
    if (!options.headless) await registerOpenApi(app, config.publicUrl);

    registry.add(...coreProcedures);
    for (const p of plugins) app.register(p.plugin);
    await app.after();
    registry.resolve();

    // Every mutation's call is recorded through the audit-log plugin's sink, when it is enabled.
    const audit = new AuditCapture(
      () => optionalService(container.cradle, 'auditSink'),
      (err, call) => log.error({ err, procedure: call.procedure, requestId: call.requestId }, 'an audit entry could not be written'),
    );
    container.register({ audit: asValue(audit) });
    orm = await openOrm({ endpoint, entities, migrations, poolSize: config.dbPoolSize, subscribers: [audit.subscriber()], log: msg => log.debug({ orm: msg }) });
    const applied = await migrate(orm);
    if (applied.length) log.info({ migrations: applied }, 'database migrated');
    container.register({ orm: asValue(orm), accounts: asClass(AccountService).singleton(), sessions: asClass(SessionService).singleton(), apiKeys: asClass(ApiKeyService).singleton() });
    jobs.define('berth.purgeExpiredSessions', async () => void (await container.cradle.sessions.purgeExpired()), { lockLifetimeMs: 60_000 });
    jobs.every('1 hour', 'berth.purgeExpiredSessions');

    if (!options.headless) {
      mountProcedures(app, { registry, container, checkResponses: config.checkResponses, recordOwners });
      app.get('/health', { schema: { hide: true } }, async () => ({ status: 'ok' }));
    }
    await app.ready();
    // Bootstrap authentication: a fresh instance's one-time setup token for its first admin.
    await prepareSetupToken({
      ownerExists: () => container.cradle.accounts.ownerExists(),
      dataDir: config.dataDir,
      headless: options.headless === true,
      log: file => log.info({ file }, 'no admin yet: auth.createAdmin from another machine needs the setup token in this file'),
    });
    for (const hook of startHooks) await hook(container.cradle);

    const pluginInfo = plugins.map(p => p.info);
    log.info({ plugins: pluginInfo.map(p => `${p.name}@${p.version}`), database: endpoint.embedded ? 'embedded' : 'external' }, 'kernel ready');
    const ep = endpoint;
    const o = orm;
    const j = jobs;
    let stopped: Promise<void> | undefined;
    kernel = {
      app,
      config,
      container,
      plugins: pluginInfo,
      embedded: ep.embedded,
      configWarnings: warnings,
      database: { pool: ep.pool, ...(ep.server ? { server: ep.server } : {}) },
      routes,
      async listen() {
        const address = await app.listen({ port: config.port, host: config.host });
        if (config.jobs) await j.start();
        // Stored (an outbox row, say) before listen answers; sending is never awaited here.
        await container.cradle.events.emitDurable('platformStart', { at: new Date().toISOString() }).catch(err => log.error({ err }, 'the start could not be recorded for its subscribers'));
        return address;
      },
      stop() {
        stopped ??= (async () => {
          // Stop accepting, let in-flight requests finish; keep-alive connections that turn idle
          // are closed as they do, and after the grace period whatever is left is cut.
          const closing = app.close();
          const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
          const cut = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
          await closing;
          clearInterval(sweep);
          clearTimeout(cut);
          // What subscribers started after their emitters answered finishes first (an organization's
          // removal deletes its sign-in settings so): the pool closes with no query of theirs in it.
          if (!(await events.settled(SHUTDOWN_GRACE_MS))) log.warn('event subscribers still running at stop: the database closes under them');
          // Every step runs even when one fails (a lost database fails the first two), so the
          // embedded server is always stopped and the data directory unlocked.
          const failures: unknown[] = [];
          for (const step of [() => j.stop(), () => o.close(true), () => container.dispose(), () => ep.close()]) {
            await step().catch(e => void failures.push(e));
          }
          if (failures.length) throw failures[0];
        })();
        return stopped;
      },
    };
    return kernel;
  } catch (e) {
    await app.close().catch(() => {});
    await jobs?.stop().catch(() => {});
    await orm?.close(true).catch(() => {});
    await endpoint?.close().catch(() => {});
    throw e;
  }
}

export type { AwilixContainer, LoadedPlugin };
