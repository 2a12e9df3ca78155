// certificates.*: uploaded certificates (a PEM chain, leaf first, and its private key) of an
// organization. The key is stored sealed and never answered; the leaf's expiry and names are
// read from it and kept in the record; the provider writes both where the proxy reads them. Every
// upload emits `certificateExpiring` for one that ends within 30 days (certificate-service.ts).
// Request-scoped: the caller's organization and the request's transaction come from the container.
import { randomBytes } from 'node:crypto';
import { setOrNull } from '@berth/core';
import { parseCertificate } from './certificate-service.ts';
import { Certificate, type CertificateRow } from './entities.ts';
import { ProxyRequests } from './proxy-bound.ts';
import type { CertificateView, CreateCertificateInput, UpdateCertificateInput } from './schemas.ts';

const toView = (row: CertificateRow): CertificateView => ({
  certificateId: row.certificateId,
  name: row.name,
  certificateData: row.certificateData,
  certificatePath: row.certificatePath,
  autoRenew: row.autoRenew ?? null,
  organizationId: row.organizationId,
  serverId: row.serverId ?? null,
  expiresAt: row.expiresAt ? row.expiresAt.toISOString() : null,
  subjects: row.subjects,
  createdAt: row.createdAt.toISOString(),
});

/** Registered asClass(...).scoped() as `certificateRequests`; the daily expiry job uses the singleton `certificateService`. */
export class CertificateRequests extends ProxyRequests {
  /** Stores a certificate (its key sealed), writes it where the proxy reads it, and warns when it ends soon. */
  async create(input: CreateCertificateInput): Promise<CertificateView> {
    // Written on that server's proxy: it must be one of the organization's servers.
    if (input.serverId) await this.cradle.workloads.assertServer(input.serverId, this.organizationId);
    const parsed = parseCertificate(input.certificateData, input.privateKey);
    const row = this.em.create(Certificate, {
      name: input.name,
      certificateData: input.certificateData,
      privateKeySealed: this.cradle.secrets.encrypt(input.privateKey),
      // Berth chooses the directory: a name from the request could reach outside the proxy's.
      certificatePath: `cert-${randomBytes(8).toString('hex')}`,
      autoRenew: input.autoRenew ?? null,
      expiresAt: parsed.expiresAt,
      subjects: parsed.subjects,
      serverId: input.serverId ?? null,
      organizationId: this.organizationId,
      createdAt: new Date(),
    });
    await this.em.flush();
    await this.#write(row, input.privateKey);
    await this.cradle.certificateService.warnIfExpiring(row, this.em);
    return toView(row);
  }

  /** The organization's certificates, oldest first. */
  async all(): Promise<CertificateView[]> {
    return (await this.em.find(Certificate, { organizationId: this.organizationId }, { orderBy: { createdAt: 'asc' } })).map(toView);
  }

  /** A certificate of the organization, without its private key. */
  async one(certificateId: string): Promise<CertificateView> {
    return toView(await this.#find(certificateId));
  }

  /** Replaces a certificate's name, chain or key (the pair checked again), rewrites it and warns when it ends soon. */
  async update(input: UpdateCertificateInput): Promise<CertificateView> {
    const row = await this.#find(input.certificateId);
    const secrets = this.cradle.secrets;
    const chain = input.certificateData ?? row.certificateData;
    const key = input.privateKey ?? secrets.decrypt(row.privateKeySealed);
    const parsed = parseCertificate(chain, key);
    Object.assign(row, {
      name: input.name ?? row.name,
      certificateData: chain,
      privateKeySealed: secrets.encrypt(key),
      autoRenew: input.autoRenew === undefined ? row.autoRenew : input.autoRenew,
      expiresAt: parsed.expiresAt,
      subjects: parsed.subjects,
    });
    await this.em.flush();
    await this.#write(row, key);
    await this.cradle.certificateService.warnIfExpiring(row, this.em);
    return toView(row);
  }

  /** Deletes a certificate and its files; answers it as it was. */
  async remove(certificateId: string): Promise<CertificateView> {
    const row = await this.#find(certificateId);
    await this.em.remove(row).flush();
    const provider = await this.routing.ensure(setOrNull(row.serverId));
    if (provider) await this.routing.apply('remove the certificate', () => provider.removeCertificate(row.certificatePath));
    return toView(row);
  }

  /** One of the organization's certificates (NOT_FOUND otherwise). */
  #find(certificateId: string): Promise<CertificateRow> {
    return this.owned(Certificate, { certificateId }, 'Certificate');
  }

  async #write(row: CertificateRow, privateKey: string): Promise<void> {
    const provider = await this.routing.ensure(setOrNull(row.serverId));
    if (provider)
      await this.routing.apply('write the certificate', () =>
        provider.writeCertificate({ certificateId: row.certificateId, certificatePath: row.certificatePath, certificateData: row.certificateData, privateKey }),
      );
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** certificates.* for the current request's caller (request scope only). */
    certificateRequests: CertificateRequests;
  }
}
