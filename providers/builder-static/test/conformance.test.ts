// The builder contract's shared suite, on the real engine.
import t from 'tap';
import { builderConformance, TEST_STATIC_IMAGE, TEST_STATIC_ROOT } from '@berth/core/testing';
import provider from '../src/index.ts';

builderConformance(t, provider, { options: { image: TEST_STATIC_IMAGE, root: TEST_STATIC_ROOT }, app: { 'public/index.html': '<p>conformance</p>\n' }, request: { publishDirectory: 'public' } });
