// The conformance suite every DatabaseDriver's test calls: pure checks of what the driver answers
// (names, images, argument arrays, encoded URLs, escaped password changes), and, given a local image
// of the kind, the same driver against a real container: readiness, wrong passwords refused,
// password changes, dump and restore.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Test } from 'tap';
import Docker from 'dockerode';
import { Value } from 'typebox/value';
import { ENV_KEY, toEnvList } from './swarm/env.ts';
import { IMAGE_REFERENCE, VOLUME_NAME } from './swarm/service-spec.ts';
import { type ContainerCommand, type DatabaseCredentials, type DatabaseDriver } from '@berth/core';

export { startTestEngine, type TestEngine } from './testing-engine.ts';

export interface DriverDataProbe {
  /** Writes a marker into the database. */
  write(c: DatabaseCredentials): ContainerCommand;
  /** Removes the marker (so a restore has something to bring back). */
  clear(c: DatabaseCredentials): ContainerCommand;
  /** Prints the marker; its stdout matches `expect` exactly when the marker is there. */
  read(c: DatabaseCredentials): ContainerCommand;
  expect: RegExp;
}

export interface DriverConformanceOptions {
  /** A local image of the kind (never pulled): when given, the engine checks run a container of it. */
  image?: string;
  /** Credentials the container starts with (default: generated for the driver's fields). */
  credentials?: DatabaseCredentials;
  /** Passwords the current-variant schema must accept and refuse. */
  passwords?: { valid: string[]; invalid: string[] };
  /** Commands that write, clear and read a marker, for the dump → restore round trip (else the dump is only taken). */
  data?: DriverDataProbe;
  /** Connects from outside with a real client library to a connection URL; resolves, or rejects when refused. */
  connect?: (url: string) => Promise<void>;
  /** With connect: what the client's rejection for a wrong password matches (the authentication error, not any failure). */
  authError?: RegExp | { code: string; errno?: number } | { message: RegExp };
  /** How long the container may take to accept connections (default 90 s). */
  readyTimeoutMs?: number;
}

export interface ContainerCommandResult {
  exitCode: number;
  stdout: Buffer;
  stderr: string;
  /** Exit 0 and, when the command asks for it, stdout matching its expectOutput. */
  ok: boolean;
}

/** Runs a driver's command in a container through the engine's exec API (stdin when given), collecting its output. */
export async function runContainerCommand(docker: Docker, containerId: string, command: ContainerCommand, stdin?: Buffer): Promise<ContainerCommandResult> {
  const exec = await docker.getContainer(containerId).exec({ Cmd: command.cmd, Env: toEnvList(command.env ?? {}), AttachStdin: stdin !== undefined, AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: stdin !== undefined });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const sink = (into: Buffer[]) =>
    new Writable({
      write(chunk: Buffer, _enc, done) {
        into.push(chunk);
        done();
      },
    });
  await new Promise<void>((resolve, reject) => {
    docker.modem.demuxStream(stream, sink(out), sink(err));
    stream.on('end', resolve);
    stream.on('close', resolve);
    stream.on('error', reject);
    if (stdin !== undefined) {
      // Half-close: the program sees the end of its input and the output keeps flowing.
      stream.write(stdin);
      stream.end();
    }
  });
  // The stream can end a moment before the engine records the exit code.
  let info = await exec.inspect();
  for (let i = 0; info.Running && i < 100; i++) {
    await new Promise(r => setTimeout(r, 20));
    info = await exec.inspect();
  }
  const exitCode = info.ExitCode ?? -1;
  const stdout = Buffer.concat(out);
  const ok = exitCode === 0 && (!command.expectOutput || command.expectOutput.test(stdout.toString('utf8')));
  return { exitCode, stdout, stderr: Buffer.concat(err).toString('utf8'), ok };
}

const KIND = /^[a-z][a-z0-9]*$/;
const ABSOLUTE_PATH = /^\/(?:[A-Za-z0-9_][A-Za-z0-9._-]*\/?)*$/;
/** Every sign a shell, SQL, JavaScript or a URL treats specially, around letters so it is found inside longer text. */
const NASTY = `Pa'ss"w\\o\`r$d;|&<>(){}[]*?~!#%^=+,:@/ é-x`;
const NASTY_USER = `us'er"@:/?#%`;
/** Passwords that end a quoted string in SQL, JavaScript or a shell, then do something. */
const INJECTIONS = [`x'; DROP TABLE x; --`, `x"); db.dropDatabase(); ("`, 'back\\slash\\', '$(id)`id`${x}', `it''s \\' x`, NASTY];

const rand = () => randomBytes(4).toString('hex');

/** Whether the kind leaves changePassword out (its password is part of the server's start, as libsql's). */
const omitsPasswordChanges = (driver: DatabaseDriver) => Boolean(driver.omitProcedures?.includes('changePassword'));

/** Sample credentials with every field the driver has, the password given. */
function sample(driver: DatabaseDriver, password: string, user = 'berth_user', root = `R00t-${password}`): DatabaseCredentials {
  return {
    databaseName: driver.fields.databaseName ? 'berth_db' : null,
    databaseUser: driver.fields.databaseUser ? user : null,
    databasePassword: password,
    databaseRootPassword: driver.fields.databaseRootPassword ? root : null,
  };
}

/** Sample credentials under a name for failure messages: plain, and with every special sign in the password and user. */
function credentialSets(driver: DatabaseDriver, plain: string): [string, DatabaseCredentials][] {
  return [
    ['plain credentials', sample(driver, plain)],
    ['credentials with every special sign', sample(driver, NASTY, NASTY_USER)],
  ];
}

/**
 * The rules every container command follows, one assertion per rule over every instance of the command
 * (`what` names the command, each instance its case); a failure lists the instances that break the rule.
 */
function checkCommands(t: Test, what: string, instances: [string, ContainerCommand, string[]][]) {
  const breaking = (rule: (command: ContainerCommand) => boolean) => instances.filter(([, command]) => !rule(command)).map(([label]) => label);
  const args = (command: ContainerCommand) => (Array.isArray(command.cmd) ? command.cmd : []);
  t.same(
    breaking(c => Array.isArray(c.cmd) && c.cmd.length > 0),
    [],
    `${what}: a non-empty argument array`,
  );
  t.same(
    breaking(c => args(c).every(a => typeof a === 'string' && !a.includes('\0'))),
    [],
    `${what}: every argument a string without NUL`,
  );
  t.same(
    breaking(c => typeof args(c)[0] === 'string' && args(c)[0]!.length > 0),
    [],
    `${what}: names a program`,
  );
  t.same(
    breaking(c => Object.entries(c.env ?? {}).every(([k, v]) => ENV_KEY.test(k) && typeof v === 'string' && !v.includes('\0'))),
    [],
    `${what}: environment names valid, values strings`,
  );
  t.same(
    breaking(c => c.expectOutput === undefined || c.expectOutput instanceof RegExp),
    [],
    `${what}: expectOutput, when given, is a RegExp`,
  );
  const leaks = instances.flatMap(([label, command, secrets]) => secrets.filter(s => s.length > 0 && args(command).some(a => a.includes(s))).map(s => `${label}: ${JSON.stringify(s.slice(0, 6))}…`));
  t.same(leaks, [], `${what}: the password (the user's or root's) is in no argument`);
}

/** The driver's pure answers: names, images, schemas, environment, argument arrays, URLs. */
function pureChecks(t: Test, driver: DatabaseDriver, options: DriverConformanceOptions) {
  t.test(`${driver.kind}: identity, images and fields`, async t => {
    t.match(driver.kind, KIND, 'the kind is lower-case letters and digits');
    t.ok(typeof driver.label === 'string' && driver.label.trim().length > 0, 'a label for messages');
    const variants = ['current', 'older'] as const;
    t.same(
      variants.filter(v => !IMAGE_REFERENCE.test(driver.defaultImage[v])).map(v => `${v}: ${driver.defaultImage[v]}`),
      [],
      'the default images (current, older) are valid references',
    );
    const fields = ['databaseName', 'databaseUser', 'databaseRootPassword'] as const;
    t.same(
      fields.filter(f => typeof driver.fields[f] !== 'boolean'),
      [],
      'fields.databaseName, databaseUser and databaseRootPassword are booleans',
    );
    t.match(driver.dataPath, ABSOLUTE_PATH, 'the data path is a plain absolute path');
    t.notOk(driver.dataPath.split('/').includes('..'), 'the data path does not climb');
    t.ok(Number.isInteger(driver.internalPort) && driver.internalPort >= 1 && driver.internalPort <= 65535, 'the internal port is a TCP port');
    if (driver.defaultUser !== undefined) {
      t.ok(driver.fields.databaseUser, 'a default user only for a kind with a user');
      t.ok(driver.defaultUser.length > 0, 'the default user is not empty');
    }
  });

  t.test(`${driver.kind}: password schemas`, async t => {
    t.ok(Value.Check(driver.passwordSchema, 'Simple123'), 'the current schema takes letters and digits');
    t.notOk(Value.Check(driver.passwordSchema, 42), 'the current schema takes only strings');
    const older = driver.olderPasswordSchema;
    if (older) {
      t.ok(Value.Check(older, 'Simple123'), 'the older schema takes letters and digits');
      t.notOk(Value.Check(older, 42), 'the older schema takes only strings');
    }
    const { valid = [], invalid = [] } = options.passwords ?? {};
    if (valid.length)
      t.same(
        valid.filter(p => !Value.Check(driver.passwordSchema, p)),
        [],
        `the current schema accepts each of ${JSON.stringify(valid)}`,
      );
    if (invalid.length)
      t.same(
        invalid.filter(p => Value.Check(driver.passwordSchema, p)),
        [],
        `the current schema refuses each of ${JSON.stringify(invalid)}`,
      );
  });

  t.test(`${driver.kind}: environment and start command`, async t => {
    const sets = credentialSets(driver, 'Simple123');
    const breaking = (rule: (c: DatabaseCredentials) => boolean) => sets.filter(([, c]) => !rule(c)).map(([label]) => label);
    t.same(
      breaking(c => Object.entries(driver.containerEnv(c)).every(([k, v]) => ENV_KEY.test(k) && typeof v === 'string')),
      [],
      'environment names valid, values strings',
    );
    t.same(
      breaking(c => {
        const { command } = driver.startCommand(c);
        return command === null || (typeof command === 'string' && command.trim().length > 0);
      }),
      [],
      'the command is null or a program',
    );
    t.same(
      breaking(c => {
        const { args } = driver.startCommand(c);
        return args === null || (Array.isArray(args) && args.every(a => typeof a === 'string'));
      }),
      [],
      'the args are null or strings',
    );
  });

  t.test(`${driver.kind}: commands are argument arrays that carry no password`, async t => {
    const sets = credentialSets(driver, 'Simple123-secret');
    const secrets = (c: DatabaseCredentials) => [c.databasePassword, c.databaseRootPassword ?? ''];
    checkCommands(
      t,
      'readiness',
      sets.map(([label, c]) => [label, driver.readinessCheck(c), secrets(c)]),
    );
    checkCommands(
      t,
      'dump',
      sets.map(([label, c]) => [label, driver.dumpCommand(c), secrets(c)]),
    );
    const restores: [string, ContainerCommand, string[]][] = [];
    const refusals: string[] = [];
    for (const [label, c] of sets) {
      try {
        restores.push([label, driver.restoreCommand(c), secrets(c)]);
      } catch (e) {
        refusals.push((e as Error).message);
      }
    }
    if (refusals.length)
      t.same(
        refusals.filter(m => !/\S/.test(m)),
        [],
        `restore is not supported and says why: ${refusals[0]}`,
      );
    if (restores.length) checkCommands(t, 'restore', restores);
    if (driver.createDatabaseCommand)
      checkCommands(
        t,
        'create database',
        sets.map(([label, c]) => [label, driver.createDatabaseCommand!({ ...c, databaseName: 'berth_new' }), secrets(c)]),
      );
  });

  if (driver.credentialsFromEnv) {
    t.test(`${driver.kind}: credentialsFromEnv reads back what containerEnv wrote`, async t => {
      const fields = ['databaseUser', 'databasePassword', 'databaseName', 'databaseRootPassword'] as const;
      for (const [label, c] of credentialSets(driver, 'Simple123')) {
        const read = driver.credentialsFromEnv!(driver.containerEnv(c));
        t.same(
          fields.filter(f => (f === 'databasePassword' || driver.fields[f]) && read[f] !== c[f]),
          [],
          `${label}: the same credentials`,
        );
      }
    });
  }

  // Whether the escaping is right depends on the language (SQL, JavaScript...): the engine checks
  // prove it by changing to each of these and connecting with it; each driver's test pins its statement.
  t.test(`${driver.kind}: password changes are argument arrays without the old password`, async t => {
    const c = sample(driver, 'Old-secret-1');
    if (omitsPasswordChanges(driver)) {
      t.throws(() => driver.changePasswordCommand(c, 'x'), { message: /\S/ }, 'a kind that omits changePassword refuses it and says why');
      return;
    }
    const old = [c.databasePassword, c.databaseRootPassword ?? ''];
    checkCommands(
      t,
      'change',
      INJECTIONS.map(next => [`to ${JSON.stringify(next)}`, driver.changePasswordCommand(c, next), old]),
    );
    if (driver.fields.databaseRootPassword) {
      checkCommands(
        t,
        'root change',
        INJECTIONS.map(next => [`to ${JSON.stringify(next)}`, driver.changePasswordCommand(c, next, 'root'), old]),
      );
    } else {
      t.throws(() => driver.changePasswordCommand(c, 'x', 'root'), 'a kind without a root password refuses to change one');
    }
  });

  t.test(`${driver.kind}: connection URLs carry the credentials encoded`, async t => {
    const cases: [DatabaseCredentials, string, number][] = [
      [sample(driver, 'Simple123'), 'my-app', 5000],
      [sample(driver, NASTY, NASTY_USER), 'db.example.com', 65535],
      [sample(driver, ''), '10.0.0.7', 1],
      [sample(driver, NASTY), '::1', 15432],
    ];
    const parsed: { text: string; url: URL; c: DatabaseCredentials; host: string; port: number }[] = [];
    for (const [c, host, port] of cases) {
      const text = driver.connectionUrl(c, host, port);
      try {
        parsed.push({ text, url: new URL(text), c, host, port });
      } catch {
        t.fail(`${JSON.stringify(text)} does not parse as a URL`);
      }
    }
    const breaking = (rule: (p: (typeof parsed)[number]) => boolean) => parsed.filter(p => !rule(p)).map(p => p.text);
    t.same(
      breaking(({ url, host }) => url.hostname.replace(/^\[|\]$/g, '') === host),
      [],
      'the host of every URL',
    );
    t.same(
      breaking(({ url, port }) => url.port === String(port)),
      [],
      'the port of every URL',
    );
    t.same(
      breaking(({ url, c }) => decodeURIComponent(url.password) === c.databasePassword),
      [],
      'the password round-trips in every URL (plain, every special sign, empty)',
    );
    if (driver.fields.databaseUser)
      t.same(
        breaking(({ url, c }) => decodeURIComponent(url.username) === c.databaseUser),
        [],
        'the user round-trips in every URL',
      );
    if (driver.fields.databaseName)
      t.same(
        breaking(({ url, c }) => decodeURIComponent(url.pathname.slice(1)) === c.databaseName),
        [],
        'the database is the path of every URL',
      );
  });
}

/** The driver against a real container of the image: start, readiness, wrong passwords, password changes, dump and restore. */
function engineChecks(t: Test, driver: DatabaseDriver, image: string, options: DriverConformanceOptions) {
  t.test(`${driver.kind}: on the engine with ${image}`, async t => {
    const docker = new Docker();
    try {
      await docker.getImage(image).inspect();
    } catch {
      t.fail(`the image ${image} is not on this host (scripts/services.sh builds the test images)`);
      return;
    }
    const id = `berth-conf-${driver.kind}-${rand()}`;
    if (!VOLUME_NAME.test(id)) throw new Error(`bad test volume name ${id}`);
    let c: DatabaseCredentials = options.credentials ?? sample(driver, `In1t-${rand()}#%&*()[]{}|;:,.<>?~`);
    t.ok(Value.Check(driver.passwordSchema, c.databasePassword), 'the starting password is a valid current-variant password');

    await docker.createVolume({ Name: id, Labels: { 'berth.test': 'driver-conformance' } });
    let container: Docker.Container | undefined;
    t.teardown(async () => {
      await container?.remove({ force: true, v: true }).catch(() => {});
      for (let i = 0; i < 50; i++) {
        try {
          await docker.getVolume(id).remove();
          return;
        } catch (e) {
          if ((e as { statusCode?: number }).statusCode === 404) return;
          await new Promise(r => setTimeout(r, 200));
        }
      }
    });
    const describe = (r: ContainerCommandResult) => (r.ok ? `exit ${r.exitCode}` : `exit ${r.exitCode}: ${r.stderr.trim().slice(-400) || r.stdout.toString('utf8').trim().slice(-400)}`);
    const run = (command: ContainerCommand, stdin?: Buffer) => runContainerCommand(docker, container!.id, command, stdin);

    /** A container as a deployment makes it (env, start command, the data volume at dataPath), ready; answers its address. */
    const startContainer = async (): Promise<string | undefined> => {
      const start = driver.startCommand(c);
      container = await docker.createContainer({
        name: `${id}-${rand()}`,
        Image: image,
        Env: toEnvList(driver.containerEnv(c)),
        ...(start.command !== null ? { Entrypoint: start.command.trim().split(/\s+/) } : {}),
        ...(start.args !== null ? { Cmd: start.args } : {}),
        Labels: { 'berth.test': 'driver-conformance' },
        HostConfig: { Mounts: [{ Type: 'volume', Source: id, Target: driver.dataPath }] },
      });
      await container.start();
      const deadline = Date.now() + (options.readyTimeoutMs ?? 90_000);
      let last: ContainerCommandResult | undefined;
      for (;;) {
        const state = (await container.inspect()).State;
        if (!state.Running) break;
        // The container may stop between the inspection and the exec: that ends the wait too.
        last = await run(driver.readinessCheck(c)).catch((e: Error) => ({ exitCode: -1, stdout: Buffer.alloc(0), stderr: e.message, ok: false }));
        if (last.ok || Date.now() > deadline) break;
        await new Promise(r => setTimeout(r, 300));
      }
      if (!last?.ok) {
        const logs = (await container.logs({ stdout: true, stderr: true, tail: 30 })).toString('utf8');
        t.fail(`the database never became ready (${last ? describe(last) : 'the container stopped'})\n${logs}`);
        return undefined;
      }
      return (await container.inspect()).NetworkSettings.Networks.bridge?.IPAddress || undefined;
    };

    let address = await startContainer();
    if (!address) return;
    t.pass('the readiness check passes once the database accepts the credentials');
    const connect = options.connect;
    if (connect) {
      await t.resolves(connect(driver.connectionUrl(c, address, driver.internalPort)), 'a client connects from outside with the connection URL');
      if (!options.authError) t.fail('driverConformance: connect is given without authError, the error a wrong password must give');
      else
        await t.rejects(
          connect(driver.connectionUrl({ ...c, databasePassword: `wrong-${rand()}` }, address, driver.internalPort)),
          options.authError,
          'and is refused with a wrong password, by the authentication error',
        );
    }

    const wrong = await run(driver.readinessCheck({ ...c, databasePassword: `wrong-${rand()}` }));
    t.notOk(wrong.ok, 'the readiness check fails with a wrong password');

    const notChanged: string[] = [];
    const newRefused: string[] = [];
    const oldAccepted: string[] = [];
    // A kind without changePassword changes its password with the record and the next deployment.
    for (const next of omitsPasswordChanges(driver) ? [] : INJECTIONS) {
      const changed = await run(driver.changePasswordCommand(c, next));
      if (!changed.ok) notChanged.push(`${JSON.stringify(next)}: ${describe(changed)}`);
      const withNew = await run(driver.readinessCheck({ ...c, databasePassword: next }));
      if (!withNew.ok) newRefused.push(`${JSON.stringify(next)}: ${describe(withNew)}`);
      if ((await run(driver.readinessCheck(c))).ok) oldAccepted.push(`${JSON.stringify(c.databasePassword)} after the change to ${JSON.stringify(next)}`);
      c = { ...c, databasePassword: next };
    }
    if (!omitsPasswordChanges(driver)) {
      t.same(notChanged, [], 'the password changes to each value that ends a quoted string in SQL, JavaScript or a shell');
      t.same(newRefused, [], 'each new password is accepted');
      t.same(oldAccepted, [], 'each old password is refused');
    }
    if (connect && !omitsPasswordChanges(driver)) {
      await t.resolves(connect(driver.connectionUrl(c, address, driver.internalPort)), 'the client connects with the new password, encoded in the URL');
    }

    if (driver.fields.databaseRootPassword && c.databaseRootPassword) {
      const oldRoot = c.databaseRootPassword;
      const newRoot = `R${NASTY}`;
      const rootChanged = await run(driver.changePasswordCommand(c, newRoot, 'root'));
      t.ok(rootChanged.ok, `the root password changes (${describe(rootChanged)})`);
      c = { ...c, databaseRootPassword: newRoot };
      // Root is what changes the user's password: only the new root password can still do it.
      t.notOk((await run(driver.changePasswordCommand({ ...c, databaseRootPassword: oldRoot }, 'Unused-1'))).ok, 'the old root password is refused');
      t.ok((await run(driver.changePasswordCommand(c, c.databasePassword))).ok, 'the new root password is accepted');
      t.ok((await run(driver.readinessCheck(c))).ok, 'the user still connects');
    }

    const probe = options.data;
    if (probe) {
      const written = await run(probe.write(c));
      t.ok(written.ok, `a marker is written (${describe(written)})`);
      t.match((await run(probe.read(c))).stdout.toString('utf8'), probe.expect, 'and read back');
    }
    if (driver.createDatabaseCommand) {
      const fresh = { ...c, databaseName: `berth_new_${rand()}` };
      t.notOk((await run(driver.readinessCheck(fresh))).ok, 'a database that does not exist yet cannot be connected to');
      const created = await run(driver.createDatabaseCommand(fresh));
      t.ok(created.ok, `createDatabaseCommand creates it (${describe(created)})`);
      t.ok((await run(driver.readinessCheck(fresh))).ok, 'the user connects to the new database');
      const again = await run(driver.createDatabaseCommand(fresh));
      t.ok(again.ok, `and a second run, the database existing, succeeds too (${describe(again)})`);
    }
    const dump = await run(driver.dumpCommand(c));
    t.ok(dump.ok, `the dump succeeds (${describe(dump)})`);
    t.ok(dump.stdout.length > 0, `the dump is written to stdout (${dump.stdout.length} bytes)`);
    let restore: ContainerCommand | undefined;
    try {
      restore = driver.restoreCommand(c);
    } catch (e) {
      t.match((e as Error).message, /\S/, `no restore for this kind: ${(e as Error).message}`);
    }
    if (probe && restore) {
      t.ok((await run(probe.clear(c))).ok, 'the marker is removed');
      t.notMatch((await run(probe.read(c))).stdout.toString('utf8'), probe.expect, 'and gone');
      const restored = await run(restore, dump.stdout);
      t.ok(restored.ok, `the dump is restored from stdin (${describe(restored)})`);
      t.match((await run(probe.read(c))).stdout.toString('utf8'), probe.expect, 'the marker is back');
      const again = await run(restore, dump.stdout);
      t.ok(again.ok, `restoring over existing data succeeds too (${describe(again)})`);
      t.match((await run(probe.read(c))).stdout.toString('utf8'), probe.expect, 'the marker is still there once');
    }
    if (probe) {
      // A new container on the same volume, as a redeployment: the data lives at dataPath, not in the container.
      await container!.stop({ t: 20 });
      await container!.remove({ v: true });
      container = undefined;
      address = await startContainer();
      if (!address) return;
      t.match((await run(probe.read(c))).stdout.toString('utf8'), probe.expect, 'a new container on the same volume has the data');
    }
  });
}

/**
 * The contract's shared conformance suite: call it from every driver's test.
 * Pure checks always; engine checks when `options.image` names a local image of the kind.
 */
export function driverConformance(t: Test, driver: DatabaseDriver, options: DriverConformanceOptions = {}): void {
  pureChecks(t, driver, options);
  if (options.image) engineChecks(t, driver, options.image, options);
}
