/**
 * Public API of `@compaction-sim/sim/conformance`: the vitest conformance suite for user subjects, and the
 * pack and level vocabulary it runs. Imports `vitest` (a peer dependency): keep it out of the main entry.
 */
export { defineConformanceSuite, failureText, type ConformanceSuiteOptions } from './suite.ts'
export {
  CONFORMANCE_LEVELS, PACK_MANIFEST, PackError, entriesAt, judgeReport, judgeScenario, loadPack,
  type ConformanceLevel, type ConformancePack, type PackEntry,
} from './pack.ts'
export { runConformance, type ConformOptions, type ConformanceResult } from './run.ts'
export type { Subject, SubjectFeature, SubjectHooks, SubjectSessionOptions, SubjectSessionResult, SubjectTurnOutcome, TurnControl } from '../subjects/types.ts'
export { SUBJECT_FEATURES } from '../subjects/types.ts'
