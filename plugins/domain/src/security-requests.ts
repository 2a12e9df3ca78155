// security.*: basic-auth users of a workload. The password is stored sealed (security.one
// answers it, as the peer does) with its bcrypt hash, sealed too, which is all the proxy gets.
// Request-scoped: the caller's organization and the request's transaction come from the container.
import bcrypt from 'bcryptjs';
import { conflict } from '@berth/core';
import { Security, type SecurityRow } from './entities.ts';
import { ProxyRequests } from './proxy-bound.ts';
import type { SecurityView } from './schemas.ts';

interface UserFields {
  username: string;
  password: string;
}

/** Registered asClass(...).scoped() as `securityRequests`; the directory uses the singleton `securityService`. */
export class SecurityRequests extends ProxyRequests {
  /** Adds a basic-auth user to an application and routes it. */
  async create(input: UserFields & { applicationId: string }): Promise<SecurityView> {
    const workload = await this.owners.fromInput({ applicationId: input.applicationId }, this.organizationId, this.em);
    await this.#assertFree(workload.kind, workload.id, input.username, null);
    const row = this.em.create(Security, { username: input.username, ...this.#sealed(input.password), ...this.ownedBy(workload) });
    return this.cradle.securityService.view(await this.addRoute(row, workload));
  }

  /** A basic-auth user of the organization, with the password. */
  async one(securityId: string): Promise<SecurityView> {
    return this.cradle.securityService.view(await this.#find(securityId));
  }

  /** Changes a user's name and password and routes the change. */
  async update(input: UserFields & { securityId: string }): Promise<SecurityView> {
    const row = await this.#find(input.securityId);
    await this.#assertFree(row.serviceType, row.serviceId, input.username, row.securityId);
    return this.cradle.securityService.view(await this.changeRoute(row, { username: input.username, ...this.#sealed(input.password) }));
  }

  /** Removes a user and their route; answers them as they were. */
  async remove(securityId: string): Promise<SecurityView> {
    return this.cradle.securityService.view(await this.changeRoute(await this.#find(securityId), 'remove'));
  }

  /** One of the organization's users (NOT_FOUND otherwise). */
  #find(securityId: string): Promise<SecurityRow> {
    return this.owned(Security, { securityId }, 'Security');
  }

  #sealed(password: string) {
    const secrets = this.cradle.secrets;
    return { passwordSealed: secrets.encrypt(password), passwordHashSealed: secrets.encrypt(bcrypt.hashSync(password, 10)) };
  }

  async #assertFree(serviceType: string, serviceId: string, username: string, self: string | null): Promise<void> {
    const same = await this.em.findOne(Security, { serviceType, serviceId, username });
    if (same && same.securityId !== self) throw conflict(`username ${username} already exists for this workload`);
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** security.* for the current request's caller (request scope only). */
    securityRequests: SecurityRequests;
  }
}
