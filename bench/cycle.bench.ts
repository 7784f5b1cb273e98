/**
 * Reference-core cycle benchmarks (tinybench 6, run by `bench/run.ts`), driving the real `Agent`,
 * `CompactionEngine`, `LlmRuntime` and `ScriptedAdapter` over prefixes built from `synthetic-log.ts`:
 *
 * (a) one full pressure cycle (§3.5: pressure check → bracket of §7 → commit) on sessions of about 10k and
 *     100k events. The route window is set so the prefix stands at 90% of it (above the 80% threshold, and
 *     the summary request of the 74% region fits the window); no pruner, so the cycle is always a bracket.
 *     The region grows with the session, so the ratio per cycle is informational; the ratio per shadowed
 *     node is bounded by `CYCLE_NODE_RATIO_MAX`. Timed in CPU time (`cpuNowMs`).
 * (b) the per-step overhead of the loop: one-step turns (pre-step pressure check, request assembly from the
 *     log, the appends of a scripted text reply) on sessions of about 1k and 100k events. Both sessions share
 *     one window and were brought under it by one real pressure compaction, so their surfaces are alike and
 *     only the log length differs 100×; design.md §6 bounds the ratio at 1.5× (O(new events) per step).
 */
import { Bench } from 'tinybench'
import {
  Agent, CompactionEngine, EventLog, LlmRuntime, ScriptedAdapter, TokenMeter, resolveCompactionConfig,
  type CompactionPolicySpec, type LogEvent, type ReplySource, type ToolSchema,
} from '@compaction-sim/core'
import { medianMs, samples } from './fold.bench.ts'
import { settleYoungGeneration } from './gc.ts'
import { syntheticLog } from './synthetic-log.ts'

/** Session sizes of (a), in events (before the cut to a turn boundary). */
export const CYCLE_SIZES = [10_000, 100_000] as const
/**
 * The bound on (a) per shadowed node: the cost of one cycle divided by the nodes it shadowed, at the largest
 * size over the smallest (issue #17). The region grows with the session, so the cost per cycle is not bounded,
 * but the cost per node is: one compaction is linear in its region.
 */
export const CYCLE_NODE_RATIO_MAX = 1.5
/** Session sizes of (b), in events (before the cut to a turn boundary). */
export const STEP_SIZES = [1_000, 100_000] as const
/** The bound on (b): per-step cost at the largest size over the smallest (design.md §6). */
export const STEP_RATIO_MAX = 1.5
/** One-step turns timed per sample of (b). */
export const STEP_TURNS_PER_SAMPLE = 50

/** One row of (a). */
export interface CycleBenchRow {
  sizeEvents: number
  surfaceNodes: number
  shadowedNodes: number
  msPerCycle: number
  /** `msPerCycle` per shadowed node, in µs. */
  usPerShadowedNode: number
  samples: number
}

/** One row of (b). */
export interface StepBenchRow {
  sizeEvents: number
  surfaceNodes: number
  usPerStep: number
  samples: number
}

const DIALECT = { dialect: 'seed' } as const
const PROVIDER = 'mock'
const MODEL = 'mock-4k'
const TIME_START_MS = 1_700_000_000_000
const TIME_STEP_MS = 5
const PRESSURE_AT_START = 0.9
const SUMMARY = '## Primary Request and Intent\n- Keep the float tests green.\n## Current Work\n- Benchmarking the loop.'
const READ_TOOL: ToolSchema = {
  name: 'read',
  description: 'Read a UTF-8 text file from the workspace.',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
}

/** A session over a copy of `events`: runtime, scripted adapter (window `contextWindow`), engine and its meter. */
interface Session {
  log: EventLog
  engine: CompactionEngine
  runtime: LlmRuntime
  policy: CompactionPolicySpec
  clock: () => number
}

function session(events: readonly LogEvent[], contextWindow: number): Session {
  const log = EventLog.fromEvents(events, DIALECT)
  // The synthetic clock continued: 5 ms per event (several readings before one append share a time).
  const clock = (): number => TIME_START_MS + TIME_STEP_MS * log.length
  let replies = 0
  const conversation: ReplySource = () => ({
    kind: 'reply', blocks: [{ type: 'text', text: `Reply ${++replies}: the float sum needs toBeCloseTo.` }],
    usage: { inputTokens: 100, outputTokens: 12 },
  })
  const compaction: ReplySource = () => ({
    kind: 'reply', blocks: [{ type: 'text', text: SUMMARY }], usage: { inputTokens: 1000, outputTokens: 30 },
  })
  const adapter = new ScriptedAdapter({ routes: [{ provider: PROVIDER, model: MODEL, contextWindow }], conversation, compaction })
  const runtime = new LlmRuntime()
  runtime.registerAdapter(PROVIDER, adapter)
  const policy = resolveCompactionConfig(undefined)
  const meter = new TokenMeter(log, DIALECT)
  meter.measure() // a live session's meter has caught up already; the first full replay is not part of a cycle
  let compactions = 0
  let checkpoints = 0
  const engine = new CompactionEngine({
    log, runtime, policy, clock, meter, agentRoute: { provider: PROVIDER, model: MODEL }, sessionId: 'bench',
    newCompactionId: () => `cmp-${++compactions}`, newMessageId: () => `m-ck${++checkpoints}`,
    warn: (message) => { throw new Error(`bench: unexpected warning: ${message}`) },
  })
  return { log, engine, runtime, policy, clock }
}

function agentOf(s: Session): Agent {
  let messages = 0
  return new Agent({
    log: s.log, runtime: s.runtime, engine: s.engine, policy: s.policy, route: { provider: PROVIDER, model: MODEL },
    systemPrompt: () => '', tools: [READ_TOOL], clock: s.clock, sessionId: 'bench',
    executeTool: async () => { throw new Error('bench: the scripted replies call no tools') },
    newMessageId: (kind) => `m-bench-${kind}-${++messages}`, newRetryId: () => 'r-unused', sleep: async () => {},
    warn: (message) => { throw new Error(`bench: unexpected warning: ${message}`) },
  })
}

/** The synthetic log of `size` events cut after its last `turn/end` (the loop starts turns only between turns). */
function turnBoundaryPrefix(all: readonly LogEvent[], size: number): LogEvent[] {
  let cut = Math.min(size, all.length)
  while (cut > 0 && all[cut - 1]?.type !== 'turn/end') cut--
  if (cut === 0) throw new Error(`bench: the synthetic log has no turn/end in its first ${size} events`)
  return all.slice(0, cut)
}

function measuredTokens(events: readonly LogEvent[]): number {
  return new TokenMeter(EventLog.fromEvents(events, DIALECT), DIALECT).measure().totalTokens
}

/**
 * The process's CPU time (user + system, all threads) in ms: the clock of (a). On a machine shared with other
 * work, wall time also counts the time the process waited for a core, which at 100k events swamps the ratio.
 */
function cpuNowMs(): number {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

/** (a): a fresh session per sample (not timed), then one timed `compactIfNeeded('pressure')` that must compact (CPU time). */
export async function runCycleBench(options: { seed: number; sizes?: readonly number[] }): Promise<CycleBenchRow[]> {
  const sizes = options.sizes ?? CYCLE_SIZES
  const all = syntheticLog({ seed: options.seed, eventCount: Math.max(...sizes) })
  const rows: CycleBenchRow[] = []
  for (const size of sizes) {
    const prefix = turnBoundaryPrefix(all, size)
    const turn = prefix.filter((e) => e.type === 'turn/end').length + 1
    const time = TIME_START_MS + TIME_STEP_MS * prefix.length
    const open = { seq: prefix.length, time, type: 'turn/start', data: { turn } } as LogEvent
    const events = [...prefix, open] // a pre-step: the turn is open, no step is (§3.9)
    const contextWindow = Math.ceil(measuredTokens(events) / PRESSURE_AT_START)
    let s = session(events, contextWindow)
    let shadowedNodes = 0
    const name = `pressure cycle @ ${size}`
    const iterations = Math.max(10, Math.round(50_000 / size))
    const bench = new Bench({ iterations, time: 0, warmupIterations: 3, warmupTime: 0, throws: true, now: cpuNowMs })
    bench.add(name, async () => {
      const result = await s.engine.compactIfNeeded('pressure')
      if (result === null) throw new Error(`bench: the ${size}-event session did not compact`)
      shadowedNodes = result.shadowedSeqs.length
    }, {
      beforeEach: () => {
        s = session(events, contextWindow)
        settleYoungGeneration()
      },
    })
    await bench.run()
    const msPerCycle = medianMs(bench, name)
    rows.push({
      sizeEvents: events.length, surfaceNodes: s.log.nodes.length, shadowedNodes, msPerCycle,
      usPerShadowedNode: (msPerCycle * 1000) / Math.max(1, shadowedNodes), samples: samples(bench),
    })
  }
  return rows
}

/** The prepared logs of (b): per size, the synthetic prefix after one real turn that compacted it under `contextWindow`. */
export interface StepSessions {
  contextWindow: number
  logs: Array<readonly LogEvent[]>
}

/**
 * Setup of (b), untimed: per size, the synthetic prefix plus one real turn whose pre-step compacts it under a
 * window shared by all sizes (the smallest prefix stands at 90% of it, so every prefix starts above the
 * threshold). Throws when a prefix was not compacted.
 */
export async function prepareStepSessions(options: { seed: number; sizes?: readonly number[] }): Promise<StepSessions> {
  const sizes = options.sizes ?? STEP_SIZES
  const all = syntheticLog({ seed: options.seed, eventCount: Math.max(...sizes) })
  const prefixes = sizes.map((size) => turnBoundaryPrefix(all, size))
  const contextWindow = Math.ceil(measuredTokens(prefixes[0] ?? []) / PRESSURE_AT_START)
  const logs: Array<readonly LogEvent[]> = []
  for (const prefix of prefixes) {
    const setup = session(prefix, contextWindow)
    const generation = setup.log.state.surface.replaceGeneration
    await agentOf(setup).runTurn({ content: [{ type: 'text', text: 'Compact, then answer.' }] })
    if (setup.log.state.surface.replaceGeneration === generation) {
      throw new Error(`bench: the ${prefix.length}-event prefix was not compacted`)
    }
    logs.push(setup.log.events)
  }
  return { contextWindow, logs }
}

/** A fresh loop over a copy of `events` (engine, meter caught up), after one untimed warm-up turn. */
export async function stepWorld(events: readonly LogEvent[], contextWindow: number): Promise<{ log: EventLog; agent: Agent }> {
  const s = session(events, contextWindow)
  const agent = agentOf(s)
  await agent.runTurn({ content: [{ type: 'text', text: 'Warm up.' }] })
  return { log: s.log, agent }
}

/** Runs `count` one-step turns; throws when one is not a completed single step or when any compacted. */
export async function runOneStepTurns(world: { log: EventLog; agent: Agent }, count: number): Promise<void> {
  const before = world.log.state.surface.replaceGeneration
  for (let k = 0; k < count; k++) {
    const outcome = await world.agent.runTurn({ content: [{ type: 'text', text: `Step ${k}: check the float sum again.` }] })
    if (outcome.steps !== 1 || outcome.reason.kind !== 'completed') throw new Error(`bench: turn ended ${JSON.stringify(outcome)}`)
  }
  if (world.log.state.surface.replaceGeneration !== before) throw new Error('bench: a timed step compacted')
}

/** Rounds of (b): each round times every size once more, so the sizes share the machine's load drift. */
export const STEP_ROUNDS = 5

/**
 * (b): each sample restores a prepared log into a fresh session and runs one untimed turn (so a new loop
 * instance's first header, route record and scans are not counted), settles the setup's young objects, then
 * times `STEP_TURNS_PER_SAMPLE` one-step turns. The sizes are measured in `STEP_ROUNDS` interleaved rounds
 * (1k, 100k, 1k, 100k, …) and a row reports the median of its pooled samples divided by the turn count.
 */
export async function runStepBench(options: { seed: number; sizes?: readonly number[] }): Promise<StepBenchRow[]> {
  const { contextWindow, logs } = await prepareStepSessions(options)
  const pooled = logs.map((): number[] => [])
  const surfaceNodes = logs.map(() => 0)
  for (let round = 0; round < STEP_ROUNDS; round++) {
    for (const [i, events] of logs.entries()) {
      let world = await stepWorld(events, contextWindow)
      const name = `one-step turns @ ${events.length}`
      const iterations = events.length > 10_000 ? 3 : 8
      const bench = new Bench({ iterations, time: 0, warmupIterations: 1, warmupTime: 0, throws: true, retainSamples: true })
      bench.add(name, () => runOneStepTurns(world, STEP_TURNS_PER_SAMPLE), {
        beforeEach: async () => {
          world = await stepWorld(events, contextWindow)
          settleYoungGeneration()
        },
      })
      await bench.run()
      pooled[i]?.push(...latencySamples(bench, name))
      surfaceNodes[i] = world.log.nodes.length
    }
  }
  return logs.map((events, i) => {
    const all = [...(pooled[i] ?? [])].sort((x, y) => x - y)
    return {
      sizeEvents: events.length, surfaceNodes: surfaceNodes[i] ?? 0,
      usPerStep: (median(all) * 1000) / STEP_TURNS_PER_SAMPLE, samples: all.length,
    }
  })
}

/** The latency samples (ms) of a finished task run with `retainSamples`. */
function latencySamples(bench: Bench, name: string): readonly number[] {
  const result = bench.getTask(name)?.result
  const samples = result !== undefined && 'latency' in result ? result.latency.samples : undefined
  if (samples === undefined) throw new Error(`benchmark ${name} retained no latency samples`)
  return samples
}

function median(sorted: readonly number[]): number {
  const mid = sorted.length >> 1
  const value = sorted.length % 2 === 1 ? sorted[mid] : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
  if (value === undefined) throw new Error('bench: no samples')
  return value
}
