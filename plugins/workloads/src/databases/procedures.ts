// Every operation of one database kind, the same for all kinds: records through the service,
// runs (deploy, start, stop, reload, rebuild) through the deploy queue, the rest through the
// deployer's engine side.
import Type from 'typebox';
import { placementOf } from '../views.ts';
import type { DatabaseSchemas } from './schemas.ts';
import type { DatabaseService } from './service.ts';
import type { DatabaseKind } from './kind.ts';
import type { DatabaseRow } from './entity.ts';
import { optionalService, type Cradle, type ProcedureContext, invalidField, router, schema } from '@berth/core';
const { Ok } = schema;

const titles: Record<string, string> = {
  deploy: 'Deploy the database', start: 'Start the database', stop: 'Stop the database',
  reload: 'Reload (restart the database)', rebuild: 'Rebuild: a new service and an empty data volume',
};

const Queued = Type.Object({ deploymentId: Type.String(), status: Type.String(), title: Type.String(), action: Type.String(), createdAt: Type.String() });

export function databaseProcedures(db: DatabaseService, workload: DatabaseKind, s: DatabaseSchemas) {
  const { kind, label } = db.driver;
  const { deployer } = workload;
  const r = router(kind);
  const idOf = (i: Record<string, unknown>) => i[s.idKey] as string;
  const scope = (ctx: ProcedureContext) => ({ organizationId: ctx.principal.organizationId, em: ctx.cradle.em });
  const assertAppNameFree = (ctx: ProcedureContext) => ctx.cradle.workloads.assertAppNameFree.bind(ctx.cradle.workloads);

  const enqueue = async (row: DatabaseRow, action: string, cradle: Cradle) => {
    const d = await cradle.deployments.enqueue({
      targetType: kind, targetId: row.id, organizationId: row.organizationId, serverId: row.serverId ?? null, action, title: titles[action] ?? action,
    }, cradle.em);
    return { deploymentId: d.deploymentId, status: d.status, title: d.title, action: d.action, createdAt: d.createdAt, [s.idKey]: row.id };
  };
  const run = (name: string, summary: string, input = s.Id, check?: (row: DatabaseRow, i: Record<string, unknown>) => void) =>
    r.mutation(name, {
      summary, input, output: Type.Object({ ...Queued.properties, [s.idKey]: Type.String() }),
      async handler(i: unknown, ctx) {
        const input = i as Record<string, unknown>;
        const { organizationId, em } = scope(ctx);
        const row = await db.find(idOf(input), organizationId, em);
        check?.(row, input);
        return enqueue(row, name, ctx.cradle);
      },
    });
  const change = (name: string, summary: string, input: typeof s.Id, fields: (i: Record<string, unknown>) => Record<string, unknown>) =>
    r.mutation(name, {
      summary, input, output: s.Fields,
      handler(i: unknown, ctx) {
        const input = i as Record<string, unknown>;
        const { organizationId, em } = scope(ctx);
        return db.change(idOf(input), organizationId, fields(input), em, assertAppNameFree(ctx));
      },
    });

  return [
    r.mutation('create', {
      summary: `Create a ${label} database in an environment (current: environmentId; older: projectId → its default environment)`,
      input: s.Create, output: s.Fields,
      handler(i: unknown, ctx) {
        const { organizationId, em } = scope(ctx);
        return db.create(i as Record<string, unknown>, organizationId, em, assertAppNameFree(ctx));
      },
    }),
    r.query('one', {
      summary: `A ${label} database with its environment and project, mounts, backups and connection URLs`,
      input: s.Id, output: s.View,
      async handler(i: unknown, ctx) {
        const { organizationId, em } = scope(ctx);
        const row = await db.find(idOf(i as Record<string, unknown>), organizationId, em);
        const environment = await placementOf(ctx.cradle, row.environmentId, organizationId, em);
        const directory = optionalService(ctx.cradle, 'mounts');
        const mounts = directory?.views((await directory.forServices(kind, [row.id], em)).get(row.id) ?? []) ?? [];
        const creds = db.credentialsOf(row);
        const publicHost = ctx.cradle.config.publicUrl ? new URL(ctx.cradle.config.publicUrl).hostname : 'localhost';
        return {
          ...db.view(row),
          environment,
          mounts, backups: [],
          internalConnectionUrl: db.driver.connectionUrl(creds, row.appName, db.driver.internalPort),
          externalConnectionUrl: row.externalPort ? db.driver.connectionUrl(creds, publicHost, row.externalPort) : null,
        };
      },
    }),
    run('deploy', `Queue a deployment: the service is created or updated, then Berth waits until ${label} accepts connections`),
    run('start', 'Queue scaling the service back to its replicas'),
    run('stop', 'Queue scaling the service to zero; the status becomes idle'),
    run('reload', 'Queue a restart of the service with the same spec', s.Reload, (row, i) => {
      if (row.appName !== i.appName) throw invalidField('appName', 'does not match the database');
    }),
    run('rebuild', 'DESTRUCTIVE: queue removing the service and its data volume, then deploying it anew with empty data'),
    r.mutation('remove', {
      access: 'admin',
      summary: 'Delete the database: stops its deployments, removes its service, its data volume, its mounts and deployment records; answers the record as it was',
      input: s.Id, output: s.Fields,
      async handler(i: unknown, ctx) {
        const { organizationId, em } = scope(ctx);
        const row = await db.find(idOf(i as Record<string, unknown>), organizationId, em);
        const view = db.view(row);
        await workload.remove(db.ref(row), em, { volumes: true });
        return view;
      },
    }),
    change('update', `Change any field of the ${label} database`, s.Update, i => i),
    change('saveEnvironment', 'Set the environment variables (dotenv text; references allowed)', s.Environment, i => ({ env: i.env })),
    change('saveExternalPort', 'Publish the database on this port of the host (host mode), or stop publishing it (null); takes effect on the next deploy', s.ExternalPort, i => ({ externalPort: i.externalPort })),
    change('changeStatus', 'Set the status', s.Status, i => ({ applicationStatus: i.applicationStatus })),
    change('move', 'Move the database to another environment of the organization', s.Move, i => ({ environmentId: i.targetEnvironmentId })),
    r.mutation('changePassword', {
      summary: 'Change the password in the running database and in the record (type root: the root password, where the kind has one)',
      input: s.ChangePassword, output: Ok(),
      async handler(i: unknown, ctx) {
        const input = i as { password: string; type?: 'user' | 'root' } & Record<string, unknown>;
        const { organizationId, em } = scope(ctx);
        const row = await db.find(idOf(input), organizationId, em);
        const type = input.type ?? 'user';
        await deployer.changePassword(row, input.password, type);
        await db.change(row.id, organizationId, type === 'root' ? { databaseRootPassword: input.password } : { databasePassword: input.password }, em, assertAppNameFree(ctx));
        return true;
      },
    }),
    r.query('search', {
      summary: `${label} databases matching the given texts (case-insensitive substrings), newest first, paged`,
      input: s.Search, output: s.SearchResult,
      handler(i: unknown, ctx) {
        const { organizationId, em } = scope(ctx);
        return db.search(i as Record<string, unknown>, organizationId, em);
      },
    }),
    r.query('readLogs', {
      summary: 'The database service\'s output (last `tail` lines, `since` a duration, filtered by `search`)',
      input: s.ReadLogs, output: Type.String(),
      async handler(i: unknown, ctx) {
        const input = i as { tail?: number; since?: string; search?: string } & Record<string, unknown>;
        const { organizationId, em } = scope(ctx);
        const row = await db.find(idOf(input), organizationId, em);
        return deployer.logs(row, { tail: input.tail ?? 100, since: input.since ?? 'all', search: input.search });
      },
    }),
  ];
}
