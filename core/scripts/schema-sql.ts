// Prints the CREATE statements MikroORM derives from a module's entities, to start a
// hand-checked migration: node core/scripts/schema-sql.ts <module> <exportName>
import { MikroORM } from '@mikro-orm/postgresql';
const [mod, name] = process.argv.slice(2);
const entities = (await import(new URL(mod!, `file://${process.cwd()}/`).href))[name!];
const orm = await MikroORM.init({ entities, dbName: 'x', connect: false, discovery: { warnWhenNoEntities: false } } as any);
console.log(await orm.schema.getCreateSchemaSQL({ wrap: false }));
await orm.close();
