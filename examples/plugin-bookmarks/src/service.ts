import { conflict, iso, notFound, type Cradle, type Static } from '@berth/core';
import { Bookmark } from './entities.ts';
import type { BookmarkView, CreateBookmark } from './schemas.ts';

type Row = InstanceType<typeof Bookmark.class>;
const view = (b: Row): Static<typeof BookmarkView> => ({
  bookmarkId: b.bookmarkId,
  organizationId: b.organizationId,
  projectId: b.projectId ?? null,
  url: b.url,
  title: b.title,
  weight: b.weight,
  createdAt: iso(b.createdAt)!,
});

/** Request-scoped: confined to the caller's organization. */
export class BookmarkService {
  readonly #c: Cradle;
  constructor(cradle: Cradle) {
    this.#c = cradle;
  }
  get #org() {
    return this.#c.principal!.organizationId;
  }
  async create(input: Static<typeof CreateBookmark>) {
    const { em, projects, config } = this.#c;
    // The plugin's own configuration key, read from the configuration in the container.
    if ((await em.count(Bookmark, { organizationId: this.#org })) >= config.bookmarksPerOrganization) {
      throw conflict(`This organization keeps ${config.bookmarksPerOrganization} bookmarks already (config bookmarks.bookmarksPerOrganization, env BERTH_BOOKMARKS_LIMIT)`);
    }
    // Uses the project plugin's service through the container, never its files.
    if (input.projectId) await projects.assertInOrganization(input.projectId, this.#org, em);
    // cast: MikroORM's create wants every column; the defaults fill the rest.
    const b = em.create(Bookmark, { organizationId: this.#org, url: input.url, title: input.title, weight: input.weight ?? 0, projectId: input.projectId ?? null } as never);
    await em.flush();
    return view(b as Row);
  }
  async all() {
    return (await this.#c.em.find(Bookmark, { organizationId: this.#org }, { orderBy: { weight: 'desc', createdAt: 'asc' } })).map(view);
  }
  async remove(bookmarkId: string) {
    const b = await this.#c.em.findOne(Bookmark, { bookmarkId, organizationId: this.#org });
    if (!b) throw notFound('Bookmark');
    await this.#c.em.remove(b).flush();
    return view(b);
  }
}
