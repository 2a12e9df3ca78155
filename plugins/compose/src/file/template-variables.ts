// The variables of a template (the peer's template.toml helpers), generated with node:crypto:
// ${domain}, ${password[:N]}, ${base64[:N]}, ${hash[:N]}, ${uuid}, ${randomPort}, ${jwt},
// ${jwt:N}, ${jwt:secret:payload}, ${email}, ${username}, ${timestamp[s|ms][:date]}, and references
// to the template's own variables. A `${NAME}` that is neither stays as written: compose
// interpolates it from the environment at deploy time.
import { createHmac, randomBytes, randomInt, randomUUID } from 'node:crypto';
import { isIP } from 'node:net';

export interface VariableContext {
  /** Where generated domains live: a domain (`apps.example.com`) or an IP (then `<...>-<ip>.sslip.io`). */
  domainBase: string;
  /** The workload's appName: generated domains start with it. */
  appName: string;
}

const ALNUM_LOWER = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** N lowercase letters and digits (the peer lowercases its passwords). */
export function generatePassword(length = 16): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALNUM_LOWER[randomInt(ALNUM_LOWER.length)];
  return out;
}

/** N hex characters. */
export function generateHash(length = 8): string {
  return randomBytes(Math.ceil(length / 2))
    .toString('hex')
    .slice(0, length);
}

/** N random bytes in base64. */
export function generateBase64(bytes = 32): string {
  return randomBytes(bytes).toString('base64');
}

/** A port for a service to listen on, outside the privileged range. */
export function generatePort(): number {
  return randomInt(1024, 65536);
}

/** A host name for the template under the domain base (`<app>-<hash>.<base>`, or sslip.io for an IP). */
export function generateDomain(ctx: VariableContext): string {
  const app =
    ctx.appName
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'app';
  const hash = randomBytes(3).toString('hex');
  const base = ctx.domainBase
    .trim()
    .toLowerCase()
    .replace(/^\.+|\.+$/g, '');
  if (!base || isIP(base)) return `${app}-${hash}-${(base || '127.0.0.1').replaceAll('.', '-').replaceAll(':', '-')}.sslip.io`;
  return `${app}-${hash}.${base}`;
}

const b64url = (data: string | Buffer) => Buffer.from(data).toString('base64').replace(/=/g, '').replace(/\+/g, '-').replace(/\//g, '_');

/** An HS256 JWT signed with `secret` (random when none), or N random bytes in hex (the peer's `${jwt:N}`). */
export function generateJwt(opts: { length?: number; secret?: string; payload?: Record<string, unknown> } = {}): string {
  if (opts.length) return randomBytes(opts.length).toString('hex');
  const now = Math.floor(Date.now() / 1000);
  const header = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const payload = b64url(JSON.stringify({ iss: 'berth', iat: now, exp: Math.floor(Date.parse('2030-01-01T00:00:00Z') / 1000), ...opts.payload }));
  const secret = opts.secret || randomBytes(32).toString('hex');
  return `${header}.${payload}.${b64url(createHmac('sha256', secret).update(`${header}.${payload}`).digest())}`;
}

const WORDS_A = ['amber', 'brisk', 'calm', 'dusty', 'eager', 'fuzzy', 'gentle', 'hazy', 'ivory', 'jolly', 'keen', 'lucky', 'misty', 'noble', 'olive', 'proud', 'quiet', 'rapid', 'sunny', 'tidy'];
const WORDS_B = [
  'otter',
  'falcon',
  'maple',
  'river',
  'cedar',
  'comet',
  'harbor',
  'lynx',
  'meadow',
  'pebble',
  'raven',
  'willow',
  'badger',
  'canyon',
  'heron',
  'summit',
  'tulip',
  'walrus',
  'zephyr',
  'birch',
];

/** A user name like `quiet_heron42`. */
export function generateUsername(): string {
  return `${WORDS_A[randomInt(WORDS_A.length)]}_${WORDS_B[randomInt(WORDS_B.length)]}${randomInt(10, 100)}`;
}

/** An e-mail address on the reserved example.com domain. */
export function generateEmail(): string {
  return `${generateUsername().replace('_', '.')}@example.com`;
}

const length = (spec: string, fallback: number) => {
  const n = Number.parseInt(spec.split(':')[1] ?? '', 10);
  return Number.isInteger(n) && n > 0 && n <= 4096 ? n : fallback;
};

/** The value of one helper (`password:32`, `uuid`, ...); undefined when the name is not a helper. */
function helper(name: string, variables: Record<string, string>, ctx: VariableContext): string | undefined {
  const [head, ...params] = name.split(':');
  switch (head) {
    case 'domain':
      return generateDomain(ctx);
    case 'password':
      return generatePassword(length(name, 16));
    case 'base64':
      return generateBase64(length(name, 32));
    case 'hash':
      return generateHash(length(name, 8));
    case 'uuid':
      return randomUUID();
    case 'randomPort':
      return String(generatePort());
    case 'username':
      return generateUsername();
    case 'email':
      return generateEmail();
    case 'timestamp':
    case 'timestampms':
      return String(params.length ? Date.parse(params.join(':')) : Date.now());
    case 'timestamps':
      return String(Math.round((params.length ? Date.parse(params.join(':')) : Date.now()) / 1000));
    case 'jwt': {
      if (!params.length) return generateJwt();
      if (params.length === 1 && /^\d{1,3}$/.test(params[0]!)) return generateJwt({ length: Number(params[0]) });
      const [secretRef, payloadRef] = params;
      let payload: Record<string, unknown> | undefined;
      const text = payloadRef ? (variables[payloadRef] ?? payloadRef) : '';
      if (text.trim().startsWith('{')) {
        try {
          const parsed: unknown = JSON.parse(text);
          if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) payload = parsed as Record<string, unknown>;
        } catch {
          payload = undefined;
        }
      }
      return generateJwt({ secret: secretRef ? (variables[secretRef] ?? secretRef) : undefined, payload });
    }
    default:
      return undefined;
  }
}

const REF = /\$\{([^}]+)\}/g;

/** A string with its helpers generated and its references to known variables replaced. */
export function processValue(value: string, variables: Record<string, string>, ctx: VariableContext): string {
  const once = value.replace(REF, (match, name: string) => helper(name, variables, ctx) ?? (Object.hasOwn(variables, name) ? variables[name]! : match));
  return once.replace(REF, (match, name: string) => (Object.hasOwn(variables, name) ? variables[name]! : match));
}

/** A jwt helper that reads other variables (`jwt:SECRET:PAYLOAD`): generated after the references are followed. */
const readsVariables = (name: string) => name.startsWith('jwt:') && !/^jwt:\d{1,3}$/.test(name);

function followReferences(variables: Record<string, string>): void {
  for (let pass = 0; pass < 10; pass++) {
    let changed = false;
    for (const key of Object.keys(variables)) {
      const next = variables[key]!.replace(REF, (match, name: string) => (name !== key && Object.hasOwn(variables, name) ? variables[name]! : match));
      if (next !== variables[key]) {
        variables[key] = next;
        changed = true;
      }
    }
    if (!changed) return;
  }
}

/** The template's variables, each generated once; references between them are followed in any order (up to 10 deep). */
export function processVariables(declared: Record<string, unknown>, ctx: VariableContext): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const [key, value] of Object.entries(declared)) variables[key] = typeof value === 'string' ? value : String(value);
  const generate = (late: boolean) => {
    for (const key of Object.keys(variables)) {
      variables[key] = variables[key]!.replace(REF, (match, name: string) => (readsVariables(name) === late ? (helper(name, variables, ctx) ?? match) : match));
    }
  };
  // Helpers first, so a reference reads the generated value and never generates a second one.
  generate(false);
  followReferences(variables);
  generate(true);
  followReferences(variables);
  return variables;
}
