// TEMPORARY stand-in for ./file/index.ts (issue 15, part B), with the agreed signatures and only
// the behaviour this plugin's tests need; the merge replaces it (compose-file.ts re-exports B's).
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { parseDocument, isMap, isSeq, YAMLMap, type Document } from 'yaml';

export type ComposeType = 'docker-compose' | 'stack';
export interface ComposeIssue { service: string | null; key: string; reason: string }
export interface ComposeDomainRoute { serviceName: string; host: string; path: string; port: number; https: boolean; uniqueConfigKey: number; appName: string; certificateType: string; stripPath: boolean; internalPath: string; customEntrypoint?: string | null; customCertResolver?: string | null; middlewares?: string[] | null }
export interface Template { id: string; name: string; description: string; version: string; logo: string | null; links: Record<string, string>; tags: string[] }

export function parseCompose(text: string): Document {
  const doc = parseDocument(text);
  if (doc.errors.length) throw new Error(`the compose file is not valid YAML: ${doc.errors[0]!.message}`);
  if (!isMap(doc.contents)) throw new Error('the compose file is not a YAML mapping');
  return doc;
}

export function serviceNames(text: string): string[] {
  const services = parseCompose(text).get('services');
  return isMap(services) ? services.items.map(i => String((i.key as { value?: unknown })?.value ?? i.key)) : [];
}

export function addSuffix(text: string, suffix: string): string {
  const doc = parseCompose(text);
  const services = doc.get('services');
  if (isMap(services)) {
    for (const item of services.items) {
      const name = String((item.key as { value?: unknown }).value);
      (item.key as { value: unknown }).value = `${name}-${suffix}`;
      const deps = isMap(item.value) ? item.value.get('depends_on') : null;
      if (isSeq(deps)) for (const d of deps.items) (d as { value: unknown }).value = `${(d as { value: unknown }).value}-${suffix}`;
    }
  }
  for (const section of ['volumes', 'networks']) {
    const top = doc.get(section);
    if (isMap(top)) for (const item of top.items) (item.key as { value: unknown }).value = `${(item.key as { value: unknown }).value}-${suffix}`;
  }
  if (isMap(services)) {
    for (const item of services.items) {
      const vols = isMap(item.value) ? item.value.get('volumes') : null;
      if (isSeq(vols)) for (const v of vols.items) {
        const s = String((v as { value: unknown }).value ?? '');
        if (/^[a-zA-Z0-9][a-zA-Z0-9_.-]*:/.test(s)) (v as { value: unknown }).value = s.replace(/^([^:]+):/, `$1-${suffix}:`);
      }
    }
  }
  return doc.toString();
}

export function isolate(text: string, network: string): string {
  const doc = parseCompose(text);
  const services = doc.get('services');
  if (isMap(services)) {
    for (const item of services.items) {
      if (!isMap(item.value)) continue;
      const nets = item.value.get('networks');
      if (isSeq(nets)) nets.add(network);
      else if (isMap(nets)) nets.set(network, null);
      else item.value.set('networks', doc.createNode([network]));
    }
  }
  if (!doc.has('networks')) doc.set('networks', new YAMLMap());
  (doc.get('networks') as YAMLMap).set(network, doc.createNode({ name: network }));
  return doc.toString();
}

export function ignoredKeys(text: string, type: ComposeType): ComposeIssue[] {
  const out: ComposeIssue[] = [];
  const services = parseCompose(text).get('services');
  if (type !== 'stack' || !isMap(services)) return out;
  for (const item of services.items) {
    const name = String((item.key as { value?: unknown }).value);
    for (const key of ['build', 'depends_on', 'container_name', 'links']) {
      if (isMap(item.value) && item.value.has(key)) out.push({ service: name, key, reason: `docker stack deploy ignores ${key}` });
    }
  }
  return out;
}

export function withDomains(text: string, routes: ComposeDomainRoute[], opts: { type: ComposeType; proxy: 'traefik' | 'caddy' | 'none'; platformNetwork: string; appName?: string }): string {
  const doc = parseCompose(text);
  const services = doc.get('services');
  const routed = [...new Set(routes.map(r => r.serviceName))];
  if (opts.proxy === 'none' || !routed.length || !isMap(services)) return doc.toString();
  for (const name of routed) {
    const service = services.get(name);
    if (!isMap(service)) continue;
    const alias = `${routes[0]!.appName}-${name}`;
    let nets = service.get('networks');
    if (isSeq(nets)) {
      const names = nets.items.map(n => String((n as { value?: unknown }).value));
      const map = doc.createNode(Object.fromEntries(names.map(n => [n, null]))) as YAMLMap;
      service.set('networks', map);
      nets = map;
    } else if (!isMap(nets)) {
      const map = doc.createNode({ default: null }) as YAMLMap;
      service.set('networks', map);
      nets = map;
    }
    (nets as YAMLMap).set(opts.platformNetwork, doc.createNode(opts.type === 'docker-compose' ? { aliases: [alias] } : {}));
    if (opts.type === 'stack') service.setIn(['deploy', 'endpoint_mode'], 'dnsrr');
  }
  if (!doc.has('networks')) doc.set('networks', new YAMLMap());
  (doc.get('networks') as YAMLMap).set(opts.platformNetwork, doc.createNode({ external: true }));
  return doc.toString();
}

export function parseComposeCommand(command: string, workdir: string): string[] {
  if (/[;&|<>`$(){}*?!#\\'"\n]/.test(command)) throw new Error('shell operators, quotes and globs are not allowed');
  const argv = command.trim().split(/\s+/);
  const program = argv[0] === 'docker' ? argv.slice(0, 2).join(' ') : argv[0];
  if (!['docker compose', 'docker-compose', 'docker stack'].includes(program ?? '')) throw new Error('the command must start with docker compose, docker-compose or docker stack');
  for (let i = 0; i < argv.length; i++) {
    if (['-f', '--file', '--env-file', '--project-directory', '-c', '--compose-file'].includes(argv[i]!)) {
      const target = path.resolve(workdir, argv[i + 1] ?? '');
      if (target !== workdir && !target.startsWith(workdir + path.sep)) throw new Error(`${argv[i]} names a path outside the workload's directory`);
    }
  }
  return argv;
}

export async function loadCatalog(source: string): Promise<Template[]> {
  const meta = JSON.parse(await readFile(path.join(source, 'meta.json'), 'utf8')) as Template[];
  return meta.map(t => ({ id: t.id, name: t.name, description: t.description ?? '', version: t.version ?? '', logo: t.logo ?? null, links: t.links ?? {}, tags: t.tags ?? [] }));
}

/** Only `[variables]` with ${domain}, ${password:N}, ${uuid}, and `[config] env` lines / mounts / domains of simple `key = "value"` TOML. */
export async function processTemplate(source: string, id: string, vars: { domainBase: string; appName: string }): Promise<{ compose: string; env: string[]; mounts: { filePath: string; content: string }[]; domains: { serviceName: string; port: number; host: string; path: string }[] }> {
  const dir = path.join(source, 'blueprints', id);
  const names = await readdir(dir);
  const compose = await readFile(path.join(dir, names.find(n => /^docker-compose\.ya?ml$/.test(n)) ?? 'docker-compose.yml'), 'utf8');
  const toml = await readFile(path.join(dir, 'template.toml'), 'utf8');
  const values: Record<string, string> = {};
  const expand = (s: string): string => s.replace(/\$\{([a-zA-Z_:0-9]+)\}/g, (_m, v: string) => {
    if (v in values) return values[v]!;
    if (v === 'domain') return `${vars.appName}.${vars.domainBase}`;
    if (v === 'uuid') return randomUUID();
    const m = /^(password|base64|hash):?(\d*)$/.exec(v);
    if (m) return randomBytes(Number(m[2] || 16)).toString('hex').slice(0, Number(m[2] || 16));
    return `\${${v}}`;
  });
  let section = '';
  const env: string[] = [];
  const domains: { serviceName: string; port: number; host: string; path: string }[] = [];
  const mounts: { filePath: string; content: string }[] = [];
  for (const line of toml.split('\n')) {
    const header = /^\s*\[\[?([a-z.]+)\]\]?\s*$/.exec(line);
    if (header) {
      section = header[1]!;
      if (section === 'config.domains') domains.push({ serviceName: '', port: 80, host: '', path: '/' });
      if (section === 'config.mounts') mounts.push({ filePath: '', content: '' });
      continue;
    }
    const kv = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?:"(.*)"|(\d+))\s*$/.exec(line);
    if (!kv) continue;
    const value = kv[2] !== undefined ? expand(kv[2]) : kv[3]!;
    if (section === 'variables') values[kv[1]!] = value;
    else if (section === 'config.env') env.push(`${kv[1]}=${value}`);
    else if (section === 'config.domains') Object.assign(domains.at(-1)!, { [kv[1]!]: kv[1] === 'port' ? Number(value) : value });
    else if (section === 'config.mounts') Object.assign(mounts.at(-1)!, { [kv[1]!]: value });
  }
  return { compose, env, mounts, domains };
}
