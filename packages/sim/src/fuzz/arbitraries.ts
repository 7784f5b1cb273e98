/**
 * The generators of the model-based suite and `sim fuzz`: the session configuration and the command
 * sequence. Command kinds can be switched off and weighted (`--swarm` draws both from the seed, so each
 * run leaves some kinds out entirely — swarm testing); the conversation commands are always on, or no
 * session could progress.
 */
import fc from 'fast-check'
import type { AsyncCommand } from 'fast-check'
import { SUMMARY_FAULTS, type SessionConfig, type SessionDriver } from './driver.ts'
import type { SessionModel } from './model.ts'
import { AppendFaultCommand } from './commands/append-fault.ts'
import { AssistantTextCommand } from './commands/assistant-text.ts'
import { AssistantToolBatchCommand } from './commands/assistant-tool-batch.ts'
import { CompactNowCommand } from './commands/compact-now.ts'
import { CompactRegionCommand } from './commands/compact-region.ts'
import { ConcurrentCompactionCommand } from './commands/concurrent-compaction.ts'
import { CrashRestoreCommand } from './commands/crash-restore.ts'
import { ForeignAppendCommand } from './commands/foreign-append.ts'
import { ImageOffloadRequiredCommand } from './commands/image-offload-required.ts'
import { PressureTickCommand } from './commands/pressure-tick.ts'
import { ProviderOverflowCommand } from './commands/provider-overflow.ts'
import { SummarizerFaultCommand } from './commands/summarizer-fault.ts'
import { ToolResultsCommand } from './commands/tool-results.ts'
import { TransientFailureCommand } from './commands/transient-failure.ts'
import { UserTurnCommand } from './commands/user-turn.ts'

/** One command of the suite. */
export type FuzzCommand = AsyncCommand<SessionModel, SessionDriver>

/** The fault-bearing command kinds (`--swarm` switches these on and off). */
export const FAULT_KINDS = [
  'overflow', 'image-offload', 'transient', 'summary-fault', 'pressure', 'compact-now', 'compact-region', 'crash', 'concurrent', 'foreign',
  'append-fault',
] as const

/** One switchable command kind. */
export type FaultKindName = (typeof FAULT_KINDS)[number]

/**
 * Kinds whose commands may have no scenario equivalent (`scenario-writer.ts` refuses runs that used them): crash and
 * append faults always; `concurrent` and `foreign` only when their interleaving fell outside a summary call (one
 * inside it exports as a `concurrent:` item, issue #16), so the scenario mix leaves them out.
 */
export const IN_PROCESS_ONLY: ReadonlySet<FaultKindName> = new Set(['crash', 'concurrent', 'foreign', 'append-fault'])

/** Which fault kinds are on, with their relative weights (1…10); absent = off. */
export type FaultMix = Partial<Record<FaultKindName, number>>

/** Every kind on with weight 2 (the default suite). */
export const FULL_MIX: FaultMix = Object.fromEntries(FAULT_KINDS.map((k) => [k, 2]))

/** Every kind whose commands map to a scenario, weight 2 (runs that shrink to scenario files). */
export const SCENARIO_MIX: FaultMix = Object.fromEntries(FAULT_KINDS.filter((k) => !IN_PROCESS_ONLY.has(k)).map((k) => [k, 2]))

/** The session configuration generator: window, image price (or none: `withImageTokens` false), §3.1 policy, pruner or none. */
export function configArbitrary(withImageTokens = true): fc.Arbitrary<SessionConfig> {
  return fc.record({
    contextWindow: fc.integer({ min: 3000, max: 16_000 }),
    imageTokens: fc.integer({ min: 20, max: 400 }),
    thresholdPct: fc.integer({ min: 50, max: 90 }),
    retainShare: fc.integer({ min: 10, max: 60 }),
    compactionRetries: fc.integer({ min: 0, max: 2 }),
    maxOverflowRetries: fc.integer({ min: 0, max: 2 }),
    pruner: fc.option(fc.record({
      headChars: fc.integer({ min: 0, max: 1500 }), tailChars: fc.integer({ min: 0, max: 800 }), slack: fc.integer({ min: 0, max: 4000 }),
    }), { nil: null }),
  }).map((r) => ({
    contextWindow: r.contextWindow,
    imageTokens: withImageTokens ? r.imageTokens : null,
    policy: {
      thresholdRatio: r.thresholdPct / 100, retainRatio: Math.floor(r.thresholdPct * r.retainShare) / 10_000,
      compactionRetries: r.compactionRetries, maxOverflowRetries: r.maxOverflowRetries,
    },
    pruner: r.pruner === null ? null : {
      headChars: r.pruner.headChars, tailChars: r.pruner.tailChars,
      thresholdChars: r.pruner.headChars + r.pruner.tailChars + 43 + r.pruner.slack,
    },
  }))
}

/** `configArbitrary()`: the default generator (image price reported). */
export const configArb: fc.Arbitrary<SessionConfig> = configArbitrary()

const usageArb = fc.option(fc.integer({ min: 5, max: 120 }).map((p) => p / 100), { nil: null, freq: 4 })

/** The command arbitraries for `mix` (conversation commands always on). */
export function commandArbs(mix: FaultMix): Array<fc.WeightedArbitrary<FuzzCommand>> {
  const w = (k: FaultKindName): number => mix[k] ?? 0
  const all: Array<fc.WeightedArbitrary<FuzzCommand>> = [
    {
      weight: 6,
      arbitrary: fc.tuple(fc.integer({ min: 1, max: 2500 }), fc.integer({ min: 0, max: 2 })).map(([s, i]) => new UserTurnCommand(s, i)),
    },
    { weight: 4, arbitrary: fc.tuple(fc.integer({ min: 1, max: 1500 }), usageArb).map(([s, u]) => new AssistantTextCommand(s, u)) },
    { weight: 6, arbitrary: fc.tuple(fc.integer({ min: 1, max: 3 }), usageArb).map(([n, u]) => new AssistantToolBatchCommand(n, u)) },
    {
      weight: 8,
      arbitrary: fc.tuple(
        fc.array(fc.constantFrom('normal', 'huge', 'images', 'error'), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 2000, max: 30_000 }),
      )
        .map(([k, h]) => new ToolResultsCommand(k, h)),
    },
    { weight: w('pressure'), arbitrary: fc.integer({ min: 40, max: 130 }).map((p) => new PressureTickCommand(p / 100)) },
    { weight: w('overflow'), arbitrary: fc.constantFrom('thrown' as const, 'in-band' as const).map((d) => new ProviderOverflowCommand(d)) },
    { weight: w('image-offload'), arbitrary: fc.integer({ min: 1, max: 4 }).map((n) => new ImageOffloadRequiredCommand(n)) },
    {
      weight: w('transient'),
      arbitrary: fc.constantFrom('SERVER' as const, 'RATE_LIMIT' as const, 'TRANSPORT' as const).map((c) => new TransientFailureCommand(c)),
    },
    { weight: w('summary-fault'), arbitrary: fc.constantFrom(...SUMMARY_FAULTS).map((f) => new SummarizerFaultCommand(f)) },
    { weight: w('compact-now'), arbitrary: fc.constant(new CompactNowCommand()) },
    {
      weight: w('compact-region'),
      arbitrary: fc.tuple(fc.integer({ min: 1, max: 4 }), fc.integer({ min: -6, max: -1 })).map(([s, e]) => new CompactRegionCommand(s, e)),
    },
    { weight: w('append-fault'), arbitrary: fc.constant(new AppendFaultCommand()) },
    { weight: w('crash'), arbitrary: fc.nat({ max: 20 }).map((p) => new CrashRestoreCommand(p)) },
    { weight: w('concurrent'), arbitrary: fc.scheduler().map((s) => new ConcurrentCompactionCommand(s)) },
    {
      weight: w('foreign'),
      arbitrary: fc.tuple(fc.constantFrom('log-only' as const, 'surface' as const), fc.scheduler())
        .map(([k, s]) => new ForeignAppendCommand(k, s)),
    },
  ]
  return all.filter((a) => a.weight > 0)
}

/** The command-sequence arbitrary: up to `maxCommands` commands of `mix` (`replayPath`: fast-check's command replay path). */
export function commandsArb(mix: FaultMix, maxCommands = 60, replayPath?: string): fc.Arbitrary<Iterable<FuzzCommand>> {
  const arbs = commandArbs(mix)
  // fc.commands draws uniformly among its arbitraries: repeating one `weight` times weights it.
  const weighted = arbs.flatMap((a) => Array.from({ length: a.weight }, () => a.arbitrary))
  return fc.commands(weighted, { maxCommands, size: 'max', ...(replayPath === undefined ? {} : { replayPath }) })
}
