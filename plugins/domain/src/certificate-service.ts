// Uploaded certificates as the rest of Berth uses them: a PEM chain and its private key read (the
// leaf's expiry and names), and the expiry watch: a daily job (and every upload) emits
// `certificateExpiring` for one that ends within 30 days, for the notifications work.
// certificates.* is certificate-requests.ts.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { invalidField, type Cradle, type EntityManager } from '@berth/core';
import { Certificate, Domain, type CertificateRow } from './entities.ts';
import { asciiHost, type ProxyRouting } from './routing.ts';

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

/** Registered as `certificateService`; certificates.* is the request-scoped `certificateRequests`. */
export class CertificateService {
  readonly #routing: ProxyRouting;
  readonly #cradle: () => Cradle;

  constructor(deps: { routing: ProxyRouting; cradle: () => Cradle }) {
    this.#routing = deps.routing;
    this.#cradle = deps.cradle;
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
    for (const d of await em.find(Domain, { https: true, certificateType: 'letsencrypt', enabled: true })) {
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
}

declare module '@berth/core' {
  interface Cradle {
    /** The expiry watch of uploaded certificates; from the domain plugin. */
    certificateService: CertificateService;
  }
}
