// Environment text as users write it (dotenv syntax) and the references between the three
// levels: a workload's own variables may use ${{project.KEY}}, ${{environment.KEY}} and
// ${{KEY}} (another of its own variables), anywhere inside a value.
//
// Resolution is bounded, never recursive:
// - project values are inserted as written;
// - environment values may refer to the project (${{project.KEY}}), resolved once;
// - a workload's value may refer to its own variables, and the references inside a referenced
//   own variable are resolved once more (A=${{B}}, B=${{C}}-x, C=y gives A=y-x); a longer
//   chain or a cycle (A=${{B}}, B=${{A}}) is an error naming the variable.
// A reference to a variable that is not defined, or one that is malformed, is an error that
// opens with the peer's wording ("Invalid project environment variable: project.KEY",
// "Invalid environment variable: environment.KEY", "Invalid service environment variable: KEY"),
// so tools that match on it keep working, and then names the variable and the reference exactly.
// Error messages never contain a value: values are often secrets.
import { parse } from 'dotenv';
import { badRequest } from '@berth/core';

export const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const REFERENCE = /\$\{\{\s*([^{}]*?)\s*\}\}/g;
const REFERENCE_BODY = /^(?:(project|environment)\.)?([A-Za-z_][A-Za-z0-9_]*)$/;
// What dotenv reads as an assignment; any other non-blank, non-comment line it drops silently.
const ASSIGNMENT = /^\s*(?:export\s+)?([\w.-]+)(?:\s*=|:\s|:$)\s*(.*)$/;

const invalid = (field: string, message: string) => badRequest(message, [{ path: [field], message }]);

/**
 * Parses dotenv text (quotes, comments, `export`, multi-line quoted values). A line that is not
 * an assignment or a key that is not a valid variable name is BAD_REQUEST naming it; `field`
 * names the input field in the error's issue (default "env").
 */
export function parseEnv(text: string | null | undefined, field = 'env'): Record<string, string> {
  if (!text) return {};
  checkLines(text, field);
  const vars = parseLenient(text);
  for (const key of Object.keys(vars)) {
    if (!ENV_KEY.test(key)) {
      throw invalid(field, `Invalid environment variable name "${key}" in ${field}: use letters, digits and _, not starting with a digit`);
    }
  }
  return vars;
}

function checkLines(text: string, field: string): void {
  const lines = text.split(/\r?\n/);
  let open: string | null = null; // the quote of a multi-line value still open
  for (const [i, line] of lines.entries()) {
    if (open) {
      if (closes(line, open)) open = null;
      continue;
    }
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const match = ASSIGNMENT.exec(line);
    if (!match) {
      // Only what stands before "=" is shown: a line without one may be a pasted secret.
      const name = trimmed.includes('=') ? `"${trimmed.split('=')[0]!.trim().slice(0, 64)}" ` : '';
      throw invalid(field, `Invalid line ${i + 1} in ${field}: ${name}is not a KEY=value assignment (names use letters, digits and _)`);
    }
    const value = match[2]!;
    const quote = value[0];
    if ((quote === '"' || quote === "'" || quote === '`') && !closes(value.slice(1), quote)) open = quote;
  }
}

const closes = (rest: string, quote: string): boolean => {
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === '\\') i++;
    else if (rest[i] === quote) return true;
  }
  return false;
};

/** Only looked up by reference, never passed to a container: keys that cannot be referenced are ignored. */
function parseLenient(text: string | null | undefined): Record<string, string> {
  if (!text) return {};
  // Null prototype: keys such as constructor are plain variables, never inherited members.
  return Object.assign(Object.create(null) as Record<string, string>, parse(text));
}

export interface SharedEnv {
  /** The project's env text (shared by every environment of the project). */
  project?: string | null;
  /** The environment's env text. */
  environment?: string | null;
}

/** The workload's own variables (env text) with every reference replaced by its value. */
export function resolveEnv(own: string | null | undefined, { project, environment }: SharedEnv = {}): Record<string, string> {
  const projectVars = parseLenient(project);
  const environmentRaw = parseLenient(environment);
  const ownVars = parseEnv(own);

  const fromProject = (name: string, key: string, ref: string) => {
    if (!(key in projectVars)) throw missing('project', key, name, ref);
    return projectVars[key]!;
  };
  const environmentCache = new Map<string, string>();
  const fromEnvironment = (name: string, key: string, ref: string) => {
    if (!(key in environmentRaw)) throw missing('environment', key, name, ref);
    let value = environmentCache.get(key);
    if (value === undefined) {
      value = substitute(environmentRaw[key]!, key, (scope, k, r) => {
        if (scope === 'project') return fromProject(`${key} (of the environment)`, k, r);
        throw invalid('env', `Environment variable ${key} of the environment refers to ${r}: an environment's variables can only refer to \${{project.KEY}}`);
      });
      environmentCache.set(key, value);
    }
    return value;
  };
  const resolveOwn = (key: string, depth: number): string =>
    substitute(ownVars[key]!, key, (scope, k, ref) => {
      if (scope === 'project') return fromProject(key, k, ref);
      if (scope === 'environment') return fromEnvironment(key, k, ref);
      if (!(k in ownVars)) throw missing('own', k, key, ref);
      if (depth === 0)
        throw invalid('env', `Environment variable ${key} refers to ${ref}, which is nested too deeply or circular: a referenced variable's own references are resolved once more, no further`);
      return resolveOwn(k, depth - 1);
    });

  const resolved: Record<string, string> = {};
  for (const key of Object.keys(ownVars)) resolved[key] = resolveOwn(key, 2);
  return resolved;
}

type Scope = 'project' | 'environment' | 'own';
type Lookup = (scope: Scope, key: string, ref: string) => string;

function substitute(value: string, name: string, lookup: Lookup): string {
  return value.replace(REFERENCE, (ref: string, body: string) => {
    const match = REFERENCE_BODY.exec(body);
    if (!match) {
      const [, scope, key] = /^(?:(project|environment)\.)?(.*)$/s.exec(body)!;
      throw invalid(
        'env',
        `${peerWording((scope as Scope | undefined) ?? 'own', key!)} (environment variable ${name} refers to ${ref}, which is not a valid reference: use \${{KEY}}, \${{project.KEY}} or \${{environment.KEY}})`,
      );
    }
    return lookup((match[1] as 'project' | 'environment' | undefined) ?? 'own', match[2]!, ref);
  });
}

/** The peer's message for a reference it cannot resolve (its env-resolution wording). */
const peerWording = (scope: Scope, key: string) =>
  scope === 'project'
    ? `Invalid project environment variable: project.${key}`
    : scope === 'environment'
      ? `Invalid environment variable: environment.${key}`
      : `Invalid service environment variable: ${key}`;

const missing = (scope: Scope, key: string, name: string, ref: string) => invalid('env', `${peerWording(scope, key)} (environment variable ${name} refers to ${ref}, which is not defined)`);

/** Env as the engine wants it: ['KEY=value', ...]. */
export const toEnvList = (env: Record<string, string>): string[] => Object.entries(env).map(([k, v]) => `${k}=${v}`);
