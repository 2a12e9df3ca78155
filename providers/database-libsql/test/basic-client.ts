// @libsql/client over HTTP sends only Bearer tokens: a client whose fetch carries the URL's user
// and password as the Basic credentials sqld's SQLD_HTTP_AUTH asks for (as the peer configures it).
import { createClient } from '@libsql/client';

export function basicClient(url: string) {
  const u = new URL(url);
  const basic = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
  return createClient({
    url: `${u.protocol}//${u.host}`,
    fetch: (input: Request | string, init?: RequestInit) => {
      const request = new Request(input, init);
      request.headers.set('authorization', basic);
      return fetch(request);
    },
  });
}
