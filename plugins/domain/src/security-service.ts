// Basic-auth users as the rest of Berth sees them: a user's view, with the password unsealed (the
// directory lists a workload's, as the peer does). security.* is security-requests.ts.
import type { SecretBox } from '@berth/core';
import type { SecurityRow } from './entities.ts';
import type { SecurityView } from './schemas.ts';

/** Registered as `securityService`; security.* is the request-scoped `securityRequests`. */
export class SecurityService {
  readonly #secrets: () => SecretBox;

  constructor(deps: { secrets: () => SecretBox }) {
    this.#secrets = deps.secrets;
  }

  view(row: SecurityRow): SecurityView {
    return { securityId: row.securityId, username: row.username, password: this.#secrets().decrypt(row.passwordSealed), createdAt: row.createdAt.toISOString(), applicationId: row.serviceId };
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** Basic-auth users as the rest of Berth sees them (their views); from the domain plugin. */
    securityService: SecurityService;
  }
}
