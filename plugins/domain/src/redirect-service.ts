// redirects.*: redirect rules of a workload (a regex over the full URL, a replacement, 301 or
// 302), applied to the proxy at once.
import { invalidField, notFound, type Cradle, type EntityManager } from '@berth/core';
import { Redirect, type RedirectRow } from './entities.ts';
import { nextConfigKey } from './domain-service.ts';
import type { ProxyRouting } from './routing.ts';
import type { RedirectView } from './schemas.ts';
import type { WorkloadOwners } from './workload-owner.ts';

interface RedirectFields {
  regex: string;
  replacement: string;
  permanent: boolean;
}

function checkRegex(regex: string): void {
  try {
    new RegExp(regex);
  } catch (e) {
    throw invalidField('regex', `not a regular expression: ${(e as Error).message}`);
  }
}

export class RedirectService {
  readonly #routing: ProxyRouting;
  readonly #owners: WorkloadOwners;

  constructor(deps: { routing: ProxyRouting; owners: WorkloadOwners }) {
    this.#routing = deps.routing;
    this.#owners = deps.owners;
  }

  view(row: RedirectRow): RedirectView {
    return {
      redirectId: row.redirectId,
      regex: row.regex,
      replacement: row.replacement,
      permanent: row.permanent,
      uniqueConfigKey: row.uniqueConfigKey,
      createdAt: row.createdAt.toISOString(),
      applicationId: row.serviceId,
    };
  }

  async create(input: RedirectFields & { applicationId: string }, organizationId: string, em: EntityManager): Promise<RedirectRow> {
    checkRegex(input.regex);
    const workload = await this.#owners.fromInput({ applicationId: input.applicationId }, organizationId, em);
    const row = em.create(Redirect, {
      regex: input.regex,
      replacement: input.replacement,
      permanent: input.permanent,
      uniqueConfigKey: await nextConfigKey(em),
      serviceType: workload.kind,
      serviceId: workload.id,
      organizationId,
      createdAt: new Date(),
    });
    await em.flush();
    await this.#routing.sync(workload, em);
    return row;
  }

  async one(redirectId: string, organizationId: string, em: EntityManager): Promise<RedirectRow> {
    const row = await em.findOne(Redirect, { redirectId, organizationId });
    if (!row) throw notFound('Redirect');
    return row;
  }

  async update(input: RedirectFields & { redirectId: string }, organizationId: string, em: EntityManager): Promise<RedirectRow> {
    checkRegex(input.regex);
    const row = await this.one(input.redirectId, organizationId, em);
    Object.assign(row, { regex: input.regex, replacement: input.replacement, permanent: input.permanent });
    await em.flush();
    await this.#routing.syncOwnerOf(row, em);
    return row;
  }

  async remove(redirectId: string, organizationId: string, em: EntityManager): Promise<RedirectRow> {
    const row = await this.one(redirectId, organizationId, em);
    await em.remove(row).flush();
    await this.#routing.syncOwnerOf(row, em);
    return row;
  }
}

export const callerRedirects =
  (redirects: RedirectService) =>
  ({ principal, em }: Cradle) => {
    const organizationId = principal!.organizationId;
    return {
      create: async (input: RedirectFields & { applicationId: string }) => redirects.view(await redirects.create(input, organizationId, em)),
      one: async (redirectId: string) => redirects.view(await redirects.one(redirectId, organizationId, em)),
      update: async (input: RedirectFields & { redirectId: string }) => redirects.view(await redirects.update(input, organizationId, em)),
      remove: async (redirectId: string) => redirects.view(await redirects.remove(redirectId, organizationId, em)),
    };
  };

declare module '@berth/core' {
  interface Cradle {
    callerRedirects: ReturnType<ReturnType<typeof callerRedirects>>;
  }
}
