// Every operation of one database kind, the same for all kinds: records through the service,
// runs (deploy, start, stop, reload, rebuild) through the deploy queue (answering the peer's
// body, the deployment's id in a header: runs.ts), the rest through the
// deployer's engine side — all through the kind's request-scoped DatabaseRequests (requests.ts).
import Type, { type Static } from 'typebox';
import { databaseView, type DatabaseSchemas, type IdKey, type WithId } from './schemas.ts';
import { databasesOf, type DatabaseRequests } from './requests.ts';
import { relationSchemas } from '../relations.ts';
import { runProcedure } from '../runs.ts';
import { type Cradle, type DatabaseDriver, type Need, type OptionalDatabaseProcedure, type ProcedureContext, router, schema } from '@berth/core';
const { Ok } = schema;

/** Made once every plugin is set up: the relations' schemas are their plugins'. The driver's declarations decide what create answers, which procedures are left out and whether saveExternalPorts is served. */
export function databaseProcedures(driver: DatabaseDriver, s: DatabaseSchemas, cradle: Cradle) {
  const { kind, label } = driver;
  const r = router(kind, 'organization');
  const omitted = new Set<OptionalDatabaseProcedure>(driver.omitProcedures ?? []);
  /** The procedure unless the driver leaves it out. */
  const unless = <P>(name: OptionalDatabaseProcedure, make: () => P): P[] => (omitted.has(name) ? [] : [make()]);
  const View = databaseView(s.Fields, relationSchemas(cradle));
  const { idKey } = s;
  /** The database an input names (every input but create's and search's carries the kind's id key, required by its schema). */
  const idOf = (input: Record<IdKey, string>): string => input[idKey]!;
  // The kind's request service is registered under a name of its own (one per kind), so it is resolved by that name.
  const databases = (ctx: ProcedureContext) => ctx.scope.resolve<DatabaseRequests>(databasesOf(kind));

  // The peer answers the record with its relations for deploy, start and stop, and true for reload and rebuild.
  const run = (name: string, summary: string, answer: 'true' | 'view') =>
    answer === 'view'
      ? runProcedure(r, name, { summary, input: s.Id, output: View, queue: (input, ctx) => databases(ctx).run(idOf(input), name), answer: (input, ctx) => databases(ctx).one(idOf(input)) })
      : runProcedure(r, name, { summary, input: s.Id, output: Ok(), queue: (input, ctx) => databases(ctx).run(idOf(input), name), answer: () => true });
  /** What reaches the host is the operator's to grant (403 naming the field and the config key). */
  const assertNetworks = (i: unknown, ctx: ProcedureContext) => ctx.cradle.hostAccess.assertNetworks(ctx.principal, (i as { networkSwarm?: { Target?: string }[] | null }).networkSwarm);
  /** An operation that changes some of the record's fields, taken from its input; it answers what the peer's does. */
  const change = <I extends WithId>(name: string, summary: string, input: I, fields: (i: Static<I>) => Record<string, unknown>, answer: 'true' | 'record' | 'view') => {
    // Variables are their own permission (envVars); the status is a deployment's; every other change is the service's.
    const permission: Need = name === 'saveEnvironment' ? 'envVars.write' : name === 'changeStatus' ? 'deployment.create' : 'service.create';
    return answer === 'true'
      ? r.mutation(name, {
          permission,
          summary: `${summary}; answers true`,
          input,
          output: Ok(),
          async handler(i, ctx) {
            await assertNetworks(i, ctx);
            await databases(ctx).change(idOf(i), fields(i));
            return true;
          },
        })
      : r.mutation(name, {
          permission,
          summary,
          input,
          output: answer === 'view' ? View : s.Fields,
          async handler(i, ctx) {
            await assertNetworks(i, ctx);
            const changed = await databases(ctx).change(idOf(i), fields(i));
            return answer === 'view' ? databases(ctx).one(idOf(i)) : changed;
          },
        });
  };

  const createSummary = `Create a ${label} database in an environment (current: environmentId; older: projectId → its default environment)`;
  return [
    driver.createAnswer === 'true'
      ? r.mutation('create', {
          permission: 'service.create',
          summary: `${createSummary}; answers true, as the peer's`,
          input: s.Create,
          output: Ok(),
          handler: async (input, ctx) => Boolean(await databases(ctx).create(input)),
        })
      : r.mutation('create', { permission: 'service.create', summary: createSummary, input: s.Create, output: s.Fields, handler: (input, ctx) => databases(ctx).create(input) }),
    r.query('one', {
      permission: 'service.read',
      summary: `A ${label} database with its environment and project, mounts, backups and connection URLs`,
      input: s.Id,
      output: View,
      handler: (input, ctx) => databases(ctx).one(idOf(input)),
    }),
    run('deploy', `Queue a deployment: the service is created or updated, then Berth waits until ${label} accepts connections; answers the database`, 'view'),
    run('start', 'Queue scaling the service back to its replicas; answers the database', 'view'),
    run('stop', 'Queue scaling the service to zero (the status becomes idle); answers the database', 'view'),
    runProcedure(r, 'reload', {
      summary: 'Queue a restart of the service with the same spec; answers true',
      input: s.Reload,
      output: Ok(),
      queue: (input, ctx) => databases(ctx).run(idOf(input), 'reload', input.appName),
      answer: () => true,
    }),
    run('rebuild', 'DESTRUCTIVE: queue removing the service and its data volume, then deploying it anew with empty data; answers true', 'true'),
    r.mutation('remove', {
      permission: 'service.delete',
      summary: 'Delete the database: stops its deployments, removes its service, its data volume, its mounts and deployment records; answers the record as it was, with its relations',
      input: s.Id,
      output: View,
      handler: (input, ctx) => databases(ctx).remove(idOf(input)),
    }),
    change('update', `Change any field of the ${label} database`, s.Update, i => i, 'true'),
    change('saveEnvironment', 'Set the environment variables (dotenv text; references allowed)', s.Environment, i => ({ env: i.env }), 'true'),
    ...unless('saveExternalPort', () =>
      change(
        'saveExternalPort',
        'Publish the database on this port of the host (host mode), or stop publishing it (null); takes effect on the next deploy',
        s.ExternalPort,
        i => ({ externalPort: i.externalPort }),
        'view',
      ),
    ),
    ...(driver.extraPorts
      ? [
          runProcedure(r, 'saveExternalPorts', {
            summary: `Publish the database's ports on the host (${Object.entries({ externalPort: driver.internalPort, ...driver.extraPorts })
              .map(([field, port]) => `${field} → ${port}`)
              .join(', ')}; host mode; null stops publishing one; at least one must be given) and queue a deployment that applies them; answers the database as it was`,
            input: s.ExternalPorts,
            output: View,
            answer: (input, ctx) => databases(ctx).one(idOf(input as Record<IdKey, string>)),
            queue: async (input, ctx) => {
              // The port fields are the driver's (extraPorts): the input is read as a record of them.
              const { [idKey]: id, ...ports } = input as Record<string, unknown>;
              await databases(ctx).savePorts(String(id), ports as Record<string, number | null | undefined>);
              return databases(ctx).run(String(id), 'deploy');
            },
          }),
        ]
      : []),
    change('changeStatus', 'Set the status', s.Status, i => ({ applicationStatus: i.applicationStatus }), 'view'),
    change('move', 'Move the database to another environment of the organization', s.Move, i => ({ environmentId: i.targetEnvironmentId }), 'record'),
    ...unless('changePassword', () =>
      r.mutation('changePassword', {
        permission: 'service.create',
        summary: 'Change the password in the running database and in the record (type root: the root password, where the kind has one)',
        input: s.ChangePassword,
        output: Ok(),
        async handler(input, ctx) {
          await databases(ctx).changePassword(idOf(input), input.password, input.type ?? 'user');
          return true;
        },
      }),
    ),
    ...unless('search', () =>
      r.query('search', {
        permission: 'member',
        summary: `${label} databases matching the given texts (case-insensitive substrings), newest first, paged`,
        input: s.Search,
        output: s.SearchResult,
        handler: (input, ctx) => databases(ctx).search(input),
      }),
    ),
    r.query('readLogs', {
      permission: 'service.read',
      summary: "The database service's output (last `tail` lines, `since` a duration, filtered by `search`)",
      input: s.ReadLogs,
      output: Type.String(),
      handler: (input, ctx) => databases(ctx).readLogs(idOf(input), { tail: input.tail ?? 100, since: input.since ?? 'all', search: input.search }),
    }),
  ];
}
