// <kind>.* for one request: a database kind's records and runs confined to the caller's
// organization, in the request's unit of work, so handlers pass only their input. Registered
// request-scoped per kind (see databasesOf); the deployer, the deploy queue and the workload
// registry keep using the kind's singleton service.
import { invalidField, optionalService, type Cradle } from '@berth/core';
import { placementOf } from '../views.ts';
import { serverRelation } from '../relations.ts';
import type { DatabaseRow } from './entity.ts';
import type { DatabaseKind } from './kind.ts';
import type { DatabaseService } from './service.ts';

const titles: Record<string, string> = {
  deploy: 'Deploy the database',
  start: 'Start the database',
  stop: 'Stop the database',
  reload: 'Reload (restart the database)',
  rebuild: 'Rebuild: a new service and an empty data volume',
};

/** The container name of a kind's request-scoped facade: postgresDatabases, redisDatabases… */
export const databasesOf = (kind: string) => `${kind}Databases`;

/** Makes the request-scoped facade of one database kind (registered under databasesOf(kind)). */
export const callerDatabases = (db: DatabaseService, workload: DatabaseKind) => (cradle: Cradle) => {
  const { principal, em, workloads } = cradle;
  const organizationId = principal!.organizationId;
  const assertAppNameFree = workloads.placement(organizationId); // a new record's serverId: one of the organization's servers
  const find = (id: string) => db.find(id, organizationId, em);
  return {
    /** Creates a database in one of the organization's environments. */
    create: (input: Record<string, unknown>) => db.create(input, organizationId, em, assertAppNameFree),
    /** The database with its environment and project, mounts, backups and connection URLs. */
    one: async (id: string) => view(await find(id)),
    /** Queues a run (deploy, start, stop, reload, rebuild); a given appName must be the database's. Answers the queued deployment's id. */
    async run(id: string, action: string, appName?: string) {
      const row = await find(id);
      if (appName !== undefined && row.appName !== appName) throw invalidField('appName', 'does not match the database');
      return enqueue(row, action);
    },
    /** Applies any subset of the API's fields. */
    change: (id: string, changes: Record<string, unknown>) => db.change(id, organizationId, changes, em, assertAppNameFree),
    /** Deletes the database with its service, data volume, mounts and deployments; answers the record as it was, with its relations. */
    async remove(id: string) {
      const row = await find(id);
      const answer = await view(row);
      await workload.remove(db.ref(row), em, { volumes: true });
      return answer;
    },
    /** Changes a password in the running database, then in the record. */
    async changePassword(id: string, password: string, type: 'user' | 'root') {
      const row = await find(id);
      await workload.deployer.changePassword(row, password, type);
      await db.change(row.id, organizationId, type === 'root' ? { databaseRootPassword: password } : { databasePassword: password }, em, assertAppNameFree);
    },
    /** Databases of the kind matching the given texts, paged. */
    search: (input: Record<string, unknown>) => db.search(input, organizationId, em),
    /** The database service's output. */
    readLogs: async (id: string, options: { tail: number; since: string; search?: string }) => workload.deployer.logs(await find(id), options),
  };

  /** The record with its relations and connection URLs, as `one` answers it. */
  async function view(row: DatabaseRow) {
    const environment = await placementOf(cradle, row.environmentId, organizationId, em);
    const directory = optionalService(cradle, 'mounts');
    const mounts = directory?.views((await directory.forServices(db.driver.kind, [row.id], em)).get(row.id) ?? []) ?? [];
    const backups = (await optionalService(cradle, 'backupDirectory')?.viewsFor(db.driver.kind, row.id, em)) ?? [];
    const creds = db.credentialsOf(row);
    const publicHost = cradle.config.publicUrl ? new URL(cradle.config.publicUrl).hostname : 'localhost';
    return {
      ...db.view(row),
      environment,
      mounts,
      server: await serverRelation(cradle, row.serverId, organizationId, em),
      backups,
      internalConnectionUrl: db.driver.connectionUrl(creds, row.appName, db.driver.internalPort),
      externalConnectionUrl: row.externalPort ? db.driver.connectionUrl(creds, publicHost, row.externalPort) : null,
    };
  }

  async function enqueue(row: DatabaseRow, action: string) {
    const d = await cradle.deployments.enqueue(
      { targetType: db.driver.kind, targetId: row.id, organizationId: row.organizationId, serverId: row.serverId ?? null, action, title: titles[action] ?? action },
      em,
    );
    return d.deploymentId;
  }
};

/** The request-scoped facade of one database kind. */
export type CallerDatabases = ReturnType<ReturnType<typeof callerDatabases>>;
