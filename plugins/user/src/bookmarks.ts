// Template bookmarks (user.getBookmarkedTemplates, user.toggleTemplateBookmark): the catalog's
// template ids a user marked, in the order marked. A template id is stored as given, as the peer
// does (a template that leaves the catalog stays bookmarked until toggled off).
import { newId, badRequest, type EntityManager } from '@berth/core';
import { TemplateBookmark } from './entities.ts';

/** Bookmarks one user may keep: the catalog has a few hundred templates. */
export const MAX_BOOKMARKS = 1000;

/** The user's bookmarked template ids, oldest first. */
export async function bookmarkedTemplates(em: EntityManager, userId: string): Promise<string[]> {
  const rows = await em.find(TemplateBookmark, { userId }, { orderBy: { createdAt: 'asc', templateId: 'asc' } });
  return rows.map(r => r.templateId);
}

/** Bookmarks the template, or takes its bookmark away; answers whether it is bookmarked now. */
export async function toggleBookmark(em: EntityManager, userId: string, templateId: string): Promise<{ isBookmarked: boolean }> {
  const connection = em.getConnection();
  // Removed if present, else added; a concurrent add of the same one leaves it added (no duplicate, no error).
  const [removed] = await connection.execute<{ id: string }[]>(`delete from "template_bookmarks" where "user_id" = ? and "template_id" = ? returning "id"`, [userId, templateId]);
  if (removed) return { isBookmarked: false };
  if ((await em.count(TemplateBookmark, { userId })) >= MAX_BOOKMARKS)
    throw badRequest(`A user keeps at most ${MAX_BOOKMARKS} template bookmarks: remove one first`, [{ path: ['templateId'], message: `at most ${MAX_BOOKMARKS} bookmarks` }]);
  await connection.execute(`insert into "template_bookmarks" ("id", "user_id", "template_id", "created_at") values (?, ?, ?, now()) on conflict ("user_id", "template_id") do nothing`, [
    newId(),
    userId,
    templateId,
  ]);
  return { isBookmarked: true };
}
