#!/usr/bin/env node
// What a plugin adds to Berth's idle footprint. Berth runs as a child process started like
// scripts/start.sh (compiled build, production flags), each start on a fresh PostgreSQL database.
//
//   node bench/plugin-footprint.ts [--rounds N] [--idle S] [--json FILE] <plugin>...
//
// N rounds (default 5), each starting Berth once with every built-in plugin and provider ("with")
// and once without each plugin named, its providers off too (the order rotates per round). Each is
// read after --idle seconds (default 10): VmRSS and RssAnon (the heap and other anonymous memory)
// of /proc/<pid>/status. The table gives, per plugin, the medians without and with it, their
// difference and the ranges; the aim (issues 28, 32, 38 and the notification issue) is +2 MB at most.
//
// Needs PostgreSQL on 127.0.0.1 (BERTH_BENCH_PG, trust auth). Everything it creates is removed.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { buildBerth, cleanUpBerths, MB, runBench, median, memoryOf, root, startBerth, type Berth } from './util.ts';

/** Per plugin: the providers that belong to it (off in its "without" start). */
export const pluginParts: Record<string, { providers: Record<string, string[]>; note?: string }> = {
  notification: { providers: { notify: ['custom', 'discord', 'email', 'gotify', 'lark', 'mattermost', 'ntfy', 'pushover', 'resend', 'slack', 'teams', 'telegram'] } },
  // hosts stays: workloads needs it (the local engine); without server there is no remote one.
  server: { providers: { host: ['ssh'] }, note: 'hosts stays (workloads needs it); host.ssh off' },
  'git-provider': { providers: { git: ['github', 'gitlab', 'bitbucket', 'gitea'] } },
  ai: { providers: { ai: ['anthropic', 'ollama', 'openai'] } },
  billing: { providers: {} },
  registry: { providers: {} },
  cluster: { providers: {} },
  cleanup: { providers: {} },
  'deploy-hook': { providers: {} },
  preview: { providers: {} },
  monitoring: { providers: {} },
  // docker.uploadFileToContainer is an upload: its routes take multipart bodies (the form parser, busboy, loads at the first upload only)
  docker: { providers: {} },
  tag: { providers: {} },
  network: { providers: {} },
  schedule: { providers: {} },
  patch: { providers: {} },
  'license-key': { providers: {} },
  whitelabeling: { providers: {} },
  'forward-auth': { providers: {} },
  // scim-patch and scim2-parse-filter load at the first PATCH or filter only
  scim: { providers: {} },
  'audit-log': { providers: {} },
  'custom-role': { providers: {} },
  // openid-client and @node-saml/node-saml load at the first sign-in or provider check only
  sso: { providers: {} },
  rollback: { providers: {} },
};

/** The built-in plugins that need `name` (their `dependencies` in src/index.ts), directly or through another: a start without it leaves them out too. */
function dependents(name: string, builtin: string[]): string[] {
  const needs = Object.fromEntries(builtin.map(p => [p, /dependencies: \[([^\]]*)\]/.exec(readFileSync(path.join(root, 'plugins', p, 'src/index.ts'), 'utf8'))?.[1]?.match(/[\w-]+/g) ?? []]));
  const out = new Set<string>();
  for (let grew = true; grew;) {
    grew = false;
    for (const p of builtin)
      if (p !== name && !out.has(p) && needs[p]!.some(d => d === name || out.has(d))) {
        out.add(p);
        grew = true;
      }
  }
  return [...out].sort();
}

export interface FootprintOptions {
  rounds: number;
  idleMs: number;
  /** Configuration of the starts with every plugin (e.g. provider options). */
  config?: Record<string, unknown>;
  /** More starts with every plugin, each prepared by `setup` before its idle time (e.g. records created). */
  extra?: { label: string; setup: (berth: Berth) => Promise<void> }[];
}

type Reading = { rss: number; anon: number };

/** Measures, reports (console.error per start) and answers the table's lines and the raw readings. */
export async function pluginFootprint(names: string[], o: FootprintOptions): Promise<{ lines: string[]; readings: Record<string, Reading[]>; deltas: Record<string, number> }> {
  const builtin = readdirSync(path.join(root, 'plugins'));
  for (const n of names) if (!pluginParts[n] || !builtin.includes(n)) throw new Error(`bench/plugin-footprint: unknown plugin ${n} (known: ${Object.keys(pluginParts).join(', ')})`);
  const WITH = 'with every plugin';
  const variants: Record<string, { config: Record<string, unknown>; env: Record<string, string>; setup?: (berth: Berth) => Promise<void> }> = {
    [WITH]: { config: o.config ?? {}, env: {} },
    ...Object.fromEntries(o.extra?.map(e => [e.label, { config: o.config ?? {}, env: {}, setup: e.setup }]) ?? []),
  };
  const needing: Record<string, string[]> = {};
  for (const n of names) {
    const providers = Object.fromEntries(Object.entries(pluginParts[n]!.providers).map(([contract, ids]) => [contract, Object.fromEntries(ids.map(id => [id, false]))]));
    needing[n] = dependents(n, builtin);
    variants[`without ${n}`] = { config: { providers }, env: { BERTH_PLUGINS: builtin.filter(p => p !== n && !needing[n]!.includes(p)).join(',') } };
  }
  const labels = Object.keys(variants);
  const readings: Record<string, Reading[]> = Object.fromEntries(labels.map(l => [l, []]));
  for (let i = 0; i < o.rounds; i++) {
    for (let k = 0; k < labels.length; k++) {
      const label = labels[(i + k) % labels.length]!;
      const v = variants[label]!;
      const berth = await startBerth(`f${i}_${k}`, v.config, v.env);
      await v.setup?.(berth);
      await sleep(o.idleMs);
      readings[label]!.push(memoryOf(berth.child.pid!));
      await berth.stop();
      console.error(`footprint round ${i + 1}/${o.rounds}: ${label}: ${(readings[label]!.at(-1)!.rss / MB).toFixed(1)} MB`);
    }
  }
  const m = (l: string, f: keyof Reading) => median(readings[l]!.map(r => r[f])) / MB;
  const range = (l: string, f: keyof Reading) => `${(Math.min(...readings[l]!.map(r => r[f])) / MB).toFixed(1)}–${(Math.max(...readings[l]!.map(r => r[f])) / MB).toFixed(1)}`;
  const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(1)} MB`;
  const deltas = Object.fromEntries(names.map(n => [n, m(WITH, 'rss') - m(`without ${n}`, 'rss')]));
  const lines = [
    `Idle footprint after ${o.idleMs / 1000} s, medians of ${o.rounds} starts each (VmRSS; RssAnon is the heap and other anonymous memory; ranges are min–max):`,
    '',
    '| plugin | without: RSS (range) | with: RSS (range) | Δ RSS | Δ RssAnon | aim ≤ +2 MB |',
    '|---|---|---|---|---|---|',
    ...names.map(n => {
      const w = `without ${n}`;
      const notes = [pluginParts[n]!.note, needing[n]!.length ? `also without ${needing[n]!.join(', ')}, which need it` : undefined].filter(Boolean);
      return `| ${n}${notes.length ? ` (${notes.join('; ')})` : ''} | ${m(w, 'rss').toFixed(1)} MB (${range(w, 'rss')}) | ${m(WITH, 'rss').toFixed(1)} MB (${range(WITH, 'rss')}) | ${signed(deltas[n]!)} | ${signed(m(WITH, 'anon') - m(w, 'anon'))} | ${deltas[n]! <= 2 ? 'met' : '**MISSED**'} |`;
    }),
    ...(o.extra?.length
      ? [
          '',
          '| also started | RSS (range) | Δ RSS against with every plugin |',
          '|---|---|---|',
          ...o.extra.map(e => `| ${e.label} | ${m(e.label, 'rss').toFixed(1)} MB (${range(e.label, 'rss')}) | ${signed(m(e.label, 'rss') - m(WITH, 'rss'))} |`),
        ]
      : []),
  ];
  return { lines, readings, deltas };
}

async function main() {
  const { values: opt, positionals } = parseArgs({ allowPositionals: true, options: { rounds: { type: 'string', default: '5' }, idle: { type: 'string', default: '10' }, json: { type: 'string' } } });
  const names = positionals.length ? positionals : Object.keys(pluginParts);
  buildBerth();
  const loadavg = os.loadavg();
  const { lines, readings, deltas } = await pluginFootprint(names, { rounds: Math.max(1, Number(opt.rounds)), idleMs: Number(opt.idle) * 1000 });
  console.log(lines.join('\n'));
  console.log(
    `\nLoad average (1, 5, 15 min) at the start: ${loadavg.map(x => x.toFixed(2)).join(', ')}; at the end: ${os
      .loadavg()
      .map(x => x.toFixed(2))
      .join(', ')}`,
  );
  if (opt.json) writeFileSync(opt.json, JSON.stringify({ loadavg, readings, deltas }, null, 2));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runBench('bench/plugin-footprint', main, cleanUpBerths, 40 * 60_000);
}
