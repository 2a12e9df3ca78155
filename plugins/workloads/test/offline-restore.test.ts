// The offline restore of an archive (libsql's tar of its database directory) into a real container of
// the stand-in libsql image, as root, through the same argument arrays a restore's helper runs: the
// new tree replaces the current one; an archive tar refuses, or a move into place that fails, keeps
// the current files; nothing the restore made (.berth-restore, .berth-unpack, .berth-previous) stays.
import { Readable } from 'node:stream';
import t from 'tap';
import Docker from 'dockerode';
import { TEST_LIBSQL_IMAGE } from '@berth/core/testing';
import type { DatabaseDriver } from '@berth/core';
import { execIn, execStream } from '../src/swarm/exec.ts';
import { writeOfflineFiles, type RootRun } from '../src/databases/container-backup.ts';

t.setTimeout(300_000);
const docker = new Docker();
const DATA = '/var/lib/sqld';
const driver = { label: 'libSQL', dataPath: DATA, offlineRestore: { file: 'iku.db', remove: ['iku.db'], archive: 'tar' } } as unknown as DatabaseDriver;

const container = await docker.createContainer({
  Image: TEST_LIBSQL_IMAGE,
  Entrypoint: ['sleep', 'infinity'],
  Cmd: [],
  User: '0',
  Labels: { 'berth.helper': 'offline-restore-test' },
  HostConfig: { NetworkMode: 'none' },
});
t.teardown(() => container.remove({ force: true }));
await container.start();

/** A program in the container (argument array); its stdout, or a throw unless it exits 0. */
const sh = async (cmd: string[]) => {
  const r = await execIn(docker, container.id, { cmd });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(' ')}: ${r.stderr}`);
  return r.stdout;
};
/** As a restore's helper runs them; `failing` refuses the command it matches, as a helper that dies would. */
const runner =
  (failing?: (cmd: string[]) => boolean): RootRun =>
  async (cmd, stdin) => {
    if (failing?.(cmd)) throw new Error(`${cmd[0]} failed (injected)`);
    const r = await execStream(docker, container.id, { cmd }, { stdin });
    if (r.exitCode !== 0) throw new Error(`${cmd[0]} failed (exit code ${r.exitCode}): ${r.stderr}`);
  };
/** A tar of iku.db holding `marker`, made in the container. */
const archiveOf = async (marker: string) => {
  await sh(['rm', '-rf', '/tmp/src']);
  await sh(['mkdir', '-p', '/tmp/src/iku.db']);
  await sh(['bash', '-c', 'printf %s "$1" > /tmp/src/iku.db/data', 'bash', marker]);
  const out = await execIn(docker, container.id, { cmd: ['bash', '-c', 'tar -c -f - -C /tmp/src iku.db | base64 -w0'] });
  return Buffer.from(out.stdout, 'base64');
};
const current = () => sh(['cat', `${DATA}/iku.db/data`]);
const leftovers = async () => (await sh(['ls', '-A', DATA])).split('\n').filter(f => f.startsWith('.berth-'));

t.test('a fresh volume: the tree is unpacked in place', async t => {
  await writeOfflineFiles(runner(), driver, Readable.from([await archiveOf('first')]));
  t.equal(await current(), 'first');
  t.same(await leftovers(), [], 'nothing of the restore stays');
});

t.test('the current tree is replaced', async t => {
  await writeOfflineFiles(runner(), driver, Readable.from([await archiveOf('second')]));
  t.equal(await current(), 'second');
  t.same(await leftovers(), [], 'the previous tree is removed once the new one is in place');
});

t.test('an archive tar refuses: the current files are kept, the upload and the unpacked copy removed', async t => {
  await t.rejects(writeOfflineFiles(runner(), driver, Readable.from([Buffer.from('not an archive at all')])), { message: /^tar failed/ });
  t.equal(await current(), 'second');
  t.same(await leftovers(), []);
});

t.test('the move into place fails: the current files are moved back', async t => {
  const intoPlace = (cmd: string[]) => cmd[0] === 'mv' && cmd.at(-2)!.startsWith(`${DATA}/.berth-unpack/`);
  await t.rejects(writeOfflineFiles(runner(intoPlace), driver, Readable.from([await archiveOf('third')])), { message: /injected.*the current files are back in place/ });
  t.equal(await current(), 'second');
  t.same(await leftovers(), []);
});

t.test('an earlier restore left the data aside: it is never replaced', async t => {
  await sh(['mkdir', '-p', `${DATA}/.berth-previous`]);
  await sh(['bash', '-c', `printf kept > ${DATA}/.berth-previous/data`]);
  await t.rejects(writeOfflineFiles(runner(), driver, Readable.from([await archiveOf('fourth')])), { message: /could not be set aside/ });
  t.equal(await sh(['cat', `${DATA}/.berth-previous/data`]), 'kept', 'what it holds is still there');
  t.equal(await current(), 'second', 'and the current files too');
  t.same(await leftovers(), ['.berth-previous'], 'only it');
});
