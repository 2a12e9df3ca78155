// The builder contract's shared suite. No railpack program is installed here (the program runner and
// its argument arrays are tested with stand-in programs in @berth/provider-builder-programs).
import t from 'tap';
import { builderConformance } from '@berth/core/testing';
import provider from '../src/index.ts';

builderConformance(t, provider, { options: { searchPath: t.testdir() }, labels: false });
