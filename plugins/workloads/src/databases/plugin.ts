// A database kind as a plugin: its driver bound to the shared records, procedures and deployer.
// A kind's plugin is one line — `export default databasePlugin(new PostgresDriver(), { version })` —
// and a third party's sixth kind is the same line with its own driver.
import { databaseMigrations } from './entity.ts';
import { databaseSchemas } from './schemas.ts';
import { DatabaseService } from './service.ts';
import { DatabaseDeployer } from './deployer.ts';
import { databaseProcedures } from './procedures.ts';
import { type DatabaseDriver, EnvironmentFields, definePlugin } from '@berth/core';

export function databasePlugin(driver: DatabaseDriver, options: { version: string }) {
  return definePlugin({
    name: driver.kind,
    version: options.version,
    // Databases live in environments and run through the deploy queue.
    dependencies: ['workloads', 'environment', 'deployment'],
    setup(berth) {
      const cradle = () => berth.container.cradle;
      const db = new DatabaseService(driver, () => cradle().secrets, () => cradle().environments, () => cradle().hostPorts);
      const deployer = new DatabaseDeployer(db, cradle);
      berth.entities(db.entity);
      berth.migrations(...databaseMigrations(driver.kind));
      // Environments and projects list the kind's databases under its id (postgres, redis... or a third party's).
      if (Object.hasOwn(EnvironmentFields.properties, driver.kind)) throw new Error(`Database kind "${driver.kind}" would hide the environment's own field of that name`);
      berth.container.cradle.workloads.register({ key: driver.kind, list: (ids, em) => db.list(ids, em) });
      berth.container.cradle.workloads.addResolver(db.resolver);
      cradle().hostPorts.add({ holds: (port, protocol, serverId, em) => (protocol === 'tcp' ? db.portHolds(port, serverId, em) : Promise.resolve([])) });
      cradle().deployments.register(deployer);
      berth.procedures(...databaseProcedures(db, deployer, databaseSchemas(driver)));
    },
  });
}
