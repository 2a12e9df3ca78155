// A database kind: its driver bound to the shared records, procedures and deployer, registered
// as a workload kind with its `<kind>.*` namespace. The databases plugin binds every enabled
// provider of contract "database" (built-in or a third party's) this way: no plugin per kind.
import { asFunction, EnvironmentFields, type BerthHost, type Cradle, type DatabaseDriver } from '@berth/core';
import { databaseMigrations } from './entity.ts';
import { databaseSchemas } from './schemas.ts';
import { DatabaseService } from './service.ts';
import { DatabaseDeployer } from './deployer.ts';
import { DatabaseKind } from './kind.ts';
import { databaseProcedures } from './procedures.ts';
import { databasesOf, DatabaseRequests } from './requests.ts';

export function bindDatabaseKind(berth: BerthHost, driver: DatabaseDriver): void {
  const cradle = () => berth.container.cradle;
  const db = new DatabaseService(driver, () => cradle().secrets);
  const deployer = new DatabaseDeployer(db, cradle);
  const kind = new DatabaseKind(db, deployer, cradle);
  berth.entities(db.entity);
  berth.migrations(...databaseMigrations(driver.kind));
  // Environments and projects list the kind's databases under its id (postgres, redis... or a third party's).
  if (Object.hasOwn(EnvironmentFields.properties, driver.kind)) throw new Error(`Database kind "${driver.kind}" would hide the environment's own field of that name`);
  cradle().workloads.register(kind);
  cradle().hostPorts.add({ holds: (port, protocol, serverId, em) => (protocol === 'tcp' ? db.portHolds(port, serverId, em) : Promise.resolve([])) });
  const requests = databasesOf(driver.kind);
  if (berth.container.hasRegistration(requests)) throw new Error(`Database kind "${driver.kind}" would take the container name "${requests}", which is already registered`);
  // One class serves every kind: each request's instance is made with this kind's service and workload kind.
  berth.provide({ [requests]: asFunction((scope: Cradle) => new DatabaseRequests(scope, db, kind)).scoped() });
  const schemas = databaseSchemas(driver);
  berth.procedures(() => databaseProcedures(driver, schemas, cradle()));
}
