// @berth/provider-database-mongo: the mongo kind's driver.
export { MongoDriver, MONGO_PASSWORD_PATTERN } from './mongo-driver.ts';
