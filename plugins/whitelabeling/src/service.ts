// The instance's whitelabeling as stored: read (every field, null where never set), replaced whole
// (the peer's update takes every field) and reset to nothing set. "" is stored as null: the
// empty-string rule reads it as "not set" (core/src/empty-strings.ts).
import type { EntityManager } from '@berth/core';
import { Whitelabeling } from './entities.ts';
import { PublicWhitelabelingConfig, WhitelabelingConfig } from './schemas.ts';

const KEY = 'instance';
const FIELDS = Object.keys(WhitelabelingConfig.properties) as (keyof WhitelabelingConfig)[];
const PUBLIC_FIELDS = Object.keys(PublicWhitelabelingConfig.properties) as (keyof PublicWhitelabelingConfig)[];

/** Every field, from what is stored (a field stored before it existed, or never: null). */
const complete = (stored: Partial<WhitelabelingConfig> | undefined): WhitelabelingConfig => Object.fromEntries(FIELDS.map(f => [f, stored?.[f] || null])) as WhitelabelingConfig;

export class WhitelabelingSettings {
  async get(em: EntityManager): Promise<WhitelabelingConfig> {
    return complete((await em.findOne(Whitelabeling, { key: KEY }))?.config);
  }

  /** The fields the pages without a session show. */
  async getPublic(em: EntityManager): Promise<PublicWhitelabelingConfig> {
    const config = await this.get(em);
    return Object.fromEntries(PUBLIC_FIELDS.map(f => [f, config[f]])) as PublicWhitelabelingConfig;
  }

  async set(config: WhitelabelingConfig, em: EntityManager): Promise<void> {
    await em.upsert(Whitelabeling, { key: KEY, config: complete(config), updatedAt: new Date() });
  }

  async reset(em: EntityManager): Promise<void> {
    await this.set(complete(undefined), em);
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** The instance's whitelabeling (whitelabeling.*). */
    whitelabeling: WhitelabelingSettings;
  }
}
