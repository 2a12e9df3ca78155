// The compose file's transforms and the template catalog: pure functions of text (no engine, no
// database), used by the compose plugin's operations and deployer.
export { parseCompose, serviceNames, serviceImages, composeText } from './yaml-doc.ts';
export { addSuffix, sharedNetworks } from './suffix.ts';
export { isolate, NETWORK_NAME } from './isolate.ts';
export { joinServiceNetworks, type ServiceNetworkPlan } from './service-networks.ts';
export { ignoredKeys, interpolatedVariables, type ComposeType, type ComposeIssue } from './ignored-keys.ts';
export { withDomains, traefikLabels, caddyUpstreamAlias, unreachableDomains, type ComposeDomainRoute, type ComposeProxy, type WithDomainsOptions } from './domains.ts';
export { parseComposeCommand, ComposeCommandError } from './command.ts';
export { loadCatalog, type Template } from './template-catalog.ts';
export { processTemplate, processTemplateBase64, processTemplateText, type ProcessedTemplate } from './template-process.ts';
export { randomSuffix } from './random-suffix.ts';
export type { VariableContext } from './template-variables.ts';
