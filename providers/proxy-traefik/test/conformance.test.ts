// The traefik provider against the proxy contract's shared suite (its files: traefik-files.test.ts).
import t from 'tap';
import { proxyConformance } from '@berth/core/testing';
import provider from '../src/index.ts';

proxyConformance(t, provider, { invalidFile: 'http:\n  routers: [unclosed', invalidFileError: { name: 'YAMLParseError', message: /Flow sequence/ } });
