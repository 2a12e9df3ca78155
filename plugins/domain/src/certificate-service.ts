// certificates.*: uploaded certificates (a PEM chain, leaf first, and its private key) of an
// organization. The key is stored sealed and never answered; the leaf's expiry and names are
// read from it and kept in the record; the provider writes both where the proxy reads them. A
// daily job (and every upload) emits `certificateExpiring` for one that ends within 30 days, for
// the notifications work.
import { createPrivateKey, randomBytes, X509Certificate } from 'node:crypto';
import { invalidField, notFound, setOrNull, type Cradle, type EntityManager, type SecretBox } from '@berth/core';
import { Certificate, Domain, type CertificateRow } from './entities.ts';
import { asciiHost, type ProxyRouting } from './routing.ts';
import type { CertificateView, CreateCertificateInput, UpdateCertificateInput } from './schemas.ts';

export const EXPIRY_WARNING_DAYS = 30;
export const EXPIRY_JOB = 'certificates-expiry';

declare module '@berth/core' {
  interface BerthEvents {
    /** An uploaded certificate ends within 30 days (or has ended), or the proxy failed to renew one. */
    certificateExpiring: { certificateId: string; organizationId: string; name: string; expiresAt: string; daysLeft: number };
    /** The proxy reports that it could not obtain or renew the certificate of an https domain. */
    certificateRenewalFailed: { domainId: string; organizationId: string; host: string; reason: string };
  }
}

interface Parsed {
  expiresAt: Date;
  subjects: string[];
}

/** The leaf's expiry and names; 400 naming the field when the chain or key is not usable. */
export function parseCertificate(chain: string, key: string): Parsed {
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(chain);
  } catch (e) {
    throw invalidField('certificateData', `not a PEM certificate: ${(e as Error).message}`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (e) {
    throw invalidField('privateKey', `not a PEM private key: ${(e as Error).message}`);
  }
  if (!leaf.checkPrivateKey(privateKey)) throw invalidField('privateKey', 'does not belong to the first certificate of certificateData');
  const names = (leaf.subjectAltName ?? '')
    .split(',')
    .map(s => s.trim())
    .filter(s => s.startsWith('DNS:'))
    .map(s => s.slice(4));
  const cn = /CN=([^\n,]+)/.exec(leaf.subject)?.[1];
  return { expiresAt: new Date(leaf.validTo), subjects: names.length ? names : cn ? [cn] : [] };
}

export class CertificateService {
  readonly #routing: ProxyRouting;
  readonly #cradle: () => Cradle;

  constructor(deps: { routing: ProxyRouting; cradle: () => Cradle }) {
    this.#routing = deps.routing;
    this.#cradle = deps.cradle;
  }

  #secrets(): SecretBox {
    return this.#cradle().secrets;
  }

  view(row: CertificateRow): CertificateView {
    return {
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
    };
  }

  async create(input: CreateCertificateInput, organizationId: string, em: EntityManager): Promise<CertificateRow> {
    // Written on that server's proxy: it must be one of the organization's servers.
    if (input.serverId) await this.#cradle().workloads.assertServer(input.serverId, organizationId);
    const parsed = parseCertificate(input.certificateData, input.privateKey);
    const row = em.create(Certificate, {
      name: input.name,
      certificateData: input.certificateData,
      privateKeySealed: this.#secrets().encrypt(input.privateKey),
      // Berth chooses the directory: a name from the request could reach outside the proxy's.
      certificatePath: `cert-${randomBytes(8).toString('hex')}`,
      autoRenew: input.autoRenew ?? null,
      expiresAt: parsed.expiresAt,
      subjects: parsed.subjects,
      serverId: input.serverId ?? null,
      organizationId,
      createdAt: new Date(),
    });
    await em.flush();
    await this.#write(row, input.privateKey);
    await this.warnIfExpiring(row, em);
    return row;
  }

  async all(organizationId: string, em: EntityManager): Promise<CertificateRow[]> {
    return em.find(Certificate, { organizationId }, { orderBy: { createdAt: 'asc' } });
  }

  async one(certificateId: string, organizationId: string, em: EntityManager): Promise<CertificateRow> {
    const row = await em.findOne(Certificate, { certificateId, organizationId });
    if (!row) throw notFound('Certificate');
    return row;
  }

  async update(input: UpdateCertificateInput, organizationId: string, em: EntityManager): Promise<CertificateRow> {
    const row = await this.one(input.certificateId, organizationId, em);
    const chain = input.certificateData ?? row.certificateData;
    const key = input.privateKey ?? this.#secrets().decrypt(row.privateKeySealed);
    const parsed = parseCertificate(chain, key);
    Object.assign(row, {
      name: input.name ?? row.name,
      certificateData: chain,
      privateKeySealed: this.#secrets().encrypt(key),
      autoRenew: input.autoRenew === undefined ? row.autoRenew : input.autoRenew,
      expiresAt: parsed.expiresAt,
      subjects: parsed.subjects,
    });
    await em.flush();
    await this.#write(row, key);
    await this.warnIfExpiring(row, em);
    return row;
  }

  async remove(certificateId: string, organizationId: string, em: EntityManager): Promise<CertificateRow> {
    const row = await this.one(certificateId, organizationId, em);
    await em.remove(row).flush();
    const provider = await this.#routing.ensure(setOrNull(row.serverId));
    if (provider) await this.#routing.apply('remove the certificate', () => provider.removeCertificate(row.certificatePath));
    return row;
  }

  /** Emits certificateExpiring (durably: stored before this returns) when the certificate ends within the warning window. */
  async warnIfExpiring(row: CertificateRow, em: EntityManager, now = Date.now()): Promise<boolean> {
    if (!row.expiresAt) return false;
    const daysLeft = Math.floor((row.expiresAt.getTime() - now) / 86_400_000);
    if (daysLeft > EXPIRY_WARNING_DAYS) return false;
    await this.#cradle().events.emitDurable(
      'certificateExpiring',
      { certificateId: row.certificateId, organizationId: row.organizationId, name: row.name, expiresAt: row.expiresAt.toISOString(), daysLeft },
      em,
    );
    return true;
  }

  /** The daily job: every uploaded certificate near its end, and every ACME one the proxy failed to get or renew, is announced. */
  async checkExpiries(em: EntityManager): Promise<number> {
    let warned = 0;
    for (const row of await em.find(Certificate, {})) if (await this.warnIfExpiring(row, em)) warned++;
    const provider = this.#routing.provider();
    if (!provider) return warned;
    for (const d of await em.find(Domain, { https: true, certificateType: 'letsencrypt' })) {
      const host = asciiHost(d.host) || d.host;
      const state = await provider.certificateState(host, true).catch(() => null);
      if (state?.state !== 'failed') continue;
      await this.#cradle().events.emitDurable(
        'certificateRenewalFailed',
        { domainId: d.domainId, organizationId: d.organizationId, host, reason: state.reason ?? 'the proxy could not obtain the certificate' },
        em,
      );
      warned++;
    }
    return warned;
  }

  async #write(row: CertificateRow, privateKey: string): Promise<void> {
    const provider = await this.#routing.ensure(setOrNull(row.serverId));
    if (provider)
      await this.#routing.apply('write the certificate', () =>
        provider.writeCertificate({ certificateId: row.certificateId, certificatePath: row.certificatePath, certificateData: row.certificateData, privateKey }),
      );
  }
}

export const callerCertificates =
  (certificates: CertificateService) =>
  ({ principal, em }: Cradle) => {
    const organizationId = principal!.organizationId;
    return {
      create: async (input: CreateCertificateInput) => certificates.view(await certificates.create(input, organizationId, em)),
      all: async () => (await certificates.all(organizationId, em)).map(r => certificates.view(r)),
      one: async (certificateId: string) => certificates.view(await certificates.one(certificateId, organizationId, em)),
      update: async (input: UpdateCertificateInput) => certificates.view(await certificates.update(input, organizationId, em)),
      remove: async (certificateId: string) => certificates.view(await certificates.remove(certificateId, organizationId, em)),
    };
  };

declare module '@berth/core' {
  interface Cradle {
    callerCertificates: ReturnType<ReturnType<typeof callerCertificates>>;
  }
}
