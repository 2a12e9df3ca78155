// A database kind as a plugin: its driver bound to the shared records, procedures and deployer,
// registered as a workload kind. A kind's plugin is one line —
// `export default databasePlugin(new PostgresDriver(), { version })` — and a third party's
// sixth kind is the same line with its own driver.
import { asFunction, definePlugin, EnvironmentFields, type DatabaseDriver } from '@berth/core';
import { databaseMigrations } from './entity.ts';
import { databaseSchemas } from './schemas.ts';
import { DatabaseService } from './service.ts';
import { DatabaseDeployer } from './deployer.ts';
import { DatabaseKind } from './kind.ts';
import { databaseProcedures } from './procedures.ts';
import { callerDatabases, databasesOf } from './requests.ts';

export function databasePlugin(driver: DatabaseDriver, options: { version: string }) {
  return definePlugin({
    name: driver.kind,
    version: options.version,
    // Databases are workloads: they live in environments and run through the deploy queue.
    dependencies: ['workloads', 'environment', 'deployment'],
    setup(berth) {
      const cradle = () => berth.container.cradle;
      const db = new DatabaseService(driver, () => cradle().secrets, () => cradle().environments, () => cradle().hostPorts);
      const deployer = new DatabaseDeployer(db, cradle);
      const kind = new DatabaseKind(db, deployer, cradle);
      berth.entities(db.entity);
      berth.migrations(...databaseMigrations(driver.kind));
      // Environments and projects list the kind's databases under its id (postgres, redis... or a third party's).
      if (Object.hasOwn(EnvironmentFields.properties, driver.kind)) throw new Error(`Database kind "${driver.kind}" would hide the environment's own field of that name`);
      cradle().workloads.register(kind);
      cradle().hostPorts.add({ holds: (port, protocol, serverId, em) => (protocol === 'tcp' ? db.portHolds(port, serverId, em) : Promise.resolve([])) });
      const facade = databasesOf(driver.kind);
      if (berth.container.hasRegistration(facade)) throw new Error(`Database kind "${driver.kind}" would take the container name "${facade}", which is already registered`);
      berth.provide({ [facade]: asFunction(callerDatabases(db, kind)).scoped() });
      const schemas = databaseSchemas(driver);
      berth.procedures(() => databaseProcedures(driver.kind, driver.label, schemas, cradle()));
    },
  });
}
