// Requests through the proxy's published ports with a Host header (and the host as TLS server
// name), as a browser whose DNS points the host at this machine would send them.
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export function through(port: number, host: string, path = '/', o: { tls?: boolean; auth?: string } = {}): Promise<Answer | undefined> {
  return new Promise(resolve => {
    const options = {
      host: '127.0.0.1',
      port,
      path,
      method: 'GET',
      timeout: 3000,
      headers: { Host: host, ...(o.auth ? { Authorization: `Basic ${Buffer.from(o.auth).toString('base64')}` } : {}) },
      ...(o.tls ? { servername: host, rejectUnauthorized: false } : {}),
    };
    const req = (o.tls ? https : http).request(options, res => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', c => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/** The certificate the proxy presents for the host name, after a completed TLS handshake (undefined when it fails). */
export function peerCertificate(port: number, host: string): Promise<tls.PeerCertificate | undefined> {
  return new Promise(resolve => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: host, rejectUnauthorized: false, timeout: 3000 }, () => {
      const cert = socket.getPeerCertificate();
      socket.end();
      resolve(cert && cert.subject ? cert : undefined);
    });
    socket.on('timeout', () => socket.destroy());
    socket.on('error', () => resolve(undefined));
  });
}
