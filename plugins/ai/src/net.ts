// The only way AI calls leave the instance. Every host name is resolved once, each address it
// resolves to is checked, and the connection goes to that checked address (so DNS rebinding
// cannot swap in another one between check and connect). Private, loopback, link-local and other
// special addresses are refused unless aiAllowedHosts lists them (as IP or IP:port). Redirects
// are not followed: a 3xx is the service's answer.
// node:http and node:https are imported on the first call: an ES import of node:http reads every
// export, its lazy WebSocket too, which loads Node's fetch (undici, about 2 MB resident) at boot.
import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { badRequest } from '@berth/core';

const special = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  special.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['2001:db8::', 32],
] as const) {
  special.addSubnet(net, bits, 'ipv6');
}

/** Whether an address is private, loopback, link-local, unspecified, multicast or otherwise not on the public internet. */
export function isSpecialAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return special.check(address, 'ipv4');
  if (family !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? special.check(mapped[1]!, 'ipv4') : special.check(address, 'ipv6');
}

const MAX_ANSWER = 16 * 1024 * 1024;
const portOf = (url: URL) => url.port || (url.protocol === 'https:' ? '443' : '80');
const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '').toLowerCase();

export class AiNetwork {
  readonly #allowed: () => string[];

  constructor(allowed: () => string[]) {
    this.#allowed = allowed;
  }

  /** Whether aiAllowedHosts lists host (with port, or without one: any port). */
  listed(host: string, port: string): boolean {
    const h = host.toLowerCase();
    return this.#allowed().some(entry => {
      const e = entry.toLowerCase().trim();
      const m = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(e.includes(':') && isIP(e) === 6 ? `[${e}]` : e);
      return Boolean(m && m[1] === h && (!m[2] || m[2] === port));
    });
  }

  /** Whether the URL's own host[:port] is listed (what a URL no configuration holds needs). */
  urlListed(url: URL): boolean {
    return this.listed(hostOf(url), portOf(url));
  }

  /** The address to connect to: the first the name resolves to, every one of them checked. */
  async #resolve(url: URL): Promise<{ address: string; family: number }> {
    const host = hostOf(url);
    const port = portOf(url);
    const found = isIP(host)
      ? [{ address: host, family: isIP(host) }]
      : await dnsLookup(host, { all: true, verbatim: true }).catch(e => {
          throw badRequest(`The AI provider's host ${host} cannot be resolved: ${(e as Error).message}`);
        });
    for (const a of found) {
      if (isSpecialAddress(a.address) && !this.listed(a.address, port)) {
        throw badRequest(
          `The AI provider's address ${a.address}${a.address === host ? '' : ` (of ${host})`} is private, loopback or link-local; the operator allows it by listing it in aiAllowedHosts (BERTH_AI_ALLOWED_HOSTS)`,
        );
      }
    }
    if (!found.length) throw badRequest(`The AI provider's host ${host} has no address`);
    return found[0]!;
  }

  /** fetch for AI providers: http(s) only, the checked address, no redirects, answers up to 16 MiB. */
  readonly fetch = async (input: string, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(input);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest(`The AI provider's URL must be http or https, not ${url.protocol}`);
    if (url.username || url.password) throw badRequest("The AI provider's URL must not carry a user or password");
    const target = await this.#resolve(url);
    const lookup: LookupFunction = (_host, options, callback) => {
      if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [target]);
      else callback(null, target.address, target.family);
    };
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    const body = typeof init.body === 'string' ? init.body : undefined;
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const client = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
    return new Promise<Response>((resolve, reject) => {
      const req = client.request(url, { method: init.method ?? 'GET', headers, lookup, signal: init.signal ?? undefined, agent: false }, res => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER) {
            req.destroy(new Error('the answer is larger than 16 MiB'));
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
      req.on('error', reject);
      req.end(body);
    });
  };
}
