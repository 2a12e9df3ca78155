// The columns every Berth table declares alike, written once: a Berth id is newId()'s 32
// characters, so a table's own key, the organization it belongs to and its references to other
// records all have that one type.
import { p } from '@mikro-orm/core';
import { newId } from './crypto.ts';

/** A column holding a Berth id: the organization's, or another record's. */
export const berthId = () => p.string().length(32);

/** The table's primary key: a Berth id made when the record is created, unless given. */
export const primaryId = () =>
  berthId()
    .primary()
    .onCreate(() => newId());

/** When the record was created (now, unless given). */
export const createdAt = () => p.datetime().onCreate(() => new Date());
