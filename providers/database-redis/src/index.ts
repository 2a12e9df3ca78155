// @berth/provider-database-redis: the redis kind's driver.
// The driver class is exported for extension: a compatible kind is a subclass with its own kind and label.
import { defineProvider, Type } from '@berth/core';
import { RedisDriver } from './redis-driver.ts';

export default defineProvider({ contract: 'database', id: 'redis', options: Type.Object({}, { additionalProperties: false }), create: () => new RedisDriver() });
export { RedisDriver } from './redis-driver.ts';
