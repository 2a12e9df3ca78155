// The conformance suite every host provider's test calls: a real connection to a real machine
// (this one for `local`, a kit host for `ssh`) runs argument arrays that a shell would act on,
// answers exit codes, output and stdin, ends a command on abort, speaks to that machine's engine
// (the one the test names by its ID) and runs a container there, and fails once closed.
import type { Test } from 'tap';
import type { HostConnection, HostProvider, HostServer } from './contracts/host-provider.ts';
import type { ProviderDescriptor } from './provider.ts';
import { descriptorConformance } from './testing-conformance.ts';
import { shellTricks } from './testing-support.ts';

export interface HostConformanceOptions {
  /** The provider's options in the config (defaults apply). */
  options?: Record<string, unknown>;
  /** The machine to connect to: a server, or null for this one. */
  server: HostServer | null;
  /** `docker info`'s ID of that machine's engine: the suite checks the connection reached this one. */
  engineId: string;
  /** An image on that engine with a POSIX shell (berth-test/busybox:1). */
  image: string;
  /** Targets this provider does not reach (null: this machine), each refused by connect naming the provider. */
  refuses: (HostServer | null)[];
}

/** Docker's multiplexed log stream as text. */
const demux = (buf: Buffer) => {
  let out = '';
  for (let i = 0; i + 8 <= buf.length;) {
    const n = buf.readUInt32BE(i + 4);
    out += buf.subarray(i + 8, i + 8 + n).toString();
    i += 8 + n;
  }
  return out;
};

let made = 0;

/** The shared suite of the host contract. */
export function hostConformance(t: Test, descriptor: ProviderDescriptor, o: HostConformanceOptions): void {
  t.test(`host ${descriptor.id}: conformance`, async t => {
    const provider = await descriptorConformance<HostProvider>(t, descriptor, 'host', o.options);
    t.type(provider.connect, 'function', 'it connects');
    const connections: HostConnection[] = [];
    const connect = async () => {
      const c = await provider.connect(o.server);
      connections.push(c);
      return c;
    };
    t.teardown(() => Promise.all(connections.map(c => c.close().catch(() => undefined))));

    t.test('targets it does not reach are refused by connect, naming the provider', async t => {
      for (const target of o.refuses) {
        await t.rejects(provider.connect(target), { message: new RegExp(`host\\.${descriptor.id}`) }, target ? `server ${target.serverId}` : 'this machine');
      }
    });

    t.test('commands take an argument array: nothing is read as shell syntax', async t => {
      const host = await connect();
      const marker = `/tmp/berth-host-conformance-${process.pid}-${++made}`;
      const tricks = [...shellTricks(marker), '', ' spaced  out ', 'ünïcödé'];
      const printed = await host.run(['printf', '%s\\0', ...tricks]);
      t.equal(printed.code, 0);
      t.same(printed.stdout.split('\0').slice(0, -1), tricks, 'every argument arrived unchanged');
      t.equal((await host.run(['test', '-e', marker])).code, 1, 'and none ran');
    });

    t.test('exit code, stdout and stderr are answered; stdin is written and closed', async t => {
      const host = await connect();
      t.same(await host.run(['sh', '-c', 'echo out; echo err >&2; exit 3']), { code: 3, signal: null, stdout: 'out\n', stderr: 'err\n' }, 'a non-zero exit is an answer');
      t.same(await host.run(['tr', 'a-z', 'A-Z'], { stdin: 'piped in' }), { code: 0, signal: null, stdout: 'PIPED IN', stderr: '' }, 'stdin as a string');
      t.equal((await host.run(['wc', '-c'], { stdin: Buffer.alloc(200_000, 1) })).stdout.trim(), '200000', 'stdin as a buffer, larger than a pipe holds');
      t.same(await host.run(['cat']), { code: 0, signal: null, stdout: '', stderr: '' }, 'without stdin the program reads an empty, closed one');
      const big = await host.run(['sh', '-c', 'i=0; while [ $i -lt 2000 ]; do echo "line $i of the output"; i=$((i+1)); done']);
      t.equal(big.stdout.split('\n').length - 1, 2000, 'long output arrives whole');
      t.equal((await host.run(['no-such-program-here-berth'])).code, 127, 'a program that does not exist answers 127');
    });

    t.test('an aborted command ends and rejects with the reason', async t => {
      const host = await connect();
      const ac = new AbortController();
      const t0 = performance.now();
      const slow = host.run(['sleep', '5'], { signal: ac.signal });
      setTimeout(() => ac.abort(new Error('stopped by the test')), 200);
      await t.rejects(slow, { message: 'stopped by the test' }, 'rejects with the reason');
      t.ok(performance.now() - t0 < 4_000, 'without waiting for the program');
      const before = new AbortController();
      before.abort(new Error('already aborted'));
      await t.rejects(host.run(['true'], { signal: before.signal }), { message: 'already aborted' }, 'an already aborted signal runs nothing');
    });

    t.test("the engine is that machine's: ping, info, a container created, run and removed", async t => {
      const host = await connect();
      const docker = await host.engine();
      t.equal(String(await docker.ping()), 'OK', 'ping');
      const info = (await docker.info()) as { ID: string; Name: string };
      t.equal(info.ID, o.engineId, 'the engine the test named');
      t.equal(info.Name, (await host.run(['hostname'])).stdout.trim(), "commands run on the engine's machine");
      const word = `conformance-${process.pid}-${++made}`;
      const c = await docker.createContainer({ Image: o.image, Cmd: ['sh', '-c', 'echo "$0 from inside"', word], Labels: { 'berth.conformance': word } });
      t.teardown(() => c.remove({ force: true }).catch(() => undefined));
      await c.start();
      t.same(await c.wait(), { StatusCode: 0, Error: null }, 'it ran and exited 0');
      t.equal(demux((await c.logs({ stdout: true, stderr: true })) as unknown as Buffer), `${word} from inside\n`, 'its output');
      const listed = await docker.listContainers({ all: true, filters: { label: [`berth.conformance=${word}`] } });
      t.same(
        listed.map(x => x.Id),
        [c.id],
        'listed by its label',
      );
      await c.remove();
      t.equal(
        await c.inspect().then(
          () => 200,
          (e: { statusCode?: number }) => e.statusCode,
        ),
        404,
        'removed',
      );
    });

    t.test('commands and engine requests may overlap', async t => {
      const host = await connect();
      const docker = await host.engine();
      const answers = await Promise.all([
        ...Array.from({ length: 6 }, (_, i) => host.run(['sh', '-c', `sleep 0.1; echo ${i}`]).then(r => r.stdout)),
        ...Array.from({ length: 4 }, () => docker.ping().then(String)),
      ]);
      t.same(answers, ['0\n', '1\n', '2\n', '3\n', '4\n', '5\n', 'OK', 'OK', 'OK', 'OK']);
    });

    t.test('close releases the connection; later calls fail', async t => {
      const host = await connect();
      t.equal((await host.run(['echo', 'open'])).stdout, 'open\n');
      await (await host.engine()).ping();
      await host.close();
      await t.rejects(host.run(['true']), Error, 'a command after close');
      await t.rejects(host.engine(), Error, 'the engine after close');
      const again = await connect();
      t.equal((await again.run(['echo', 'again'])).stdout, 'again\n', 'a new connection works');
    });
  });
}
