/**
 * Public API of `@compaction-sim/sim`: the CLI entry as a function (for in-process use and tests), its
 * exit-code contract and I/O seam, and the programmatic functions each command is a thin shell over.
 */
export { main } from './cli/main.ts'
export type { CommandContext } from './cli/context.ts'
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
export {
  SUBJECT_FEATURES,
  type SessionView, type Subject, type SubjectFeature, type SubjectHooks, type SubjectSessionOptions, type SubjectSessionResult, type SubjectTurnOutcome,
  type TurnControl,
} from './subjects/types.ts'
export { loadModuleSubject, SubjectModuleError, MODULE_SUBJECT_PREFIX } from './subjects/module.ts'
export { requiredFeatures, missingFeatureReason, type FeatureNeed } from './subjects/features.ts'
export type { ResolvedScenario } from './scenario/resolve.ts'
export { runScenarios, runScenario, type RunOptions } from './run/run-scenario.ts'
/** Run: the programmatic `sim run` — scenarios in, one `RunReport` out, artifacts in `outDir` (byte-stable per seed). */
export { MOCK_BASE_URL, TOOL_VERSION, replayCommand, runIdOf, slugOf } from './run/run-scenario.ts'
/** Report: the canonical `RunReport` contract, its schema validator, and the renderers that are pure functions of it. */
export {
  RUN_REPORT_SCHEMA_VERSION, renderPretty, renderMarkdown, renderJunit, renderHtml, validateRunReport, isRunReport,
  type PrettyOptions, type RunReport, type RunSummary, type ScenarioReport, type ScenarioStatus, type ScenarioArtifacts,
  type ScenarioCounts, type ExpectationResult, type FinalPressure, type ReportedFault, type ReportedOutcome, type ReportedViolation,
} from './report/index.ts'
/** Subjects: the reference core as a subject (`runReferenceSession` is also what the crash child runs). */
export { referenceSubject, runReferenceSession } from './subjects/reference.ts'
/**
 * The released official engine (0.1.0-rc.8) as a subject lives in the optional package `@compaction-sim/subject-dsh`;
 * sim imports it only for `--subject dsh` (`loadDshSubject`). The run differential (issue #7).
 */
export {
  loadDshSubject, isPackageNotFound, DshSubjectMissingError, DSH_SUBJECT_PACKAGE, DSH_INSTALL_COMMAND, type ModuleImporter,
} from './subjects/dsh-loader.ts'
export { compareLogs, differentialOf, factsOf, type LogFacts, type LogSide } from './run/differential.ts'
export type { ExpectationGaps } from './run/expectations.ts'
export type { DifferentialAspect, DifferentialDifference, DifferentialReport, DifferentialScenario } from './report/types.ts'
/** World: the seeded PRNG streams, the virtual clock, and the crash harness (a real child SIGKILLed at a §13.4 point). */
export { Prng, isUint32, worldPrng, worldStream, type WorldStream } from './world/prng.ts'
export { VirtualClock, CLOCK_ORIGIN_MS, CLOCK_STEP_MS, type VirtualClockOptions } from './world/clock.ts'
export {
  runCrashingSession, CrashPointMatcher, CRASH_STARTUP_MS_DEFAULT, CRASH_WATCHDOG_MS_DEFAULT,
  type CrashPoint, type CrashingSessionOptions, type CrashingSessionResult, type DurableAck,
} from './world/crash.ts'
export {
  WatchdogError, WatchdogScaleError, watchdogScale, scaledWatchdogMs, WATCHDOG_SCALE_ENV,
} from './world/watchdog.ts'
export { createWorld, TurnReplyPlan, type World, type WorldOptions } from './run/world.ts'
/** Scenario: YAML → validated `Scenario` (errors name file:line:column) → `ResolvedScenario` with every default applied. */
export { loadScenario, parseScenario, type ScenarioLoadOptions } from './scenario/load.ts'
export {
  resolveScenario, faultSpecOf, faultTargetOf, type ResolvedFault, type ResolvedManualAction, type ScenarioSource,
} from './scenario/resolve.ts'
export { ScenarioError, formatScenarioIssue, type ScenarioErrorCode, type ScenarioIssue } from './scenario/errors.ts'
export {
  FAULT_KINDS, type Scenario, type FaultConfig, type FaultKind, type ManualAction, type ExpectConfig, type TranscriptConfig,
  type ProviderConfig,
} from './scenario/types.ts'
/**
 * Provider: the transport-neutral mock `(Request) => Promise<Response>` per wire, its reply plans and fault
 * injection, and the in-process (`@mswjs/interceptors`) / loopback-HTTP mounts. (`mountNock` is not re-exported:
 * loading nock patches `node:http`, and it must not share a process with another interception. The msw-based
 * `mountMsw`/`mswHandlers` are in `@compaction-sim/sim/msw`, for projects that have msw installed.)
 */
export {
  MockProvider, MockProviderConfigError, resolveMockProviderOptions, type MockProviderOptions, type MockProviderSpec,
} from './provider/mock-provider.ts'
export {
  mountIntercept, interceptRoutes, providerRoutes, type InterceptMount, type InterceptRoute,
} from './provider/mount-intercept.ts'
export { serveHttp, type ServeHttpOptions, type HttpServing } from './provider/serve-http.ts'
export {
  FaultInjectingPlan, FaultParamsError, parseFaultParams, parseFaultSchedule,
  type FaultCounters, type FaultPlanOptions, type FaultTargeting, type InjectedFault, type RequestContext, type TargetedFaultSpec,
} from './provider/faults.ts'
export { TranscriptReplyPlan, ReplyPlanExhaustedError, type TranscriptPlanOptions } from './provider/transcript-plan.ts'
export { deterministicSummary } from './provider/deterministic-summary.ts'
export type {
  MockWire, MockModel, ParsedRequest, PlannedReply, PlannedOutcome, ReplyPlan, CapturedWireRequest, ProviderClock,
} from './provider/types.ts'
/** `sim serve`: the mock provider as a loopback HTTP server (scenario replies and faults, JSON request lines, redacted capture). */
export {
  serve, ServeConfigError, isLoopbackHost, captureJsonl, type ServeOptions, type Serving, type ServeRequestLine,
} from './serve/serve.ts'
export { anthropicErrorType, toAnthropicRejection } from './provider/anthropic-response.ts'
/** Prompt-cache contracts and the cache/cost report (issue #9, protocol §9): the §9 model, provider contracts, the dated price table. */
export {
  CacheEngine, CacheContractError, resolveCacheContract, deviate, type CacheContractConfig, type CacheContractSpec, type CachePrediction,
} from './metrics/contracts.ts'
export { scenarioCacheOf, runCacheOf, type CacheReportInput } from './metrics/cache.ts'
export { segmentRequest, cacheKeyOf, type SegmentedRequest } from './metrics/segments.ts'
export { PRICE_TABLE_DATE, PRICE_TABLE_VERSION, PRICE_ENTRIES, priceEntry, ratesAt, costOf, type PriceEntry } from './metrics/prices.ts'
export type {
  ScenarioCache, RunCache, CacheRequestRow, CacheTotals, CachePriceRef, CacheReportedUsage, CacheContractName, CacheDeviation, CacheCauseKind,
} from './report/types.ts'
/** `sim sweep` and sharding (issue #10): policy grids, the worker-pool sweep, its report, and merging shard outputs. */
export { runSweep, type SweepOptions } from './sweep/sweep.ts'
export { gridCells, gridFromFlags, loadGridFile, parseGrid, type GridCell, type GridFlags } from './sweep/grid.ts'
export { finishSweep, paretoFront } from './sweep/aggregate.ts'
export { renderSweepMarkdown } from './sweep/markdown.ts'
export { renderSweepHtml } from './sweep/html.ts'
export { validateSweepReport, SWEEP_REPORT_SCHEMA_PATH } from './sweep/validate.ts'
export { parseShard, shardOf, inShard, type Shard } from './sweep/shard.ts'
export { mergeRunReports, mergeSweepReports, readShard } from './report/merge.ts'
export { applyPolicyOverride, type PolicyOverride } from './run/run-scenario.ts'
export type { RunShard } from './report/types.ts'
export type {
  SweepReport, SweepCell, SweepCellMetrics, SweepRunMetrics, SweepGrid, SweepPolicy, SweepRecommendation,
} from './sweep/types.ts'
/** `sim init` (issue #17): the conformance scaffold for adapter authors (subject, vitest file, workflow), never overwriting. */
export {
  scaffoldConformance, initFiles, InitConflictError, type InitOptions, type InitResult, type InitFile, type InitLanguage,
} from './init/init.ts'
