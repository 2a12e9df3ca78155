// The conformance suite every proxy provider's test calls: the descriptor and its options, and
// what the domain plugin relies on without an engine — a workload's routes applied and removed as
// a whole, names that could leave the provider's directory refused, its files' roles inside that
// directory, its own syntax checked before a write, certificates written and removed, and the
// service settings' defaults. Serving for real is each provider's own live test (Caddy's, here).
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import type { ProxyProvider, ProxyRoute, ProxyWorkloadConfig } from './contracts/proxy.ts';
import type { ProviderDescriptor } from './provider.ts';
import { descriptorConformance } from './testing-conformance.ts';

export interface ProxyConformanceOptions {
  options?: unknown;
  /** A text the provider's validateFile refuses (a syntax error in its format). */
  invalidFile: string;
  /** What validateFile throws for invalidFile (its parser's error), so another failure does not pass for a syntax check. */
  invalidFileError: { name: string; message: RegExp };
  /** A certificate chain and key the provider may write (not checked by it). */
  certificate?: { chain: string; key: string };
}

/** A domain's route as the domain plugin hands it to a proxy provider: plain http on port 3000, `over` on top. */
export const proxyRoute = (over: Partial<ProxyRoute> = {}): ProxyRoute => ({
  domainId: 'd1',
  uniqueConfigKey: 1,
  host: 'example.com',
  path: '/',
  internalPath: '/',
  stripPath: false,
  https: false,
  certificateType: 'none',
  customCertResolver: null,
  port: 3000,
  serviceName: null,
  customEntrypoint: null,
  middlewares: [],
  ...over,
});
const route = (over: Partial<ProxyRoute> = {}): ProxyRoute => proxyRoute({ host: 'conformance.example.com', ...over });

const inside = (dir: string, rel: string) => !path.isAbsolute(rel) && !rel.split(/[\\/]/).includes('..') && path.resolve(dir, rel).startsWith(dir + path.sep);

export function proxyConformance(t: Test, descriptor: ProviderDescriptor, o: ProxyConformanceOptions): void {
  t.test(`proxy ${descriptor.id}: conformance`, async t => {
    const provider = await descriptorConformance<ProxyProvider>(t, descriptor, 'proxy', o.options);
    t.teardown(() => rmSync(provider.configDir, { recursive: true, force: true }));
    t.type(provider.traefikFiles, 'boolean', "it says whether its files are Traefik's");
    t.ok(provider.composeRouting === 'labels' || provider.composeRouting === 'alias', `it says how a compose stack's services are reached (${String(provider.composeRouting)})`);
    for (const role of ['main', 'webServer', 'middlewares'] as const) {
      const rel = provider.fileOf(role);
      t.ok(rel === null || inside(provider.configDir, rel), `its ${role} file is inside its directory (${rel})`);
    }

    const w: ProxyWorkloadConfig = {
      appName: 'conformance-app',
      routes: [route(), route({ domainId: 'd2', uniqueConfigKey: 2, path: '/api', stripPath: true, internalPath: '/v1', https: true })],
      redirects: [{ redirectId: 'r', uniqueConfigKey: 3, regex: '^http://a/(.*)', replacement: 'http://b/$1', permanent: true }],
      basicAuth: [{ username: 'ann', passwordHash: '$2a$10$0123456789012345678901uGm4JyyqOjxIXbVzrO5FhBEZZl5kBmm' }],
    };
    await provider.applyWorkload(w);
    const own = provider.workloadFile(w.appName);
    t.ok(own === null || (inside(provider.configDir, own) && existsSync(path.join(provider.configDir, own))), `the workload's file is written inside its directory (${own})`);
    await provider.applyWorkload(w);
    t.pass('applying the same routes again is fine');
    await provider.removeWorkload(w.appName);
    t.ok(own === null || !existsSync(path.join(provider.configDir, own)), 'removing the workload removes its file');
    await provider.removeWorkload(w.appName);
    t.pass('removing it again is fine');
    await t.rejects(provider.applyWorkload({ ...w, appName: '../escape' }), { message: /"\.\.\/escape" is not a valid appName/ }, 'an appName that would leave its directory is refused');

    t.throws(() => provider.validateFile(provider.fileOf('middlewares') ?? 'file', o.invalidFile), o.invalidFileError, 'its own syntax is checked before a write');
    t.same(await provider.certificateState('conformance.example.com', false), { state: 'none', issuer: null, notAfter: null, reason: null }, 'plain http: no certificate');
    const https = await provider.certificateState('conformance.example.com', true);
    t.ok(['valid', 'pending', 'failed'].includes(https.state), `https: a state (${https.state})`);
    t.ok(https.state === 'valid' || (https.reason ?? '').length > 0, 'with a reason when not valid');

    const cert = o.certificate ?? { chain: '-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----', key: '-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----' };
    await provider.writeCertificate({ certificateId: 'c', certificatePath: 'cert-conformance', certificateData: cert.chain, privateKey: cert.key });
    await provider.removeCertificate('cert-conformance');
    await t.rejects(
      provider.writeCertificate({ certificateId: 'c', certificatePath: '../escape', certificateData: cert.chain, privateKey: cert.key }),
      { message: /"\.\.\/escape" is not a valid certificate path/ },
      'a certificate path that would leave its directory is refused',
    );

    t.same(await provider.serviceSettings(), { dashboard: false, additionalPorts: [], env: '' }, 'service settings default to none');
    await provider.applyWebServer(null);
    t.pass('no web-server domain is fine');
  });
}
