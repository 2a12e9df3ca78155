// A third party's database kind, enabled with one config line:
//   "providers": { "database": { "valkey": { "resolve": "/path/to/database-valkey" } } }
// The whole provider is this descriptor: the databases plugin brings the table, every
// `valkey.*` procedure and the deployer for any enabled provider of contract "database".
import { defineProvider, Type } from '@berth/core';
import { ValkeyDriver } from './driver.ts';

export default defineProvider({ contract: 'database', id: 'valkey', options: Type.Object({}, { additionalProperties: false }), create: () => new ValkeyDriver() });
