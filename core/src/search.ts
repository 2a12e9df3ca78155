// The filter behind every `<namespace>.search` operation: q matches name or description,
// name and description match their own field; all case-insensitive substrings, with the
// caller's % and _ taken literally.
import type { EntityName, FilterQuery, Loaded, OrderDefinition } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';

/** A LIKE pattern matching `text` anywhere. */
export const containing = (text: string) => `%${text.replace(/[\\%_]/g, c => `\\${c}`)}%`;

export interface TextSearch {
  q?: string;
  name?: string;
  description?: string;
}

/** MikroORM filter clauses for a text search, to be and-ed with the caller's own (organization, parent). */
export function textSearchClauses({ q, name, description }: TextSearch): object[] {
  const and: object[] = [];
  const query = q?.trim();
  if (query) and.push({ $or: [{ name: { $ilike: containing(query) } }, { description: { $ilike: containing(query) } }] });
  const n = name?.trim();
  if (n) and.push({ name: { $ilike: containing(n) } });
  const d = description?.trim();
  if (d) and.push({ description: { $ilike: containing(d) } });
  return and;
}

/**
 * One page of a `<namespace>.search`: the records matching every clause, newest first (ties by
 * `idField`, so pages do not overlap), and how many match in all. The page defaults to the first 20,
 * as schema.Paging declares.
 */
export function searchPage<E extends object>(
  em: EntityManager,
  entity: EntityName<E>,
  and: object[],
  idField: keyof E & string,
  page: { limit?: number; offset?: number },
): Promise<[Loaded<E>[], number]> {
  const orderBy = { createdAt: 'desc', [idField]: 'asc' } as OrderDefinition<NoInfer<E>>;
  return em.findAndCount<E>(entity, { $and: and } as FilterQuery<NoInfer<E>>, { orderBy, limit: page.limit ?? 20, offset: page.offset ?? 0 });
}
