// @berth/provider-database-redis: the redis kind's driver.
export { RedisDriver } from './redis-driver.ts';
