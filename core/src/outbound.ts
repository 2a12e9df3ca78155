// The one check on addresses users give Berth to connect to (notification channels, monitoring's
// urlCallback, git providers, registries, backup destinations, AI providers). A host name is
// resolved once, every address it resolves to is checked, and the connection goes to that checked
// address (so DNS rebinding cannot swap in another one between check and connect). Refused by
// default: loopback, link-local (169.254/16, fe80::/10: cloud metadata included), unspecified,
// this machine's own addresses and other special ranges. Private ranges (10/8, 172.16/12,
// 192.168/16, 100.64/10, fc00::/7) are the instance operators' organization's; another organization
// reaches them only when the operator key outboundAllow lists them. An outboundAllow entry (a host
// name, an address or a CIDR, with or without :port) is allowed to every organization.
// node:http and node:https are imported on the first call: an ES import of node:http reads every
// export, its lazy WebSocket too, which loads Node's fetch (undici, about 2 MB resident) at boot.
import { lookup as dnsLookup } from 'node:dns/promises';
import { networkInterfaces } from 'node:os';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { invalidField } from './errors.ts';

/** What an address is, as far as outbound connections go. */
export type AddressKind = 'loopback' | 'link-local' | 'unspecified' | 'this machine' | 'private' | 'reserved' | 'public';

const ranges = (list: readonly (readonly [string, number])[], family: 'ipv4' | 'ipv6') => {
  const b = new BlockList();
  for (const [net, bits] of list) b.addSubnet(net, bits, family);
  return b;
};
const KINDS: [Exclude<AddressKind, 'this machine' | 'public'>, BlockList, BlockList][] = [
  ['loopback', ranges([['127.0.0.0', 8]], 'ipv4'), ranges([['::1', 128]], 'ipv6')],
  ['unspecified', ranges([['0.0.0.0', 8]], 'ipv4'), ranges([['::', 128]], 'ipv6')],
  ['link-local', ranges([['169.254.0.0', 16]], 'ipv4'), ranges([['fe80::', 10]], 'ipv6')],
  [
    'private',
    ranges(
      [
        ['10.0.0.0', 8],
        ['172.16.0.0', 12],
        ['192.168.0.0', 16],
        ['100.64.0.0', 10],
      ],
      'ipv4',
    ),
    ranges([['fc00::', 7]], 'ipv6'),
  ],
  [
    'reserved',
    ranges(
      [
        ['192.0.0.0', 24],
        ['198.18.0.0', 15],
        ['224.0.0.0', 3],
      ],
      'ipv4',
    ),
    ranges(
      [
        ['ff00::', 8],
        ['64:ff9b::', 96],
        ['2001:db8::', 32],
      ],
      'ipv6',
    ),
  ],
];

/** An IPv4-mapped IPv6 address as its IPv4 form; any other address as given (lower case). */
const plain = (address: string) => {
  const a = address.toLowerCase().replace(/^\[|\]$/g, '');
  return /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a)?.[1] ?? a;
};

/** This machine's own addresses (every interface's), read on each call: interfaces come and go. */
export function ownAddresses(): Set<string> {
  const out = new Set<string>();
  for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) out.add(plain(i.address.split('%')[0]!));
  return out;
}

/** What kind of address `address` is; anything that is not an IP address counts as reserved. */
export function addressKind(address: string, own: Set<string> = ownAddresses()): AddressKind {
  const a = plain(address);
  const family = isIP(a);
  if (!family) return 'reserved';
  for (const [kind, v4, v6] of KINDS) if (family === 4 ? v4.check(a, 'ipv4') : v6.check(a, 'ipv6')) return kind;
  return own.has(a) ? 'this machine' : 'public';
}

/** One resolved address. */
export interface CheckedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses (tests inject their own). */
export type Resolver = (host: string) => Promise<CheckedAddress[]>;

const systemResolver: Resolver = host => dnsLookup(host, { all: true, verbatim: true });

/** A lookup answering one address, as a single answer or a list (whichever the client asks for). */
const answerWith = (callback: Parameters<LookupFunction>[2], options: Parameters<LookupFunction>[1], a: CheckedAddress) => {
  if ((options as { all?: boolean }).all) (callback as (e: null, a: CheckedAddress[]) => void)(null, [a]);
  else callback(null, a.address, a.family);
};

/** Who asks: the field named in a refusal and the organization whose rule applies. */
export interface OutboundRequest {
  /** The input field the URL or host came from (a refusal is a 400 naming it). */
  field: string;
  /** The organization the connection is made for; private ranges are the instance operators' organization's. */
  organizationId: string | null;
}

/** A URL (http, https, or another scheme with a host) or a bare host name; the port as a string ('' when unknown). */
function target(value: string): { host: string; port: string } {
  let url: URL | null = null;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    try {
      url = new URL(value);
    } catch {
      url = null;
    }
  }
  if (url) return { host: url.hostname.replace(/^\[|\]$/g, '').toLowerCase(), port: url.port || (url.protocol === 'https:' ? '443' : url.protocol === 'http:' ? '80' : '') };
  const m = /^\[([^\]]+)\](?::(\d+))?(?:\/.*)?$/.exec(value) ?? (isIP(value) === 6 ? null : /^([^:/]+)(?::(\d+))?(?:\/.*)?$/.exec(value));
  if (m) return { host: m[1]!.toLowerCase(), port: m[2] ?? '' };
  return { host: value.toLowerCase(), port: '' };
}

const MAX_ANSWER = 16 * 1024 * 1024;

export class OutboundGuard {
  readonly #allow: () => readonly string[];
  readonly #instanceOrganization: () => Promise<string | null>;
  readonly #resolver: Resolver;

  /** `instanceOrganization`: the instance operators' organization (the kernel's accounts answer it; null before the first admin). */
  constructor(o: { allow: () => readonly string[]; instanceOrganization: () => Promise<string | null>; resolver?: Resolver }) {
    this.#allow = o.allow;
    this.#instanceOrganization = o.instanceOrganization;
    this.#resolver = o.resolver ?? systemResolver;
  }

  /**
   * Whether outboundAllow lists the address (as an address or within a CIDR; an entry without a
   * port: any port). A host name entry never vouches for the addresses it resolves to: a name can be
   * pointed elsewhere later (DNS rebinding), an address cannot.
   */
  listedAddress(address: string, port: string): boolean {
    const a = plain(address);
    return this.#entries().some(({ host, port: p, cidr }) => {
      if (p && p !== port) return false;
      if (!cidr) return plain(host) === a;
      if (isIP(a) !== isIP(cidr.net)) return false;
      const family = isIP(a) === 4 ? 'ipv4' : 'ipv6';
      const list = new BlockList();
      try {
        list.addSubnet(cidr.net, cidr.bits, family);
      } catch {
        return false;
      }
      return list.check(a, family);
    });
  }

  /** Whether outboundAllow lists the URL's host by name or address (with its port, or without one): a URL the operator allows by itself. */
  listedUrl(value: string): boolean {
    const t = target(value.trim());
    return this.#entries().some(e => !e.cidr && (!e.port || e.port === t.port) && plain(e.host) === plain(t.host));
  }

  #entries(): { host: string; port: string; cidr: { net: string; bits: number } | null }[] {
    return this.#allow().map(raw => {
      const entry = raw.trim().toLowerCase();
      const cidr = /^([^/]+)\/(\d{1,3})$/.exec(entry);
      if (cidr) return { host: cidr[1]!, port: '', cidr: { net: cidr[1]!, bits: Number(cidr[2]) } };
      const t = target(entry);
      return { host: t.host, port: t.port, cidr: null };
    });
  }

  /** The instance operators' organization (AccountService.instanceOrganizationId). */
  instanceOrganizationId(): Promise<string | null> {
    return this.#instanceOrganization();
  }

  /**
   * Resolves the URL's or host's name and checks every address; answers the one to connect to,
   * or throws a 400 naming the field. Nothing is connected to here.
   */
  async check(value: string, req: OutboundRequest): Promise<CheckedAddress> {
    const { host, port } = target(value.trim());
    if (!host) throw invalidField(req.field, 'names no host');
    const ip = isIP(host);
    const found = ip
      ? [{ address: host, family: ip }]
      : await this.#resolver(host).catch((e: Error) => {
          throw Object.assign(invalidField(req.field, `names ${host}, which cannot be resolved (${(e as { code?: string }).code ?? e.message})`), { unresolved: true });
        });
    if (!found.length) throw invalidField(req.field, `names ${host}, which has no address`);
    const own = ownAddresses();
    let privateAllowed: boolean | null = null;
    for (const a of found) {
      if (this.listedAddress(a.address, port)) continue;
      const kind = addressKind(a.address, own);
      if (kind === 'public') continue;
      if (kind === 'private') {
        privateAllowed ??= req.organizationId !== null && req.organizationId === (await this.instanceOrganizationId());
        if (privateAllowed) continue;
      }
      const of = a.address === host ? '' : ` (the address of ${host})`;
      throw invalidField(
        req.field,
        `points at ${a.address}${of}, a ${kind} address, which Berth does not connect to ${kind === 'private' ? "for this organization (private ranges are the instance operators' organization's)" : 'for users'}; the operator allows it by listing it in outboundAllow (BERTH_OUTBOUND_ALLOW)`,
      );
    }
    return found[0]!;
  }

  /**
   * The check made when a URL is saved: as `check`, but a name that does not resolve now is
   * accepted (nothing can be connected to; every connection checks it again).
   */
  async checkSaved(value: string, req: OutboundRequest): Promise<void> {
    try {
      await this.check(value, req);
    } catch (e) {
      if ((e as { unresolved?: boolean }).unresolved) return;
      throw e;
    }
  }

  /** A lookup for node:net, node:http or any client that takes one: every name is checked as `check` does. */
  lookup(req: OutboundRequest, port = ''): LookupFunction {
    return (host, options, callback) => {
      this.check(port ? `${host.includes(':') ? `[${host}]` : host}:${port}` : host, req).then(
        a => answerWith(callback, options, a),
        (e: Error) => callback(e as NodeJS.ErrnoException, '', 0),
      );
    };
  }

  /**
   * fetch to a user's URL: http(s) only, no user or password in it, the checked address, no
   * redirects (a 3xx is the answer), answers up to 16 MiB. A refused address is a 400 naming the field.
   */
  fetch(req: OutboundRequest): (input: string, init?: RequestInit) => Promise<Response> {
    return async (input, init = {}) => {
      let url: URL;
      try {
        url = new URL(input);
      } catch {
        throw invalidField(req.field, 'must be a URL');
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidField(req.field, `must be an http or https URL, not ${url.protocol}`);
      if (url.username || url.password) throw invalidField(req.field, 'must not carry a user or password');
      const checked = await this.check(url.href, req);
      const lookup: LookupFunction = (_host, options, callback) => answerWith(callback, options, checked);
      const headers = Object.fromEntries(new Headers(init.headers).entries());
      const body = typeof init.body === 'string' ? init.body : init.body instanceof URLSearchParams ? init.body.toString() : undefined;
      if (init.body instanceof URLSearchParams && !headers['content-type']) headers['content-type'] = 'application/x-www-form-urlencoded;charset=UTF-8';
      if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
      const client = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
      return new Promise<Response>((resolve, reject) => {
        const request = client.request(url, { method: init.method ?? 'GET', headers, lookup, signal: init.signal ?? undefined, agent: false }, res => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER) {
              request.destroy(new Error('the answer is larger than 16 MiB'));
              return;
            }
            chunks.push(chunk);
          });
          res.on('error', reject);
          res.on('end', () => {
            const status = res.statusCode ?? 502;
            const resHeaders = new Headers();
            for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') resHeaders.set(k, v);
            const nobody = status === 204 || status === 304 || status < 200;
            resolve(new Response(nobody ? null : Buffer.concat(chunks), { status: status < 200 || status > 599 ? 502 : status, headers: resHeaders }));
          });
        });
        request.on('error', reject);
        request.end(body);
      });
    };
  }
}

/** The start of a vendor's error message, at most `max` characters (answers never quote a body). */
export const vendorMessage = (text: unknown, max = 200): string | null => (typeof text === 'string' && text.trim() ? text.trim().replace(/\s+/g, ' ').slice(0, max) : null);
