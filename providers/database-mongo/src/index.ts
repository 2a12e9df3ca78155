// @berth/provider-database-mongo: the mongo kind's driver.
// The driver class is exported for extension: a compatible kind is a subclass with its own kind and label.
import { defineProvider, Type } from '@berth/core';
import { MongoDriver } from './mongo-driver.ts';

export default defineProvider({ contract: 'database', id: 'mongo', options: Type.Object({}, { additionalProperties: false }), create: () => new MongoDriver() });
export { MongoDriver, MONGO_PASSWORD_PATTERN } from './mongo-driver.ts';
