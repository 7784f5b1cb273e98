/**
 * Runs a scenario's transcript as a session of the reference core (`Agent` + `CompactionEngine`) whose only
 * adapter is one built on an official SDK (`sdk-adapters.ts`), against a provider the SDK reaches (`sim serve`
 * or msw). Writes what `sim check` needs next to each other: `<name>.jsonl` (the session log),
 * `<name>.manifest.json` (§1.1) and `<name>.requests.jsonl` (the request capture, §1.1). Same wiring as the
 * reference subject minus its world hooks, so the log is judged exactly like a `sim run` log.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  Agent, CompactionEngine, EventLog, LlmRuntime,
  type CapturedRequest, type GenerateOptions, type LlmAdapter, type MessageKind, type RunManifest, type TurnEndReason,
} from '@compaction-sim/core'
import type { Transcript } from '@compaction-sim/fixtures'
import { worldRoutes } from '../../../src/run/world.ts'
import { faultSpecOf, type ResolvedScenario } from '../../../src/scenario/resolve.ts'
import { VirtualClock } from '../../../src/world/clock.ts'

/** What a session left behind. */
export interface SdkSessionResult {
  logPath: string
  requestsPath: string
  outcomes: TurnEndReason[]
  requests: CapturedRequest[]
}

/** Runs every turn of `transcript` through `adapter` and writes the artifacts into `dir` (module doc). */
export async function runSdkSession(
  scenario: ResolvedScenario, transcript: Transcript, adapter: LlmAdapter, dir: string, name: string,
): Promise<SdkSessionResult> {
  const log = new EventLog({ dialect: 'seed' })
  const clock = new VirtualClock({ length: () => log.length })
  const provider = scenario.provider.name
  const route = { provider, model: scenario.provider.model }
  const requests: CapturedRequest[] = []
  const pending = new Map<GenerateOptions, CapturedRequest>()
  const runtime = new LlmRuntime({
    onDispatch: (call) => {
      if (call.purpose === 'session-title') return
      const captured: CapturedRequest = {
        index: requests.length, logRevisionAtDispatch: log.length, time: clock.peek(),
        purpose: call.purpose === 'compaction' ? 'compaction' : 'conversation',
        provider: call.provider, model: call.model, messages: structuredClone(call.messages), outcome: 'stop',
      }
      if (call.reasoningEffort !== undefined) captured.reasoningEffort = call.reasoningEffort
      if (call.temperature !== undefined) captured.temperature = call.temperature
      if (call.maxTokens !== undefined) captured.maxTokens = call.maxTokens
      if (call.stop !== undefined) captured.stop = [...call.stop]
      if (call.tools !== undefined) captured.tools = structuredClone(call.tools)
      requests.push(captured)
      pending.set(call, captured)
    },
    onFinish: (call, reason) => {
      const captured = pending.get(call)
      if (captured === undefined) return
      pending.delete(call)
      captured.outcome = reason.kind
      if (reason.kind === 'error' || reason.kind === 'aborted') captured.failureCode = reason.failure.code
    },
  })
  runtime.registerAdapter(provider, adapter)
  let counter = 0
  const next = (): number => ++counter
  const sessionId = `sdk-${name}`
  const engine = new CompactionEngine({
    log, runtime, policy: scenario.policy, clock: clock.now, warn: () => {}, info: () => {}, agentRoute: route, sessionId,
    ...(scenario.pruner === null ? {} : { pruner: scenario.pruner }),
    newCompactionId: () => `cmp-${name}-${next()}`,
    newMessageId: () => `m-checkpoint-${next()}`,
  })
  const results = new Map(transcript.turns.flatMap((t) => t.steps.flatMap((s) => s.toolResults.map((r) => [r.callId, r] as const))))
  const agent = new Agent({
    log, runtime, engine, policy: scenario.policy, route, sessionId, clock: clock.now, warn: () => {},
    systemPrompt: () => transcript.systemPrompt,
    tools: transcript.tools,
    executeTool: async (call) => {
      const r = results.get(call.callId)
      if (r === undefined) throw new Error(`no transcript result for ${call.callId}`)
      return r.isError === true ? { content: structuredClone(r.content), isError: true } : { content: structuredClone(r.content) }
    },
    newMessageId: (kind: MessageKind) => `m-${kind}-${next()}`,
    newRetryId: () => `r-${next()}`,
    sleep: (ms, signal) => clock.sleep(ms, signal),
  })
  const outcomes: TurnEndReason[] = []
  for (const turn of transcript.turns) outcomes.push((await agent.runTurn({ content: structuredClone(turn.user) })).reason)
  const logPath = join(dir, `${name}.jsonl`)
  const requestsPath = join(dir, `${name}.requests.jsonl`)
  const manifest: RunManifest = {
    scenario: scenario.file, compaction: structuredClone(scenario.policyConfig) as RunManifest['compaction'],
    routes: worldRoutes(scenario), faults: scenario.faults.map(faultSpecOf),
  }
  if (scenario.prunerConfig !== null) manifest.pruner = structuredClone(scenario.prunerConfig) as NonNullable<RunManifest['pruner']>
  await writeFile(logPath, log.events.map((e) => `${JSON.stringify(e)}\n`).join(''))
  await writeFile(join(dir, `${name}.manifest.json`), `${JSON.stringify(manifest, null, 2)}\n`)
  await writeFile(requestsPath, requests.map((r) => `${JSON.stringify(r)}\n`).join(''))
  return { logPath, requestsPath, outcomes, requests }
}
