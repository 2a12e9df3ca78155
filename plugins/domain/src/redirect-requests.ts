// redirects.*: redirect rules of a workload (a regex over the full URL, a replacement, 301 or
// 302), applied to the proxy at once. Request-scoped: the caller's organization and the request's
// transaction come from the container.
import { invalidField } from '@berth/core';
import { nextConfigKey } from './domain-service.ts';
import { Redirect, type RedirectRow } from './entities.ts';
import { ProxyRequests } from './proxy-bound.ts';
import type { RedirectView } from './schemas.ts';

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

/** Registered asClass(...).scoped() as `redirectRequests`; the directory uses the singleton `redirectService`. */
export class RedirectRequests extends ProxyRequests {
  /** Adds a redirect to an application and routes it. */
  async create(input: RedirectFields & { applicationId: string }): Promise<RedirectView> {
    checkRegex(input.regex);
    const workload = await this.owners.fromInput({ applicationId: input.applicationId }, this.organizationId, this.em);
    const row = this.em.create(Redirect, { regex: input.regex, replacement: input.replacement, permanent: input.permanent, uniqueConfigKey: await nextConfigKey(this.em), ...this.ownedBy(workload) });
    return this.cradle.redirectService.view(await this.addRoute(row, workload));
  }

  /** A redirect of the organization. */
  async one(redirectId: string): Promise<RedirectView> {
    return this.cradle.redirectService.view(await this.#find(redirectId));
  }

  /** Changes a redirect and routes the change. */
  async update(input: RedirectFields & { redirectId: string }): Promise<RedirectView> {
    checkRegex(input.regex);
    const row = await this.#find(input.redirectId);
    return this.cradle.redirectService.view(await this.changeRoute(row, { regex: input.regex, replacement: input.replacement, permanent: input.permanent }));
  }

  /** Removes a redirect and its route; answers it as it was. */
  async remove(redirectId: string): Promise<RedirectView> {
    return this.cradle.redirectService.view(await this.changeRoute(await this.#find(redirectId), 'remove'));
  }

  /** One of the organization's redirects (NOT_FOUND otherwise). */
  #find(redirectId: string): Promise<RedirectRow> {
    return this.owned(Redirect, { redirectId }, 'Redirect');
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** redirects.* for the current request's caller (request scope only). */
    redirectRequests: RedirectRequests;
  }
}
