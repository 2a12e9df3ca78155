// A workload's own Traefik file (application.updateTraefikConfig) may route only that workload's
// domains to that workload: Traefik merges every dynamic file, so a router of one file can take
// another tenant's host, and a service can point at another tenant's container (the proxy is on
// every organization's network). So the file as given is parsed and held to:
// - routers (http, tcp) whose rule restricts the request to the workload's own hosts: every
//   Host/HostSNI names one of its domains, no HostRegexp/HostSNIRegexp, and the rule as a whole
//   cannot match without one of them (a `||` branch or a `!` that escapes the hosts is refused);
//   no udp routers (they take a whole entry point);
// - each router's service defined in this file; services that reach only the workload
//   (`<appName>`, `tasks.<appName>`, or the fixed upstream of one of its domains) or other
//   services of this file;
// - every router, service and middleware named `<appName>-...`, so that no name collides with
//   another workload's (a duplicate disables both in Traefik);
// - no tls section but `certificates` (stores and options are the whole proxy's).
import { parse } from 'yaml';
import { BerthError } from '@berth/core';

const FIELD = 'traefikConfig';

const refuse = (at: string[], message: string) => {
  const where = [FIELD, ...at].join('.');
  return new BerthError('BAD_REQUEST', `${where}: ${message}`, [{ path: [FIELD, ...at], message: `${where}: ${message}` }]);
};

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const entries = (v: unknown): [string, unknown][] => (isObject(v) ? Object.entries(v) : []);

/** A parsed rule: a matcher call, a negation, or an and/or of parts. */
type Rule = { call: string; args: string[] } | { not: Rule } | { op: '&&' | '||'; parts: Rule[] };

/** Parses Traefik's rule language (matchers with quoted or backquoted arguments, !, &&, ||, parentheses); throws on anything else. */
export function parseRule(text: string): Rule {
  const tokens = text.match(/`[^`]*`|"(?:[^"\\]|\\.)*"|&&|\|\||[()!,]|[A-Za-z][A-Za-z0-9]*|\S/g) ?? [];
  let i = 0;
  const peek = () => tokens[i];
  const take = (want?: string) => {
    const t = tokens[i++];
    if (t === undefined || (want !== undefined && t !== want)) throw new Error(`expected ${want ?? 'more'} at "${t ?? 'the end'}"`);
    return t;
  };
  const expr = (op: '||' | '&&'): Rule => {
    const parts = [op === '||' ? expr('&&') : factor()];
    while (peek() === op) {
      take();
      parts.push(op === '||' ? expr('&&') : factor());
    }
    return parts.length === 1 ? parts[0]! : { op, parts };
  };
  const factor = (): Rule => {
    const t = take();
    if (t === '!') return { not: factor() };
    if (t === '(') {
      const inner = expr('||');
      take(')');
      return inner;
    }
    if (!/^[A-Za-z]/.test(t)) throw new Error(`unexpected "${t}"`);
    take('(');
    const args: string[] = [];
    while (peek() !== ')') {
      const a = take();
      if (!/^[`"]/.test(a)) throw new Error(`unexpected "${a}" in ${t}(...)`);
      args.push(a.slice(1, -1));
      if (peek() === ',') take();
    }
    take(')');
    return { call: t, args };
  };
  const rule = expr('||');
  if (i !== tokens.length) throw new Error(`unexpected "${tokens[i]}"`);
  return rule;
}

const HOST_MATCHERS = new Set(['host', 'hostsni']);
const REGEXP_MATCHERS = new Set(['hostregexp', 'hostsniregexp']);

/** Every host a rule names, anywhere (negated ones too), and whether a matcher is a host pattern. */
function namedHosts(r: Rule, out: { hosts: string[]; patterns: boolean }): void {
  if ('call' in r) {
    const name = r.call.toLowerCase();
    if (HOST_MATCHERS.has(name)) out.hosts.push(...r.args.map(h => h.toLowerCase()));
    if (REGEXP_MATCHERS.has(name)) out.patterns = true;
  } else if ('not' in r) namedHosts(r.not, out);
  else r.parts.forEach(p => namedHosts(p, out));
}

/** Whether every request the rule matches has one of the hosts (a Host/HostSNI on every path through it). */
function restricted(r: Rule): boolean {
  if ('call' in r) return HOST_MATCHERS.has(r.call.toLowerCase()) && r.args.length > 0;
  if ('not' in r) return false;
  return r.op === '&&' ? r.parts.some(restricted) : r.parts.every(restricted);
}

/** What the workload may route and reach. */
export interface OwnRoutes {
  appName: string;
  /** Its domains' hosts (ASCII). */
  hosts: string[];
  /** The fixed upstreams (host:port) its domains name. */
  upstreams: string[];
}

const hostOf = (address: string) => {
  try {
    return new URL(address.includes('://') ? address : `tcp://${address}`).hostname.toLowerCase();
  } catch {
    return '';
  }
};

/** Throws a 400 naming the part of traefikConfig that routes or reaches beyond the workload; answers nothing when it does not. */
export function assertOwnRoutes(text: string, own: OwnRoutes): void {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    throw refuse([], `not YAML: ${(e as Error).message}`);
  }
  if (doc === null || doc === undefined) return;
  if (!isObject(doc)) throw refuse([], 'must be a mapping');
  const prefix = `${own.appName}-`;
  const hosts = new Set(own.hosts.map(h => h.toLowerCase()));
  const reach = new Set([own.appName, `tasks.${own.appName}`].map(h => h.toLowerCase()));
  for (const u of own.upstreams) reach.add(hostOf(u));
  const named = (at: string[], name: string) => {
    if (!name.startsWith(prefix)) throw refuse(at, `names must start with "${prefix}" (Traefik merges every workload's file: a name of another's would clash)`);
  };

  for (const [key, section] of Object.entries(doc)) {
    if (key === 'tls') {
      for (const [part] of entries(section)) if (part !== 'certificates') throw refuse(['tls', part], "is the whole proxy's: only tls.certificates may be given in a workload's file");
      continue;
    }
    if (key !== 'http' && key !== 'tcp' && key !== 'udp') throw refuse([key], 'is not a section of a dynamic Traefik file (http, tcp, udp, tls)');
    if (key === 'udp' && entries(isObject(section) ? section.routers : undefined).length) throw refuse(['udp', 'routers'], 'a udp router takes a whole entry point, not a host of this workload');
    const services = new Set(entries(isObject(section) ? section.services : undefined).map(([n]) => n));
    for (const [part, group] of entries(section)) {
      for (const [name, value] of entries(group)) {
        const at = [key, part, name];
        named(at, name);
        if (part === 'routers') checkRouter(at, value, services, hosts, key);
        else if (part === 'services') checkService(at, value, services, reach);
      }
    }
  }
}

function checkRouter(at: string[], value: unknown, services: Set<string>, hosts: Set<string>, protocol: string): void {
  if (!isObject(value)) throw refuse(at, 'must be a mapping');
  const text = typeof value.rule === 'string' ? value.rule : '';
  if (!text) throw refuse([...at, 'rule'], "a router names the hosts it serves (Host(`...`)): one of this workload's domains");
  let rule: Rule;
  try {
    rule = parseRule(text);
  } catch (e) {
    throw refuse([...at, 'rule'], `not a rule Berth can read (${(e as Error).message})`);
  }
  const found = { hosts: [] as string[], patterns: false };
  namedHosts(rule, found);
  if (found.patterns) throw refuse([...at, 'rule'], "HostRegexp and HostSNIRegexp can match other workloads' hosts: name this workload's domains with Host(`...`)");
  const foreign = found.hosts.filter(h => !hosts.has(h));
  if (foreign.length) throw refuse([...at, 'rule'], `${foreign.join(', ')} ${foreign.length === 1 ? 'is' : 'are'} not a domain of this workload (${[...hosts].join(', ') || 'it has none'})`);
  if (!restricted(rule))
    throw refuse([...at, 'rule'], `the rule matches requests for hosts other than this workload's domains: every branch needs Host${protocol === 'tcp' ? 'SNI' : ''}(\`...\`) of one of them`);
  const tls = isObject(value.tls) && Array.isArray(value.tls.domains) ? value.tls.domains : [];
  tls.forEach((d, i) => {
    const names = isObject(d) ? [d.main, ...(Array.isArray(d.sans) ? d.sans : [])] : [];
    const other = names.filter(n => typeof n !== 'string' || !hosts.has(n.toLowerCase()));
    if (other.length) throw refuse([...at, 'tls', 'domains', String(i)], `${other.join(', ')}: certificates only for this workload's domains`);
  });
  if (typeof value.service !== 'string' || !services.has(value.service))
    throw refuse([...at, 'service'], "a router's service is one defined in this file (another workload's, or Traefik's own, is not this workload's)");
}

function checkService(at: string[], value: unknown, services: Set<string>, reach: Set<string>): void {
  if (!isObject(value)) throw refuse(at, 'must be a mapping');
  const sibling = (where: string[], name: unknown) => {
    if (typeof name !== 'string' || !services.has(name)) throw refuse(where, 'names a service not defined in this file');
  };
  for (const [kind, spec] of Object.entries(value)) {
    const where = [...at, kind];
    if (kind === 'loadBalancer') {
      const servers = isObject(spec) && Array.isArray(spec.servers) ? spec.servers : [];
      servers.forEach((s, i) => {
        const address = isObject(s) ? (typeof s.url === 'string' ? s.url : typeof s.address === 'string' ? s.address : '') : '';
        if (!reach.has(hostOf(address))) throw refuse([...where, 'servers', String(i)], `${address || 'a server'} is not this workload (its servers are ${[...reach].join(', ')})`);
      });
    } else if (kind === 'weighted' || kind === 'mirroring' || kind === 'failover') {
      const s = isObject(spec) ? spec : {};
      if (kind === 'weighted') (Array.isArray(s.services) ? s.services : []).forEach((x, i) => sibling([...where, 'services', String(i), 'name'], isObject(x) ? x.name : undefined));
      if (kind === 'mirroring') {
        sibling([...where, 'service'], s.service);
        (Array.isArray(s.mirrors) ? s.mirrors : []).forEach((x, i) => sibling([...where, 'mirrors', String(i), 'name'], isObject(x) ? x.name : undefined));
      }
      if (kind === 'failover') {
        sibling([...where, 'service'], s.service);
        sibling([...where, 'fallback'], s.fallback);
      }
    } else {
      throw refuse(where, 'is not a kind of service Berth can check (loadBalancer, weighted, mirroring, failover)');
    }
  }
}
