// The schema of an environment as its `one` answers it, with the lists the workload kinds register
// (their item schemas): the contract's EnvironmentView grown by those keys.
import Type, { type TSchema } from 'typebox';
import { EnvironmentList, EnvironmentView } from './contracts/projects.ts';

export const environmentView = (lists: Record<string, TSchema>) => Type.Object({ ...EnvironmentView.properties, ...lists }, { additionalProperties: EnvironmentList });
