// randomizeCompose: a suffix on every name a compose file declares and on every reference to it,
// by the peer's rules (its tests pin them): services (and `depends_on` in both forms, `links`,
// `extends`, `volumes_from`, `container_name`), named volumes (not bind paths), networks, configs
// and secrets, each at the top level and where services use them.
// Where the peer's rule breaks the file, Berth keeps the meaning instead:
// - an external volume/network/config/secret keeps its real name (`name:` is added), since the
//   engine looks it up by name;
// - `default`, the peer's platform network (dokploy-network) and this instance's (the config key
//   platformNetwork) are never renamed;
// - `links: [db:alias]` and `volumes_from: [svc:ro]` get the suffix on the service part only, and
//   `volumes_from: [container:x]` (a container, not a service) is left alone;
// - a service's per-network settings (aliases, ipv4_address, ...) are kept as they are.
import { isMap, isScalar, isSeq, type Document, type Scalar, type YAMLMap } from 'yaml';
import { composeText, keyOf, mapAt, nodeAt, parseCompose, renameKey, resolve, rootOf, scalarItems, servicesOf, setValue } from './yaml-doc.ts';

/** Networks that belong to the platform (the proxy joins them), never suffixed: `default`, the peer's, and this instance's platform network. */
export const sharedNetworks = (platformNetwork: string): Set<string> => new Set(['default', 'dokploy-network', platformNetwork]);

/** Edits each node once, however many services reach it through an alias. */
class Once {
  readonly #seen = new WeakSet<object>();
  take(node: object): boolean {
    if (this.#seen.has(node)) return false;
    this.#seen.add(node);
    return true;
  }
}

const sfx = (name: string, suffix: string) => `${name}-${suffix}`;

function suffixScalar(s: Scalar, suffix: string, once: Once, edit: (v: string) => string = v => sfx(v, suffix)): void {
  if (typeof s.value === 'string' && once.take(s)) s.value = edit(s.value);
}

/** Renames the top-level keys of a section (volumes, networks, configs, secrets). */
function suffixRoot(doc: Document, section: string, suffix: string, keep: (name: string) => boolean = () => false): void {
  const map = mapAt(doc, rootOf(doc), section);
  if (!map) return;
  for (const pair of map.items) {
    const name = keyOf(pair);
    if (name === null || name === '<<' || keep(name)) continue;
    const value = resolve(doc, pair.value);
    if (isMap(value) && isExternalWithoutName(doc, value)) setValue(doc, value, 'name', name);
    renameKey(pair, sfx(name, suffix));
  }
}

function isExternalWithoutName(doc: Document, def: YAMLMap): boolean {
  const external = nodeAt(doc, def, 'external');
  const isExternal = isScalar(external) ? external.value === true : isMap(external);
  return isExternal && nodeAt(doc, def, 'name') === undefined && !(isMap(external) && external.has('name'));
}

/** A service's reference to another service, `name` or `name:rest`. */
function serviceRef(value: string, suffix: string): string {
  const at = value.indexOf(':');
  return at < 0 ? sfx(value, suffix) : `${sfx(value.slice(0, at), suffix)}${value.slice(at)}`;
}

function suffixServices(doc: Document, suffix: string, once: Once): void {
  for (const service of servicesOf(doc)) {
    renameKey(service.pair, sfx(service.name, suffix));
    for (const map of service.maps) {
      if (!once.take(map)) continue;
      for (const pair of map.items) {
        const key = keyOf(pair);
        const value = resolve(doc, pair.value);
        if (key === 'depends_on') {
          if (isSeq(value)) for (const s of scalarItems(doc, value)) suffixScalar(s, suffix, once);
          else if (isMap(value) && once.take(value))
            for (const dep of value.items) {
              const n = keyOf(dep);
              if (n !== null) renameKey(dep, sfx(n, suffix));
            }
        } else if (key === 'container_name' && isScalar(value)) {
          suffixScalar(value, suffix, once);
        } else if (key === 'links' && isSeq(value)) {
          for (const s of scalarItems(doc, value)) suffixScalar(s, suffix, once, v => serviceRef(v, suffix));
        } else if (key === 'extends') {
          if (isScalar(value)) suffixScalar(value, suffix, once);
          else if (isMap(value)) {
            const s = resolve(doc, value.get('service', true));
            if (isScalar(s)) suffixScalar(s, suffix, once);
          }
        } else if (key === 'volumes_from' && isSeq(value)) {
          for (const s of scalarItems(doc, value))
            suffixScalar(s, suffix, once, v => (v.startsWith('container:') ? v : v.startsWith('service:') ? `service:${serviceRef(v.slice(8), suffix)}` : serviceRef(v, suffix)));
        }
      }
    }
  }
}

/** `name:/path[:mode]` or `name/sub:/path` with a named volume (not a bind path or a variable). */
function volumeRef(value: string, suffix: string): string {
  const [source, ...rest] = value.split(':');
  if (!source || !rest.length || /^[./~$]/.test(source)) return value;
  const slash = source.indexOf('/');
  const named = slash < 0 ? sfx(source, suffix) : `${sfx(source.slice(0, slash), suffix)}${source.slice(slash)}`;
  return [named, ...rest].join(':');
}

/** A list of references (`volumes`, `configs`, `secrets`): short strings and long maps with `source`. */
function suffixRefs(doc: Document, suffix: string, once: Once, key: string, short: (v: string) => string, long: (m: YAMLMap) => boolean): void {
  for (const service of servicesOf(doc)) {
    for (const map of service.maps) {
      const list = resolve(doc, map.get(key, true));
      if (!isSeq(list)) continue;
      for (const item of list.items.map(i => resolve(doc, i))) {
        if (isScalar(item)) suffixScalar(item, suffix, once, short);
        else if (isMap(item) && long(item) && once.take(item)) {
          const source = resolve(doc, item.get('source', true));
          if (isScalar(source) && typeof source.value === 'string') source.value = sfx(source.value, suffix);
        }
      }
    }
  }
}

function suffixServiceNetworks(doc: Document, suffix: string, once: Once, shared: Set<string>): void {
  for (const service of servicesOf(doc)) {
    for (const map of service.maps) {
      const networks = resolve(doc, map.get('networks', true));
      if (isSeq(networks)) {
        for (const s of scalarItems(doc, networks)) suffixScalar(s, suffix, once, v => (shared.has(v) ? v : sfx(v, suffix)));
      } else if (isMap(networks) && once.take(networks)) {
        for (const pair of networks.items) {
          const name = keyOf(pair);
          if (name !== null && !shared.has(name)) renameKey(pair, sfx(name, suffix));
        }
      }
    }
  }
}

/** What to suffix (absent = everything) and the platform network, which never is. */
export interface SuffixParts {
  services?: boolean;
  volumes?: boolean;
  networks?: boolean;
  configs?: boolean;
  secrets?: boolean;
}

/** Adds the suffix to a document in place. */
export function suffixDocument(doc: Document, suffix: string, platformNetwork: string, parts: SuffixParts = {}): void {
  const all = Object.keys(parts).length === 0;
  const once = new Once();
  if (all || parts.services) suffixServices(doc, suffix, once);
  if (all || parts.volumes) {
    suffixRoot(doc, 'volumes', suffix);
    suffixRefs(
      doc,
      suffix,
      once,
      'volumes',
      v => volumeRef(v, suffix),
      m => {
        const type = resolve(doc, m.get('type', true));
        return isScalar(type) && type.value === 'volume';
      },
    );
  }
  if (all || parts.networks) {
    const shared = sharedNetworks(platformNetwork);
    suffixRoot(doc, 'networks', suffix, n => shared.has(n));
    suffixServiceNetworks(doc, suffix, once, shared);
  }
  for (const section of ['configs', 'secrets'] as const) {
    if (!all && !parts[section]) continue;
    suffixRoot(doc, section, suffix);
    suffixRefs(
      doc,
      suffix,
      once,
      section,
      v => sfx(v, suffix),
      () => true,
    );
  }
}

/** The file with the suffix on every name it declares and every reference to it (randomizeCompose). */
export function addSuffix(text: string, suffix: string, platformNetwork: string): string {
  if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(suffix)) throw new Error(`The suffix "${suffix}" may hold only letters, digits, '.', '_' and '-', and must start with a letter or digit`);
  const doc = parseCompose(text);
  suffixDocument(doc, suffix, platformNetwork);
  return composeText(doc);
}
