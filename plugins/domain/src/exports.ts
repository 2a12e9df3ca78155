// What tests and other packages may use of the domain plugin.
export { ProxyRouting, asciiHost, type ForwardAuthGate } from './routing.ts';
export { DomainService } from './domain-service.ts';
export { CertificateService, parseCertificate } from './certificate-service.ts';
