// The filter behind every `<namespace>.search` operation: q matches name or description,
// name and description match their own field; all case-insensitive substrings, with the
// caller's % and _ taken literally.

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
