// Bare repositories served over smart HTTP by git's own `git http-backend` (run as a CGI program
// per request, with an argument array), behind basic authentication that accepts one credential
// only. Every request's Authorization header is kept, so that a test can say which host got it.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Test } from 'tap';

const run = promisify(execFile);

export interface GitHttpServer {
  /** "http://<host>:<port>/", the repositories below it as `<name>.git`. */
  url: string;
  /** The directory holding the bare repositories. */
  root: string;
  /** Every request in arrival order: path and the Authorization header it carried (undefined: none). */
  requests: { path: string; authorization: string | undefined }[];
  /** Adds a bare copy of the repository in `dir` as `<name>.git`; answers its clone URL. */
  addRepository(name: string, dir: string): Promise<string>;
  close(): Promise<void>;
}

export interface GitHttpServerOptions {
  /** The loopback address to listen on (default 127.0.0.1; 127.0.0.2 is another host to git). */
  host?: string;
  /** The only basic credential accepted (or a check of each one, for tokens minted as the test runs); without it every request is served. */
  credential?: { username: string; password: string } | ((username: string, password: string) => boolean);
  /** Called on each request before it is answered (to look at the machine while git runs). */
  onRequest?: (path: string) => void;
}

/** Starts the server; it is closed and its repositories removed at teardown. */
export async function startGitHttpServer(t: Test, o: GitHttpServerOptions = {}): Promise<GitHttpServer> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'berth-git-http-'));
  const requests: GitHttpServer['requests'] = [];
  const { credential } = o;
  const accepted = (authorization: string | undefined): boolean => {
    if (credential === undefined) return true;
    const basic = /^Basic ([A-Za-z0-9+/=]+)$/.exec(authorization ?? '');
    if (!basic) return false;
    const text = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = text.indexOf(':');
    const [username, password] = colon < 0 ? [text, ''] : [text.slice(0, colon), text.slice(colon + 1)];
    return typeof credential === 'function' ? credential(username, password) : username === credential.username && password === credential.password;
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push({ path: url.pathname, authorization: req.headers.authorization });
    o.onRequest?.(url.pathname);
    if (!accepted(req.headers.authorization)) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="berth-test"' }).end();
      return;
    }
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
        ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
        REMOTE_ADDR: req.socket.remoteAddress ?? '',
        ...(credential ? { REMOTE_USER: 'berth-test' } : {}),
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    req.pipe(cgi.stdin);
    // CGI output: header lines, a blank line, then the body.
    let head = Buffer.alloc(0);
    let started = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (started) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      started = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        if (name === 'status') status = Number.parseInt(value, 10);
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    cgi.on('close', () => {
      if (!started) res.writeHead(500).end();
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, o.host ?? '127.0.0.1', resolve));
  const { address, port } = server.address() as AddressInfo;
  const close = async () => {
    server.closeAllConnections();
    await new Promise<void>(resolve => server.close(() => resolve()));
    rmSync(root, { recursive: true, force: true });
  };
  t.teardown(close);
  const url = `http://${address}:${port}/`;
  return {
    url,
    root,
    requests,
    close,
    async addRepository(name, dir) {
      await run('git', ['clone', '-q', '--bare', '--', dir, path.join(root, `${name}.git`)]);
      return `${url}${name}.git`;
    },
  };
}

/**
 * The OAuth side of a git provider stand-in (GitLab, Gitea): access tokens with their expiry,
 * refresh tokens good once, authorization codes good once for the redirect URI they were issued to.
 */
export interface OAuthStandIn {
  /** Access token → when it expires (ms). */
  tokens: Map<string, number>;
  refreshTokens: Set<string>;
  /** Whether the token was issued and has not expired. */
  live(token: string | undefined): boolean;
  /** A new token pair, live for `seconds`. */
  issue(seconds: number): { accessToken: string; refreshToken: string; expiresAt: number };
  /** An authorization code for this redirect URI. */
  authorize(redirectUri: string): string;
  /** Consumes the code when it was issued for this redirect URI; whether it was. */
  redeem(code: string, redirectUri: string | null): boolean;
}

export function oauthStandIn(bytes: { access: number; refresh: number }): OAuthStandIn {
  const tokens = new Map<string, number>();
  const refreshTokens = new Set<string>();
  const codes = new Map<string, string>();
  return {
    tokens,
    refreshTokens,
    live: token => Boolean(token && (tokens.get(token) ?? 0) > Date.now()),
    issue(seconds) {
      const accessToken = randomBytes(bytes.access).toString('hex');
      const refreshToken = randomBytes(bytes.refresh).toString('hex');
      tokens.set(accessToken, Date.now() + seconds * 1000);
      refreshTokens.add(refreshToken);
      return { accessToken, refreshToken, expiresAt: Math.floor(Date.now() / 1000) + seconds };
    },
    authorize(redirectUri) {
      const code = randomBytes(16).toString('hex');
      codes.set(code, redirectUri);
      return code;
    },
    redeem: (code, redirectUri) => codes.get(code) === redirectUri && codes.delete(code),
  };
}
