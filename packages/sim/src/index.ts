/**
 * Public API of `@compaction-sim/sim`: the CLI entry as a function (for in-process use and tests), its
 * exit-code contract and I/O seam, and the programmatic functions each command is a thin shell over.
 */
export { main, type CommandContext } from './cli/main.ts'
export { ExitCode, UsageError, classifyError, type ErrorVerdict } from './cli/exit-codes.ts'
export {
  createOutput, processIo, resolveColorLevel,
  type CliIo, type CliOutput, type ColorLevel, type TextSink,
} from './cli/output.ts'
export { inspectLog, type InspectOptions, type InspectResult, type TornTail } from './inspect.ts'
export {
  checkLog, type CheckOptions, type CheckResult, type CheckReport, type CheckInputFailure,
} from './checker/run.ts'
export { CheckInputError, discoverManifest, type InputErrorCode } from './checker/run-inputs.ts'
export { CHECKS, CHECKS_BY_ID } from './checker/registry.ts'
export {
  INVARIANT_IDS, type InvariantId, type Violation, type Coverage, type CoverageStatus, type Family, type PolicySource,
} from './checker/types.ts'
