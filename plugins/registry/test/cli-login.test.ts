// Which of the organization's registries a compose stack's images come from (the CLI logins of
// plugins/registry/src/cli-login.ts): by registry host, Docker Hub only for its own namespace.
import t from 'tap';
import { registriesForImages, registryOfImage } from '../src/cli-login.ts';

t.test("which of the organization's registries an image reference comes from", async t => {
  t.same(registryOfImage('registry.example.com:5000/team/web:1'), { host: 'registry.example.com:5000', namespace: 'team' });
  t.same(registryOfImage('docker.io/acme/web'), { host: '', namespace: 'acme' });
  t.same(registryOfImage('busybox:1'), { host: '', namespace: '' });
  const reg = (registryUrl: string, username: string, imagePrefix: string | null = null) => ({ registryUrl, username, password: 'p', imagePrefix });
  const [own, hub, other] = [reg('registry.example.com:5000', 'a'), reg('', 'Acme'), reg('ghcr.io', 'b')];
  t.same(
    registriesForImages([own, hub, other], ['registry.example.com:5000/x/y:1', 'registry.example.com:5000/z', 'acme/web:2', 'busybox:1', 'postgres']),
    [own, hub],
    'one per host; Docker Hub only for its own namespace',
  );
  t.same(registriesForImages([own, hub], ['library/busybox', 'quay.io/x/y']), [], 'no other namespace, no other host');
});
