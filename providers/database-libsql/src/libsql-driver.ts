// libSQL (sqld) as a Berth database kind, as the peer runs it: the public libsql-server image
// started as `sqld --db-path … --http-listen-addr 0.0.0.0:8080 --grpc-listen-addr 0.0.0.0:5001
// --admin-listen-addr 0.0.0.0:5000`, HTTP basic auth from the user and password (SQLD_HTTP_AUTH),
// a primary or a replica (SQLD_NODE). The image has no SQL client, so readiness and the inventory
// of a restored copy speak Hrana over HTTP to the server on the loopback from bash (the image is
// Debian's); the dump is the peer's: a tar of the database directory, restored into the stopped
// data volume. The password is part of the server's environment: no changePassword (nor search).
import { Type, type ContainerCommand, type DatabaseCredentials, type DatabaseDriver } from '@berth/core';

/** The peer's current-variant password rule: letters, digits and these signs, empty allowed. */
export const LIBSQL_PASSWORD_PATTERN = '^[a-zA-Z0-9@#%^&*()_+\\-=[\\]{}|;:,.<>?~`]*$';

/** A replica's primary (SQLD_PRIMARY_URL): the peer takes any text and shows https://<host>:<port>; the schemes a libSQL URL has, no spaces. */
export const PRIMARY_URL_PATTERN = '^(https?|libsql|wss?)://[^\\s]+$';

const DATA_PATH = '/var/lib/sqld';
/** The database directory the peer's command names (`--db-path iku.db` in the data path): what a backup archives. */
const DB_DIR = 'iku.db';
const HTTP_PORT = 8080;

/**
 * `q SQL` posts one statement (already JSON-escaped, as it sits in a JSON string) to the Hrana
 * pipeline on the loopback with the basic credentials of BERTH_LIBSQL_AUTH, and prints the HTTP
 * answer. LC_ALL=C: ${#body} counts bytes, as Content-Length must.
 */
const HRANA = `set -eu
export LC_ALL=C
q() {
  body="{\\"baton\\":null,\\"requests\\":[{\\"type\\":\\"execute\\",\\"stmt\\":{\\"sql\\":\\"$1\\"}},{\\"type\\":\\"close\\"}]}"
  exec 3<>/dev/tcp/127.0.0.1/${HTTP_PORT}
  printf 'POST /v2/pipeline HTTP/1.1\\r\\nHost: localhost\\r\\nAuthorization: Basic %s\\r\\nContent-Type: application/json\\r\\nContent-Length: %s\\r\\nConnection: close\\r\\n\\r\\n%s' "$BERTH_LIBSQL_AUTH" "\${#body}" "$body" >&3
  cat <&3
  exec 3<&-
}
ok() { case "$1" in "HTTP/1."?" 200 "*) return 0 ;; *) printf '%s\\n' "$1" | head -1 >&2; return 1 ;; esac; }
`;

/** One SELECT per table of the database counting its rows, as one statement (null when it has no table). */
const COUNT_QUERY =
  "SELECT group_concat(s, ' UNION ALL ') FROM (SELECT 'SELECT ' || quote(name) || ', count(*) FROM \"' || replace(name, '\"', '\"\"') || '\"' AS s FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name)";

/** Runs the query that writes the counting statement, then that statement (taken as it is JSON-escaped in the answer). */
const INVENTORY = `${HRANA}
r=$(q "$BERTH_SQL"); ok "$r"
re='"value": *"(([^"\\\\]|\\\\.)*)"'
[[ $r =~ $re ]] || exit 0
r=$(q "\${BASH_REMATCH[1]}"); ok "$r"
printf '%s' "$r"
`;

const json = (sql: string) => JSON.stringify(sql).slice(1, -1);
const urlHost = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

export class LibsqlDriver implements DatabaseDriver {
  readonly kind: string = 'libsql';
  readonly label: string = 'libSQL';
  readonly defaultImage = { current: 'ghcr.io/tursodatabase/libsql-server:v0.24.32', older: 'ghcr.io/tursodatabase/libsql-server:v0.24.32' };
  readonly fields = { databaseName: false, databaseUser: true, databaseRootPassword: false };
  readonly passwordSchema = Type.String({ pattern: LIBSQL_PASSWORD_PATTERN, description: "the peer's rule: letters, digits and @#%^&*()_+-=[]{}|;:,.<>?~`" });
  readonly recordFields = {
    sqldNode: { schema: Type.Enum(['primary', 'replica']), default: 'primary', create: true },
    sqldPrimaryUrl: {
      schema: Type.Union([Type.String({ pattern: PRIMARY_URL_PATTERN, maxLength: 2048, description: "sqldPrimaryUrl: the primary's URL, http(s)://, libsql:// or ws(s)://" }), Type.Null()]),
      default: null,
      create: true,
    },
    enableNamespaces: { schema: Type.Boolean(), default: false, create: true },
  };
  /** The credentials, base64-encoded: a string the password's own masking does not catch. */
  readonly secretEnv = ['SQLD_HTTP_AUTH'] as const;
  readonly extraPorts = { externalGRPCPort: 5001, externalAdminPort: 5000 };
  readonly omitProcedures = ['changePassword', 'search', 'saveExternalPort'] as const;
  readonly createAnswer = 'true' as const;
  readonly dataPath = DATA_PATH;
  readonly internalPort = HTTP_PORT;
  /** A running sqld keeps its files open: a restore stops it and unpacks the archive into its volume. */
  readonly offlineRestore = { file: DB_DIR, remove: [DB_DIR], archive: 'tar' as const };

  /** The peer's rules on a primary and a replica (its create and saveExternalPorts refusals). */
  recordIssue(record: Record<string, unknown>): { field: string; message: string } | null {
    const replica = record.sqldNode === 'replica';
    if (replica && !record.sqldPrimaryUrl) return { field: 'sqldPrimaryUrl', message: "sqldPrimaryUrl is required when sqldNode is 'replica'" };
    if (!replica && record.sqldPrimaryUrl) return { field: 'sqldPrimaryUrl', message: "sqldPrimaryUrl should not be provided when sqldNode is not 'replica'" };
    if (replica && record.externalGRPCPort != null) return { field: 'externalGRPCPort', message: "externalGRPCPort cannot be set when sqldNode is 'replica'" };
    return null;
  }

  #basic(c: DatabaseCredentials): string {
    return Buffer.from(`${c.databaseUser ?? ''}:${c.databasePassword}`, 'utf8').toString('base64');
  }

  containerEnv(c: DatabaseCredentials, record: Record<string, unknown> = {}): Record<string, string> {
    const node = record.sqldNode === 'replica' ? 'replica' : 'primary';
    return { SQLD_NODE: node, SQLD_HTTP_AUTH: `basic:${this.#basic(c)}`, ...(node === 'replica' && typeof record.sqldPrimaryUrl === 'string' ? { SQLD_PRIMARY_URL: record.sqldPrimaryUrl } : {}) };
  }

  /** The peer's command line as an argument array (sqld on the image's PATH), namespaces when the record enables them. */
  startCommand(_c: DatabaseCredentials, record: Record<string, unknown> = {}): { command: string | null; args: string[] | null } {
    const args = ['--db-path', `${DATA_PATH}/${DB_DIR}`, '--http-listen-addr', `0.0.0.0:${HTTP_PORT}`, '--grpc-listen-addr', '0.0.0.0:5001', '--admin-listen-addr', '0.0.0.0:5000'];
    return { command: 'sqld', args: record.enableNamespaces === true ? [...args, '--enable-namespaces'] : args };
  }

  /** `SELECT 1` through the HTTP API with the credentials: answered 200 and ok only once the server takes them. */
  readinessCheck(c: DatabaseCredentials): ContainerCommand {
    return { cmd: ['bash', '-c', `${HRANA}q 'SELECT 1'`], env: { BERTH_LIBSQL_AUTH: this.#basic(c) }, expectOutput: /^HTTP\/1\.[01] 200 [^]*"type": *"ok"/ };
  }

  /** The HTTP URL @libsql/client takes (its credentials go in an Authorization: Basic header). */
  connectionUrl(c: DatabaseCredentials, host: string, port: number): string {
    return `http://${encodeURIComponent(c.databaseUser ?? '')}:${encodeURIComponent(c.databasePassword)}@${urlHost(host)}:${port}`;
  }

  changePasswordCommand(): ContainerCommand {
    throw new Error("libSQL takes its password from its server's environment (SQLD_HTTP_AUTH): set databasePassword with libsql.update, then deploy");
  }

  /** The peer's backup: the database directory as a tar archive (Berth compresses it). */
  dumpCommand(): ContainerCommand {
    return { cmd: ['tar', '-c', '-f', '-', '-C', DATA_PATH, DB_DIR] };
  }

  /** Each table of the restored copy with its row count, through the server's HTTP API (the image has no SQL client). */
  inventoryCommand(c: DatabaseCredentials): ContainerCommand {
    return { cmd: ['bash', '-c', INVENTORY], env: { BERTH_LIBSQL_AUTH: this.#basic(c), BERTH_SQL: json(COUNT_QUERY) } };
  }

  /** The HTTP answer's rows ([name, count]) as "name<TAB>count" lines; no answer (no table) is no line. */
  inventoryLines(stdout: string): string {
    const at = stdout.indexOf('\r\n\r\n');
    if (at < 0) return '';
    const body = JSON.parse(stdout.slice(at + 4)) as { results: { response?: { result?: { rows?: { value?: unknown }[][] } } }[] };
    const rows = body.results[0]?.response?.result?.rows ?? [];
    return rows.map(([name, count]) => `${String(name?.value)}\t${String(count?.value)}`).join('\n');
  }

  restoreCommand(): ContainerCommand {
    throw new Error('libSQL cannot restore into a running server: stop the service, unpack the archive of its database directory into the data volume and start it again');
  }
}
