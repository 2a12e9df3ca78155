// security.*: basic-auth users of a workload. The password is stored sealed (security.one
// answers it, as the peer does) with its bcrypt hash, sealed too, which is all the proxy gets.
import bcrypt from 'bcryptjs';
import { conflict, notFound, type Cradle, type EntityManager, type SecretBox } from '@berth/core';
import { Security, type SecurityRow } from './entities.ts';
import type { ProxyRouting } from './routing.ts';
import type { SecurityView } from './schemas.ts';
import type { WorkloadOwners } from './workload-owner.ts';

interface UserFields {
  username: string;
  password: string;
}

export class SecurityService {
  readonly #routing: ProxyRouting;
  readonly #owners: WorkloadOwners;
  readonly #secrets: () => SecretBox;

  constructor(deps: { routing: ProxyRouting; owners: WorkloadOwners; secrets: () => SecretBox }) {
    this.#routing = deps.routing;
    this.#owners = deps.owners;
    this.#secrets = deps.secrets;
  }

  view(row: SecurityRow): SecurityView {
    return { securityId: row.securityId, username: row.username, password: this.#secrets().decrypt(row.passwordSealed), createdAt: row.createdAt.toISOString(), applicationId: row.serviceId };
  }

  #sealed(password: string) {
    const secrets = this.#secrets();
    return { passwordSealed: secrets.encrypt(password), passwordHashSealed: secrets.encrypt(bcrypt.hashSync(password, 10)) };
  }

  async create(input: UserFields & { applicationId: string }, organizationId: string, em: EntityManager): Promise<SecurityRow> {
    const workload = await this.#owners.fromInput({ applicationId: input.applicationId }, organizationId, em);
    await this.#assertFree(workload.kind, workload.id, input.username, null, em);
    const row = em.create(Security, { username: input.username, ...this.#sealed(input.password), serviceType: workload.kind, serviceId: workload.id, organizationId, createdAt: new Date() });
    await em.flush();
    await this.#routing.sync(workload, em);
    return row;
  }

  async one(securityId: string, organizationId: string, em: EntityManager): Promise<SecurityRow> {
    const row = await em.findOne(Security, { securityId, organizationId });
    if (!row) throw notFound('Security');
    return row;
  }

  async update(input: UserFields & { securityId: string }, organizationId: string, em: EntityManager): Promise<SecurityRow> {
    const row = await this.one(input.securityId, organizationId, em);
    await this.#assertFree(row.serviceType, row.serviceId, input.username, row.securityId, em);
    Object.assign(row, { username: input.username, ...this.#sealed(input.password) });
    await em.flush();
    await this.#routing.syncOwnerOf(row, em);
    return row;
  }

  async remove(securityId: string, organizationId: string, em: EntityManager): Promise<SecurityRow> {
    const row = await this.one(securityId, organizationId, em);
    await em.remove(row).flush();
    await this.#routing.syncOwnerOf(row, em);
    return row;
  }

  async #assertFree(serviceType: string, serviceId: string, username: string, self: string | null, em: EntityManager): Promise<void> {
    const same = await em.findOne(Security, { serviceType, serviceId, username });
    if (same && same.securityId !== self) throw conflict(`username ${username} already exists for this workload`);
  }
}

export const callerSecurity =
  (security: SecurityService) =>
  ({ principal, em }: Cradle) => {
    const organizationId = principal!.organizationId;
    return {
      create: async (input: UserFields & { applicationId: string }) => security.view(await security.create(input, organizationId, em)),
      one: async (securityId: string) => security.view(await security.one(securityId, organizationId, em)),
      update: async (input: UserFields & { securityId: string }) => security.view(await security.update(input, organizationId, em)),
      remove: async (securityId: string) => security.view(await security.remove(securityId, organizationId, em)),
    };
  };

declare module '@berth/core' {
  interface Cradle {
    callerSecurity: ReturnType<ReturnType<typeof callerSecurity>>;
  }
}
