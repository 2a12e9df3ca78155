// Redirects as the rest of Berth sees them: a redirect rule's view (the directory lists a
// workload's). redirects.* is redirect-requests.ts.
import type { RedirectRow } from './entities.ts';
import type { RedirectView } from './schemas.ts';

/** Registered as `redirectService`; redirects.* is the request-scoped `redirectRequests`. */
export class RedirectService {
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
}

declare module '@berth/core' {
  interface Cradle {
    /** Redirects as the rest of Berth sees them (their views); from the domain plugin. */
    redirectService: RedirectService;
  }
}
