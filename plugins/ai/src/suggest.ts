// What ai.suggest asks the model and how its answer is checked. Every suggestion must pass the
// compose checks (it parses, the compose program would not refuse it, the host access policy
// allows it, every image reference is well-formed) and its own (domains name a service of the
// file, config files stay inside the stack's files/ directory, variables are named as a shell
// names them). A suggestion that fails is asked for again once, with its problems.
import path from 'node:path';
import { Value } from 'typebox/value';
import { badRequest, type Cradle } from '@berth/core';
import { ModelAnswer, type ModelSuggestion } from './schemas.ts';

/** The JSON Schema of the answer, as structured output wants it (every property required, no extras). */
export function answerSchema(): Record<string, unknown> {
  const str = { type: 'string' };
  const object = (properties: Record<string, unknown>) => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false });
  const suggestion = object({
    id: str,
    name: str,
    shortDescription: str,
    description: str,
    dockerCompose: str,
    envVariables: { type: 'array', items: object({ name: str, value: str }) },
    domains: { type: 'array', items: object({ host: str, port: { type: 'number' }, serviceName: str }) },
    configFiles: { anyOf: [{ type: 'array', items: object({ content: str, filePath: str }) }, { type: 'null' }] },
  });
  return object({ suggestions: { type: 'array', items: suggestion, maxItems: 3 } });
}

export function systemPrompt(domainBase: string): string {
  return [
    "You are a DevOps engineer. From the user's request, propose up to three ways to run it with Docker Compose, each complete and deployable as it is.",
    'If the request names one application, propose variants of it (minimal, with a database, full stack); if it names a need, propose different open-source projects that meet it.',
    'Each suggestion has: id (a lowercase hyphenated slug), name, shortDescription (one line), description (plain text only), dockerCompose (the YAML), envVariables (every variable the file uses, with a realistic value), domains (for each service reachable from the web: host, its internal port, serviceName), configFiles (null unless a service cannot work without one).',
    'Compose rules: every service has an `image:` with an explicit tag from a public registry, never `build:`; no `version:` and no `container_name:`; ports as "3000" (container port only); variables as ${NAME} with an entry in envVariables; services the app depends on are in the file.',
    'Never bind mount host paths (no "/", "/var/run/docker.sock", "/etc"...): use named volumes. A config file is mounted from "../files/<path>" with the same <path> as its filePath. No privileged, devices, cap_add, network_mode: host, pid: host.',
    `Domain hosts are <service>-<3 random hex chars>.${domainBase}.`,
  ].join('\n');
}

/** The request of a retry: the suggestion as it was and what the checks found. */
export function retryPrompt(input: string, s: ModelSuggestion, problems: string[]): string {
  return [
    `The user's request: ${input}`,
    'You proposed the suggestion below, and it failed these checks:',
    ...problems.map(p => `- ${p}`),
    'Answer it again, corrected, as the only item of `suggestions` (the same id and name).',
    JSON.stringify(s),
  ].join('\n');
}

/** The model's answer as suggestions; a 400 when it is not the object asked for. */
export function parseAnswer(text: string): ModelSuggestion[] {
  let value: unknown;
  try {
    value = JSON.parse(text.trim().replace(/^```(?:json)?\s*|\s*```$/g, ''));
  } catch (e) {
    throw badRequest(`The AI provider's answer is not JSON: ${(e as Error).message}`);
  }
  if (!Value.Check(ModelAnswer, value)) {
    const first = [...Value.Errors(ModelAnswer, value)][0];
    throw badRequest(`The AI provider's answer is not the structure asked for${first ? ` (${first.instancePath || '/'} ${first.message})` : ''}`);
  }
  return (value as { suggestions: ModelSuggestion[] }).suggestions.slice(0, 3);
}

const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The problems of a compose file with its domains, config files and variables (none: it may be deployed). */
export function problemsOf(
  cradle: Cradle,
  s: { dockerCompose: string; domains?: { host: string; port: number; serviceName: string }[] | null; configFiles?: { filePath: string; content: string }[] | null; envVariables?: { name: string }[] },
): string[] {
  const out = cradle.composeChecks.problems(s.dockerCompose);
  const services = out.length ? null : cradle.composeChecks.serviceNames(s.dockerCompose);
  for (const [i, d] of (s.domains ?? []).entries()) {
    if (services && !services.includes(d.serviceName)) out.push(`domains.${i}.serviceName: "${d.serviceName}" is not a service of the compose file`);
    if (!Number.isInteger(d.port) || d.port < 1 || d.port > 65535) out.push(`domains.${i}.port: ${d.port} is not a port`);
    if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/i.test(d.host)) out.push(`domains.${i}.host: "${d.host.slice(0, 100)}" is not a host name`);
  }
  for (const [i, f] of (s.configFiles ?? []).entries()) {
    const normal = path.posix.normalize(f.filePath.replace(/^\.\/|^\.\.\/files\//, ''));
    if (!f.filePath || path.posix.isAbsolute(normal) || normal.startsWith('..'))
      out.push(`configFiles.${i}.filePath: "${f.filePath.slice(0, 200)}" must be a relative path inside the stack's files directory`);
  }
  for (const [i, v] of (s.envVariables ?? []).entries()) {
    if (!VARIABLE.test(v.name)) out.push(`envVariables.${i}.name: "${v.name.slice(0, 100)}" is not a variable name`);
  }
  return out;
}
