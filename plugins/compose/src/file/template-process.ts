// One template made concrete (processTemplate, deployTemplate): its compose file as written (compose
// interpolates `${VAR}` from the env at deploy time) and its template.toml's [variables] generated
// once (plus APP_NAME, the appName, as the peer adds), then used in [config]'s env (a table or a
// list), mounts (file path + content) and domains (a missing host gets a generated one). Mount paths
// stay relative and inside the workload's files. The same from base64 of `{ compose, config }`
// (the peer's import/processTemplate input).
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { readSourceFile, TEMPLATE_ID } from './template-catalog.ts';
import { generateDomain, processValue, processVariables, type VariableContext } from './template-variables.ts';
import { parseCompose } from './yaml-doc.ts';

export interface ProcessedTemplate {
  compose: string;
  env: string[];
  mounts: { filePath: string; content: string }[];
  domains: { serviceName: string; port: number; host: string; path: string }[];
  /** The template asks for an isolated deployment (its config's `isolated`). */
  isolated: boolean;
}

type Table = Record<string, unknown>;
const table = (v: unknown): Table => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Table) : {});

function envOf(raw: unknown, variables: Record<string, string>, ctx: VariableContext): string[] {
  const value = (v: unknown) => (typeof v === 'string' ? processValue(v, variables, ctx) : String(v));
  if (Array.isArray(raw)) {
    return raw.flatMap(item => {
      if (typeof item === 'string') return [value(item)];
      if (item && typeof item === 'object') return Object.entries(item as Table).map(([k, v]) => `${k}=${value(v)}`);
      return [String(item)];
    });
  }
  return Object.entries(table(raw)).map(([k, v]) => `${k}=${value(v)}`);
}

function mountPath(raw: string, id: string): string {
  const normal = path.posix.normalize(raw.replace(/^\.\//, ''));
  if (!raw.trim() || path.posix.isAbsolute(normal) || normal === '..' || normal.startsWith('../') || normal.includes('\0')) {
    throw new Error(`The template "${id}" mounts the file "${raw}": a mount's filePath must be a relative path inside the workload's files`);
  }
  return normal;
}

/** A template's two files made concrete: its compose file as written, env, mounts and domains, its variables generated (APP_NAME is the appName). */
export function processTemplateText(compose: string, toml: string, vars: VariableContext, id = 'template'): ProcessedTemplate {
  try {
    parseCompose(compose);
  } catch (e) {
    throw new Error(`The template "${id}"'s docker-compose.yml: ${(e as Error).message}`);
  }
  let parsed: Table;
  try {
    parsed = parseToml(toml) as Table;
  } catch (e) {
    throw new Error(`The template "${id}"'s template.toml is not valid TOML: ${(e as Error).message.split('\n')[0]}`);
  }
  const variables = processVariables({ APP_NAME: vars.appName, ...table(parsed.variables) }, vars);
  const config = table(parsed.config);
  const mounts = (Array.isArray(config.mounts) ? config.mounts : [])
    .map(table)
    .filter(m => m.filePath || m.content)
    .map(m => ({ filePath: mountPath(processValue(String(m.filePath ?? ''), variables, vars), id), content: processValue(String(m.content ?? ''), variables, vars) }));
  const domainList = (Array.isArray(config.domains) ? config.domains : []).map(table);
  const domains = domainList.every(d => !d.serviceName)
    ? []
    : domainList.map(d => {
        const port = Number(d.port);
        if (typeof d.serviceName !== 'string' || !d.serviceName) throw new Error(`The template "${id}" has a domain without a serviceName`);
        if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`The template "${id}"'s domain for "${d.serviceName}" has the port ${String(d.port)}, not one of 1-65535`);
        return {
          serviceName: d.serviceName,
          port,
          host: typeof d.host === 'string' && d.host ? processValue(d.host, variables, vars) : generateDomain(vars),
          path: typeof d.path === 'string' && d.path ? processValue(d.path, variables, vars) : '/',
        };
      });
  return { compose, env: envOf(config.env, variables, vars), mounts, domains, isolated: config.isolated === true };
}

/** A template as the peer's import and processTemplate operations take it: base64 of JSON `{ compose, config }` (config: template.toml's text). */
export function processTemplateBase64(base64: string, vars: VariableContext): ProcessedTemplate {
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(base64, 'base64').toString('utf8'));
  } catch {
    throw new Error('The template is not base64 of a JSON object with "compose" and "config"');
  }
  const { compose, config } = table(data);
  if (typeof compose !== 'string' || !compose.trim() || typeof config !== 'string') throw new Error('The template must hold "compose" (the compose file) and "config" (template.toml\'s text)');
  return processTemplateText(compose, config, vars, 'imported');
}

/** A template of a source made concrete (processTemplateText on its blueprint's files). */
export async function processTemplate(source: string, id: string, vars: VariableContext): Promise<ProcessedTemplate> {
  if (!TEMPLATE_ID.test(id)) throw new Error(`"${id}" is not a template id (letters, digits, '.', '_', '-')`);
  const [compose, toml] = await Promise.all([readSourceFile(source, `blueprints/${id}/docker-compose.yml`), readSourceFile(source, `blueprints/${id}/template.toml`)]);
  if (compose === null || toml === null) throw new Error(`The template "${id}" is not in the source ${source} (it needs blueprints/${id}/docker-compose.yml and template.toml)`);
  return processTemplateText(compose, toml, vars, id);
}
