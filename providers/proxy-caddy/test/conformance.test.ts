// The caddy provider against the proxy contract's shared suite (its live behaviour: the domain
// plugin's caddy-live test).
import t from 'tap';
import { proxyConformance } from '@berth/core/testing';
import provider from '../src/index.ts';

proxyConformance(t, provider, { invalidFile: '{"apps": ', invalidFileError: { name: 'SyntaxError', message: /Unexpected end of JSON input/ } });
