#!/usr/bin/env node
// What a V8 heap snapshot (bench/api.ts --heap-snapshot DIR) is made of, for issue 17's question
// "what is each remaining megabyte": the self sizes summed by kind of object (compiled code and
// its metadata, source text, other strings, JS objects and arrays, closures...), and the part of
// it that belongs to each loaded script — its source text, and the bytecode, scope and feedback
// data of its functions — summed per package (node_modules/<name>, berth:<workspace dir>, the
// bundled dependencies, node's own).
//
//   node bench/heap-summary.ts FILE.heapsnapshot [--top N]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: opt, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' } } });
if (positionals.length !== 1) {
  process.stderr.write('usage: node bench/heap-summary.ts FILE.heapsnapshot [--top N]\n');
  process.exit(2);
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}
const snap = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as Snapshot;
const { meta } = snap.snapshot;
const NF = meta.node_fields.length;
const EF = meta.edge_fields.length;
const [TYPE, NAME, SIZE, EDGES] = ['type', 'name', 'self_size', 'edge_count'].map(f => meta.node_fields.indexOf(f));
const [E_TYPE, E_NAME, E_TO] = ['type', 'name_or_index', 'to_node'].map(f => meta.edge_fields.indexOf(f));
const nodeTypes = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const { nodes, edges, strings } = snap;
const count = nodes.length / NF;

const firstEdge = new Uint32Array(count + 1);
for (let i = 0, e = 0; i < count; i++) {
  firstEdge[i] = e;
  e += nodes[i * NF + EDGES!]! * EF;
}
firstEdge[count] = edges.length;

const typeOf = (n: number) => nodeTypes[nodes[n * NF + TYPE!]!]!;
const nameOf = (n: number) => strings[nodes[n * NF + NAME!]!]!;
const sizeOf = (n: number) => nodes[n * NF + SIZE!]!;
/** The node an edge of `n` named `name` leads to (property/internal edges carry a string name), or -1. */
function edgeTo(n: number, name: string): number {
  for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += EF) {
    const t = edgeTypes[edges[e + E_TYPE!]!];
    if (t !== 'element' && t !== 'hidden' && strings[edges[e + E_NAME!]!] === name) return edges[e + E_TO!]! / NF;
  }
  return -1;
}
const MB = (b: number) => (b / 1048576).toFixed(2);

// By kind of object: V8's node types, with code split into its main parts.
const byKind = new Map<string, number>();
let total = 0;
for (let n = 0; n < count; n++) {
  const size = sizeOf(n);
  total += size;
  const type = typeOf(n);
  let kind = type;
  if (type === 'code') {
    const name = nameOf(n);
    kind = name.startsWith('system / ') ? `code: ${name.slice(9)}` : name.startsWith('(') ? `code: ${name}` : 'code: compiled functions';
  } else if (type === 'concatenated string' || type === 'sliced string') kind = 'string';
  byKind.set(kind, (byKind.get(kind) ?? 0) + size);
}

// Per script: its source text (a string reached through the script's "source" edge) and the
// bytecode, scope info and feedback of its functions (SharedFunctionInfo → script).
const packageOf = (url: string): string => {
  if (!url) return '(no name: eval, wasm or internal)';
  if (url.startsWith('node:')) return 'node (built-in)';
  const path = url.replace(/^file:\/\//, '');
  const modules = path.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const [a, b] = path.slice(modules + 14).split('/');
    return a!.startsWith('@') ? `${a}/${b}` : a!;
  }
  const vendor = /\/core\/vendor\/([^/]+)/.exec(path);
  if (vendor) return `bundled: ${vendor[1]}`;
  const own = /\/(core|plugins\/[^/]+|providers\/[^/]+|bench)\//.exec(path);
  if (own) return `berth: ${own[1]}`;
  return path;
};
const scriptPackage = new Map<number, string>();
const perPackage = new Map<string, { source: number; functions: number; scripts: number }>();
const entry = (pkg: string) => {
  let e = perPackage.get(pkg);
  if (!e) perPackage.set(pkg, (e = { source: 0, functions: 0, scripts: 0 }));
  return e;
};
/** Objects already counted: scope infos and constant pools are shared between functions, each counts once. */
const counted = new Uint8Array(count);
const once = (n: number) => (counted[n] ? 0 : ((counted[n] = 1), sizeOf(n)));
/** The self size of `n` plus that of its internal children of type code (a bytecode array's constant pool and tables), each object once. */
function withParts(n: number): number {
  let size = once(n);
  for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += EF) {
    const to = edges[e + E_TO!]! / NF;
    if (edgeTypes[edges[e + E_TYPE!]!] === 'internal' && typeOf(to) === 'code') size += once(to);
  }
  return size;
}
// A script is a code node (named by its URL) with its source and line ends.
for (let n = 0; n < count; n++) {
  if (typeOf(n) !== 'code') continue;
  const source = edgeTo(n, 'source');
  const lineEnds = edgeTo(n, 'line_ends');
  if (source < 0 || lineEnds < 0) continue;
  const pkg = packageOf(nameOf(n));
  scriptPackage.set(n, pkg);
  const e = entry(pkg);
  e.scripts++;
  e.source += sizeOf(source) + sizeOf(lineEnds) + sizeOf(n);
}
// A function (SharedFunctionInfo: a code node with a script edge) with its bytecode, scope and feedback metadata.
let attributed = 0;
for (let n = 0; n < count; n++) {
  if (typeOf(n) !== 'code') continue;
  const script = edgeTo(n, 'script');
  const pkg = script >= 0 ? scriptPackage.get(script) : undefined;
  if (!pkg) continue;
  let size = once(n);
  for (const part of ['function_data', 'name_or_scope_info', 'raw_outer_scope_info_or_feedback_metadata']) {
    const to = edgeTo(n, part);
    if (to >= 0 && typeOf(to) === 'code') size += withParts(to);
  }
  entry(pkg).functions += size;
  attributed += size;
}

const top = Number(opt.top);
const out: string[] = [];
out.push(`## ${positionals[0]}: ${MB(total)} MB in ${count} objects (self sizes)`, '', '| kind | MB |', '|---|---|');
for (const [k, v] of [...byKind].sort((a, b) => b[1] - a[1]).slice(0, top)) out.push(`| ${k} | ${MB(v)} |`);
const rows = [...perPackage].map(([pkg, e]) => ({ pkg, ...e, all: e.source + e.functions })).sort((a, b) => b.all - a.all);
const sum = (f: 'source' | 'functions' | 'all') => rows.reduce((s, r) => s + r[f], 0);
out.push(
  '',
  `Loaded scripts by package: source text with its line ends ${MB(sum('source'))} MB, their functions' bytecode, scopes and feedback metadata ${MB(attributed)} MB`,
  '',
  '| package | scripts | source (MB) | functions (MB) | together (MB) |',
  '|---|---|---|---|---|',
);
for (const r of rows.slice(0, top)) out.push(`| ${r.pkg} | ${r.scripts} | ${MB(r.source)} | ${MB(r.functions)} | ${MB(r.all)} |`);
const rest = rows.slice(top);
if (rest.length)
  out.push(
    `| ${rest.length} others | ${rest.reduce((s, r) => s + r.scripts, 0)} | ${MB(rest.reduce((s, r) => s + r.source, 0))} | ${MB(rest.reduce((s, r) => s + r.functions, 0))} | ${MB(rest.reduce((s, r) => s + r.all, 0))} |`,
  );
process.stdout.write(out.join('\n') + '\n');
