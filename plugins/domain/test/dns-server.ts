// A small authoritative DNS server for tests (UDP, A records only): the domain preflight asks
// the configured resolver, and no public name can point at a test machine. Names in `records`
// answer their address; any other name answers NXDOMAIN.
import { createSocket, type Socket } from 'node:dgram';

export interface TestDns {
  /** address:port, for the dnsResolver config key. */
  server: string;
  port: number;
  /** The records, changeable while it runs. */
  records: Record<string, string>;
  close(): Promise<void>;
}

function readName(msg: Buffer, at: number): [string, number] {
  const labels: string[] = [];
  while (msg[at]! > 0) {
    const len = msg[at]!;
    labels.push(msg.subarray(at + 1, at + 1 + len).toString('ascii'));
    at += 1 + len;
  }
  return [labels.join('.').toLowerCase(), at + 1];
}

/** `address`: where it listens (0.0.0.0 when containers must reach it through the engine's gateway). */
export async function startTestDns(records: Record<string, string>, address = '127.0.0.1'): Promise<TestDns> {
  const socket: Socket = createSocket('udp4');
  socket.on('message', (msg, peer) => {
    const [name, end] = readName(msg, 12);
    const qtype = msg.readUInt16BE(end);
    const question = msg.subarray(12, end + 4);
    const address = records[name];
    const answer = address && qtype === 1;
    const header = Buffer.alloc(12);
    msg.copy(header, 0, 0, 2); // id
    header.writeUInt16BE(0x8400 | (msg.readUInt16BE(2) & 0x0100) | (address ? 0 : 3), 2); // response, authoritative, RD echoed, NXDOMAIN when unknown
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answer ? 1 : 0, 6);
    const parts = [header, question];
    if (answer) {
      const rr = Buffer.alloc(16);
      rr.writeUInt16BE(0xc00c, 0); // the question's name
      rr.writeUInt16BE(1, 2); // A
      rr.writeUInt16BE(1, 4); // IN
      rr.writeUInt32BE(5, 6); // TTL
      rr.writeUInt16BE(4, 10);
      address.split('.').forEach((o, i) => rr.writeUInt8(Number(o), 12 + i));
      parts.push(rr);
    }
    socket.send(Buffer.concat(parts), peer.port, peer.address);
  });
  await new Promise<void>(resolve => socket.bind(0, address, resolve));
  const port = socket.address().port;
  return { server: `127.0.0.1:${port}`, port, records, close: () => new Promise(resolve => socket.close(() => resolve())) };
}
