// The builder contract's shared suite, on the real engine.
import t from 'tap';
import { builderConformance, TEST_BASE_IMAGE } from '@berth/core/testing';
import provider from '../src/index.ts';

builderConformance(t, provider, { app: { Dockerfile: `FROM ${TEST_BASE_IMAGE}\nCOPY app.txt /app.txt\n`, 'app.txt': 'conformance\n' }, request: { dockerfile: 'Dockerfile' } });
