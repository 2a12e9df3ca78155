// Push to deploy. Each kind that deploys from a repository (its `push` in the workload registry)
// gets its hook at the peer's path, /api/deploy/[<hookPath>/]{refreshToken}: a plain route that
// answers its own status codes and needs no API key (the refresh token names the workload, its
// webhook secret, when set, must sign the delivery), and `<kind>.webhookDeliveries`, its log.
// /api/deploy/<forge> takes a forge app's deliveries (GitHub's App: /api/deploy/github) for every
// workload deploying the repository; links.ts registers webhooks on the repositories workloads link.
import { asValue, definePlugin, router, Type, type BerthHost } from '@berth/core';
import type { WorkloadKind } from '@berth/plugin-workloads';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { deployHookEntities } from './entities.ts';
import { deployHookMigrations } from './migrations.ts';
import { HookService } from './hooks.ts';

const Delivery = Type.Object({
  webhookDeliveryId: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  provider: Type.String({ description: "the forge's provider id (github, gitlab, gitea, bitbucket, a third party's), dockerhub, or generic (no forge's headers)" }),
  event: Type.String({ description: "the provider's event name" }),
  deliveryId: Type.Union([Type.String(), Type.Null()], { description: "the provider's delivery id" }),
  signatureOk: Type.Union([Type.Boolean(), Type.Null()], { description: 'true: verified; false: missing or wrong (refused); null: the workload has no webhook secret' }),
  statusCode: Type.Integer({ description: 'the HTTP status the hook answered' }),
  decision: Type.String({ description: '"deployment queued", or why nothing was deployed' }),
  deploymentId: Type.Union([Type.String(), Type.Null()]),
  ref: Type.Union([Type.String(), Type.Null()]),
  commit: Type.Union([Type.String(), Type.Null()]),
});

const Answer = Type.Object({
  message: Type.String(),
  reason: Type.Optional(Type.String({ description: 'why nothing was deployed' })),
  deploymentId: Type.Optional(Type.String({ description: 'the deployment queued (or made by the first delivery of a redelivered id)' })),
  workloads: Type.Optional(
    Type.Array(
      Type.Object({
        kind: Type.String({ description: 'application or compose' }),
        id: Type.String(),
        name: Type.String(),
        statusCode: Type.Integer({ description: '202: queued; 200: why not (reason)' }),
        deploymentId: Type.Optional(Type.String()),
        reason: Type.Optional(Type.String()),
      }),
      { description: "A forge app's deliveries: what each workload deploying the repository did" },
    ),
  ),
});

/** Providers deliver JSON (GitHub may send it form-encoded as `payload`); the raw bytes are what is signed. */
function bodyOf(raw: Buffer, contentType: string | undefined): Record<string, unknown> {
  try {
    const text = raw.toString('utf8');
    const json = contentType?.includes('application/x-www-form-urlencoded') ? (new URLSearchParams(text).get('payload') ?? '') : text;
    const value: unknown = json.trim() ? JSON.parse(json) : {};
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function routes(berth: BerthHost, hooks: HookService, kinds: () => WorkloadKind[]) {
  return async (app: Parameters<Parameters<BerthHost['http']>[0]>[0]) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 5 * 1024 * 1024 }, (_req, body, done) => done(null, body));
    const handle = async (req: { ip: string; params: unknown; headers: Record<string, string | string[] | undefined>; body: unknown }, reply: { code(n: number): { send(b: unknown): unknown } }) => {
      const { refreshToken, hookPath = '' } = req.params as { refreshToken: string; hookPath?: string };
      const kind = kinds().find(k => k.push?.hookPath === hookPath);
      if (!kind) return reply.code(404).send({ message: `No workload kind takes pushes at /api/deploy/${hookPath ? `${hookPath}/` : ''}{refreshToken}` });
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const em = berth.container.cradle.orm.em.fork();
      const answer = await hooks.receive(kind, refreshToken, req.headers, raw, bodyOf(raw, req.headers['content-type'] as string | undefined), em, req.ip);
      return reply.code(answer.status).send(answer.body);
    };
    // A forge whose deliveries have an app (GitHub's App) takes them at /api/deploy/<forge>.
    for (const forge of berth.container.cradle.providers.all('git')) {
      const reader = forge.deliveries;
      if (!reader?.app) continue;
      app.post(
        `/api/deploy/${forge.id}`,
        {
          schema: {
            tags: ['deploy'],
            operationId: `deploy-${forge.id}`,
            // No credential: the delivery's signature with a connection's webhook secret authenticates it.
            'x-berth-scope': 'public',
            summary: `Push to deploy from a ${forge.label} App's webhook: signed (${reader.signatureHeader}) with the webhook secret of a ${forge.label} connection, it deploys every application and compose stack that deploys the delivery's repository through that connection. 202: queued (workloads says what each did); 200: why nothing was deployed; 401: signature missing or wrong`,
            response: { 200: Answer, 202: Answer, 401: Answer, 404: Answer },
          },
        },
        async (req, reply) => {
          const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
          const em = berth.container.cradle.orm.em.fork();
          const answer = await hooks.receiveApp(forge, kinds(), req.headers, raw, bodyOf(raw, req.headers['content-type']), em, req.ip);
          return reply.code(answer.status as 200).send(answer.body); // cast: the hook answers only the statuses the schema lists
        },
      );
    }
    const Token = Type.String({ maxLength: 255, description: "the workload's refreshToken" });
    const schema = (summary: string, params: Record<string, ReturnType<typeof Type.String>>, operationId: string) => ({
      // No credential: the workload's refreshToken in the path (and its webhookSecret's signature, when set) authenticates it.
      schema: { tags: ['deploy'], operationId, 'x-berth-scope': 'public', summary, params: Type.Object(params), response: { 200: Answer, 202: Answer, 401: Answer, 404: Answer } },
    });
    const forges = berth.container.cradle.providers
      .all('git')
      .filter(p => p.deliveries)
      .map(p => p.label);
    const what = `a ${[...forges, 'Docker Hub'].join(', ')} or plain delivery; no API key, signed when the workload has a webhookSecret. 202: queued; 200: why nothing was deployed; 401: signature missing, wrong or stale`;
    // The kinds are registered by plugins that may be set up after this one: the kind is found per request.
    // casts: Fastify's route types follow the schema's TypeBox params, which the handler reads as strings.
    app.post('/api/deploy/:refreshToken', schema(`Push to deploy the workload of the kind whose push hookPath is empty: ${what}`, { refreshToken: Token }, 'deploy-refreshToken'), handle as never);
    app.post(
      '/api/deploy/:hookPath/:refreshToken',
      schema(`Push to deploy the workload of the kind whose push hookPath this is: ${what}`, { hookPath: Type.String({ maxLength: 64 }), refreshToken: Token }, 'deploy-hookPath-refreshToken'),
      handle as never, // cast: as above
    );
  };
}

export default definePlugin({
  name: 'deploy-hook',
  version: pkg.version,
  config,
  dependencies: ['workloads', 'deployment'],
  uses: ['git-provider', 'audit-log'], // used when enabled (optionalService): forge apps' deliveries; the audit log's entries of deliveries
  setup(berth) {
    const cradle = () => berth.container.cradle;
    const hooks = new HookService(berth.config, cradle);
    const pushing = () =>
      cradle()
        .workloads.kinds()
        .filter(k => k.push);
    berth.entities(...deployHookEntities);
    berth.migrations(...deployHookMigrations);
    berth.provide({ deployHooks: asValue(hooks), workloadHooks: asValue(hooks) });
    berth.http(routes(berth, hooks, pushing));
    berth.procedures(() =>
      pushing().map(kind =>
        router(kind.kind, 'organization').query('webhookDeliveries', {
          permission: 'deployment.read',
          summary: `The deliveries its push hook received, newest first (the last webhookDeliveriesKept): provider, event, delivery id, whether the signature held, the answer, the deployment queued`,
          input: Type.Object({ [kind.idField]: Type.String({ minLength: 1, maxLength: 255 }) }),
          output: Type.Array(Delivery),
          handler: (input, ctx) => hooks.log(kind, (input as Record<string, string>)[kind.idField]!, ctx.principal.organizationId, ctx.cradle.em),
        }),
      ),
    );
  },
});

declare module '@berth/core' {
  interface Cradle {
    /** The push hooks and their delivery log. */
    deployHooks: HookService;
  }
}

export type { HookAnswer, HookService, PullRequestHandler } from './hooks.ts';
