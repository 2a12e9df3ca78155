// The peer's settings.* whose answers describe the instance itself, as its self-hosted instance
// answers them: whether it is up (health), that it is no cloud (isCloud, getDokployCloudIps), its
// release tag, whether the organization has started (isUserSubscribed), and the Redis operations,
// refused as a self-hosted peer without Redis refuses them: Berth runs no Redis (its queue and
// jobs are in PostgreSQL). docs/api.md lists each such answer.
import { BerthError, optionalService, router, Type, unavailable, type ProcedureContext } from '@berth/core';
import { Health } from './schemas.ts';

const settings = router('settings', 'organization');

/** Why the Redis operations find nothing to act on. */
export const NO_REDIS =
  'Berth runs no Redis: its deployment queue and jobs are kept in PostgreSQL (as the peer has kept its queue in memory since v0.29.9), so there is no Redis container to clean or restart';

/** The organization has started: it has a server or a project (the peer's answer). */
async function started(ctx: ProcedureContext): Promise<boolean> {
  const { organizationId } = ctx.principal;
  const servers = optionalService(ctx.cradle, 'servers');
  if (servers && (await servers.count(organizationId, ctx.cradle.em)) > 0) return true;
  const projects = optionalService(ctx.cradle, 'projectRequests');
  return ((await projects?.all()) ?? []).length > 0;
}

export const selfHostedProcedures = (version: string) => [
  settings.query('health', {
    scope: 'public',
    summary: "Whether Berth answers and reaches its database: {status: 'ok'}, else 503 (no credential needed, for load balancers and the peer's clients that poll it)",
    input: Type.Object({}),
    output: Health,
    handler: async (_input, ctx) => {
      try {
        await ctx.cradle.em.getConnection().execute('select 1');
      } catch {
        throw unavailable("Berth's database does not answer");
      }
      return { status: 'ok' as const };
    },
  }),
  settings.query('isCloud', { scope: 'public', summary: 'false: Berth is self-hosted (the peer answers true on its own cloud)', input: Type.Object({}), output: Type.Boolean(), handler: () => false }),
  settings.query('getDokployCloudIps', {
    permission: 'organization.update',
    access: 'admin',
    summary: "The peer's cloud's addresses to allow in a firewall: none, as a self-hosted peer answers (Berth is no cloud)",
    input: Type.Object({}),
    output: Type.Array(Type.String()),
    handler: () => [],
  }),
  settings.query('getReleaseTag', {
    permission: 'member',
    summary: 'The release Berth runs, as a tag (v<version>): where the peer answers its image\'s tag ("latest", "canary"), Berth, which runs from its release\'s files, answers that release',
    input: Type.Object({}),
    output: Type.String(),
    handler: () => `v${version}`,
  }),
  settings.query('isUserSubscribed', {
    permission: 'member',
    summary: "Whether the caller's organization has started: it has a server or a project (the peer's answer; Berth bills nothing, docs/ai-and-billing.md)",
    input: Type.Object({}),
    output: Type.Boolean(),
    handler: (_input, ctx) => started(ctx),
  }),
  ...(['cleanRedis', 'reloadRedis'] as const).map(name =>
    settings.mutation(name, {
      scope: 'instance',
      access: 'admin',
      permission: 'organization.update',
      summary: `${name === 'cleanRedis' ? 'Empty' : 'Restart'} the peer's Redis: refused (404), as a self-hosted peer without Redis refuses it — Berth runs no Redis, its queue and jobs are in PostgreSQL`,
      input: Type.Object({}),
      output: Type.Boolean(),
      handler: () => {
        throw new BerthError('NOT_FOUND', `Redis container not found. ${NO_REDIS}`);
      },
    }),
  ),
];
