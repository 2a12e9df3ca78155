// The compose file as a YAML Document (eemeli's `yaml`), not as plain objects: every transform
// edits the nodes in place, so comments, key order, anchors and keys Berth does not know survive
// the round trip. Aliases are followed (`*ref`, `<<: *base`) and each node is edited once, however
// many services share it.
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, Scalar, type Document, type Node, type Pair, type YAMLMap, type YAMLSeq } from 'yaml';
import { interpolate } from './interpolate.ts';

/** The compose file's document; throws an Error naming the line when the text is not a compose file's YAML. */
export function parseCompose(text: string): Document {
  const lines = new LineCounter();
  const doc = parseDocument(text, { merge: true, lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const first = doc.errors[0];
  if (first) {
    const at = lines.linePos(first.pos[0]);
    throw new Error(`The compose file is not valid YAML at line ${at.line}, column ${at.col}: ${first.message.split('\n')[0]}`);
  }
  const root = doc.contents;
  if (root !== null && !isMap(root)) {
    throw new Error(`The compose file must be a mapping of keys (services:, volumes:, ...); line ${lines.linePos(root.range?.[0] ?? 0).line} holds a ${isSeq(root) ? 'list' : 'single value'}`);
  }
  const services = isMap(root) ? root.get('services', true) : undefined;
  if (services !== undefined && services !== null && !isMap(resolve(doc, services as Node))) {
    const range = (services as Node).range;
    throw new Error(`"services" must be a mapping of service names to their definitions (line ${lines.linePos(range?.[0] ?? 0).line})`);
  }
  return doc;
}

/** The text of a document, without folding long lines (labels and commands stay on one line). */
export function composeText(doc: Document): string {
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}

/** A node with its alias followed. */
export function resolve(doc: Document, node: unknown): unknown {
  return isAlias(node) ? node.resolve(doc) : node;
}

/** The key of a pair as a string (null for a key that is not a scalar). */
export function keyOf(pair: Pair): string | null {
  const key = pair.key;
  if (isScalar(key)) {
    if (typeof key.value === 'symbol') return '<<'; // a merge key (`<<: *base`)
    return key.value === null || key.value === undefined ? null : String(key.value);
  }
  if (typeof key === 'string' || typeof key === 'number') return String(key);
  return null;
}

/** The pair of a map under a key. */
export function pairOf(map: YAMLMap, key: string): Pair | undefined {
  return map.items.find(p => keyOf(p) === key);
}

/** The node under a key, alias followed. */
export function nodeAt(doc: Document, map: YAMLMap | null | undefined, key: string): unknown {
  if (!map) return undefined;
  return resolve(doc, pairOf(map, key)?.value);
}

/** The map under a key (null when absent or not a map). */
export function mapAt(doc: Document, map: YAMLMap | null | undefined, key: string): YAMLMap | null {
  const node = nodeAt(doc, map, key);
  return isMap(node) ? node : null;
}

/** The list under a key (null when absent or not a list). */
export function seqAt(doc: Document, map: YAMLMap | null | undefined, key: string): YAMLSeq | null {
  const node = nodeAt(doc, map, key);
  return isSeq(node) ? node : null;
}

/** The root mapping (made when the file is empty). */
export function rootOf(doc: Document): YAMLMap {
  if (!isMap(doc.contents)) doc.contents = doc.createNode({});
  return doc.contents as YAMLMap;
}

/** The map under a key, created empty when absent or null. */
export function ensureMap(doc: Document, map: YAMLMap, key: string): YAMLMap {
  const existing = mapAt(doc, map, key);
  if (existing) return existing;
  const made = doc.createNode({}) as YAMLMap;
  const pair = pairOf(map, key);
  if (pair) pair.value = made;
  else map.add(doc.createPair(key, made));
  return made;
}

/** The list under a key, created empty when absent or null. */
export function ensureSeq(doc: Document, map: YAMLMap, key: string): YAMLSeq {
  const existing = seqAt(doc, map, key);
  if (existing) return existing;
  const made = doc.createNode([]) as YAMLSeq;
  const pair = pairOf(map, key);
  if (pair) pair.value = made;
  else map.add(doc.createPair(key, made));
  return made;
}

/** Sets a key of a map to a plain value (a string, number, list or object), keeping the key's comments. */
export function setValue(doc: Document, map: YAMLMap, key: string, value: unknown): void {
  const pair = pairOf(map, key);
  const node = doc.createNode(value) as Node;
  if (pair) pair.value = node;
  else map.add(doc.createPair(key, node));
}

/** Renames a key in place (its position, comments and value stay). */
export function renameKey(pair: Pair, name: string): void {
  if (isScalar(pair.key)) pair.key.value = name;
  else pair.key = new Scalar(name);
}

/** The services: each name with its definition maps (its own plus those it merges with `<<`). */
export function servicesOf(doc: Document): { pair: Pair; name: string; maps: YAMLMap[] }[] {
  const services = mapAt(doc, isMap(doc.contents) ? doc.contents : null, 'services');
  if (!services) return [];
  const out: { pair: Pair; name: string; maps: YAMLMap[] }[] = [];
  for (const pair of services.items) {
    const name = keyOf(pair);
    if (name === null || name === '<<') continue;
    const value = resolve(doc, pair.value);
    out.push({ pair, name, maps: isMap(value) ? withMerged(doc, value) : [] });
  }
  return out;
}

/** A map followed by the maps it merges (`<<: *base` or `<<: [*a, *b]`), nearest first. */
export function withMerged(doc: Document, map: YAMLMap): YAMLMap[] {
  const out = [map];
  for (const pair of map.items) {
    if (keyOf(pair) !== '<<') continue;
    const value = resolve(doc, pair.value);
    const sources = isSeq(value) ? value.items.map(i => resolve(doc, i)) : [value];
    for (const source of sources) if (isMap(source)) out.push(...withMerged(doc, source));
  }
  return out;
}

/** The first definition of a service key, looking through merged maps. */
export function serviceNode(doc: Document, maps: YAMLMap[], key: string): { map: YAMLMap; node: unknown } | null {
  for (const map of maps) {
    const pair = pairOf(map, key);
    if (pair) return { map, node: resolve(doc, pair.value) };
  }
  return null;
}

/**
 * The images the services name, each once: plain strings, and with `vars` (what the program
 * interpolates the file from) those written with variables as the program will read them; without
 * `vars`, or when the program would refuse the value, one with a `$` is skipped.
 */
export function serviceImages(text: string, vars?: Record<string, string>): string[] {
  const doc = parseCompose(text);
  const images = servicesOf(doc)
    .map(s => serviceNode(doc, s.maps, 'image')?.node)
    .map(n => (isScalar(n) && typeof n.value === 'string' ? n.value.trim() : ''))
    .map(i => (i.includes('$') ? (vars ? (interpolate(i, vars)?.trim() ?? '') : '') : i))
    .filter(i => i && !i.includes('$'));
  return [...new Set(images)];
}

/** The names of the services, in the file's order. */
export function serviceNames(text: string): string[] {
  return servicesOf(parseCompose(text)).map(s => s.name);
}

/** Scalar items of a list, each alias followed. */
export function scalarItems(doc: Document, seq: YAMLSeq): Scalar[] {
  return seq.items.map(i => resolve(doc, i)).filter((i): i is Scalar => isScalar(i));
}
