/**
 * Shrunk fuzz runs as scenario files (issue #8): a session trace becomes a scenario `sim run` replays —
 * each user turn an inline transcript turn, each answered conversation request a step (reply blocks, usage,
 * the tool results of its calls), each injected provider or summarizer fault a `faults` entry pinned by
 * `when.requestIndex` (0-based over all chat requests, the same count the mock uses), each manual call a
 * `manual` action (`compactNow` after its turn, `compactRegion` before its step), each §13.6 interleaving that
 * landed during a summary call a `concurrent:` item with its FAULT kind (issue #16). Commands without a
 * scenario construct (in-process crash + restore, interleavings outside a summary call) make a trace
 * non-exportable: `inProcessOnlyReason` says why, and `sim fuzz` excludes them from its scenario mix.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { stringify } from 'yaml'
import type { ContentBlock } from '@compaction-sim/core'
import type {
  FaultConfig, InlineReplyBlock, InlineResultBlock, InlineStep, InlineTurn, InlineUserBlock, ManualAction, Scenario,
} from '../scenario/types.ts'
import { FUZZ_ROUTE, FUZZ_SYSTEM_PROMPT, FUZZ_TOOL, type SessionConfig, type SessionTrace } from './driver.ts'
import { faultSpecsOf } from './run.ts'

/** Why `trace` has no scenario equivalent, or null when it has one. */
export function inProcessOnlyReason(trace: SessionTrace): string | null {
  if (trace.inProcessOnly.length === 0) return null
  const used = [...new Set(trace.inProcessOnly)].slice(0, 3).join(', ')
  return `the run used in-process-only commands (${used}); replay it with fast-check's path`
}

/** The final step appended to a turn the session ended early (a turn must end with a reply without tool calls). */
const UNSERVED_FINAL_STEP: InlineStep = { reply: 'done' }

/** The scenario of `trace` (throws when `inProcessOnlyReason` is not null). */
export function scenarioOf(
  trace: SessionTrace, config: SessionConfig, meta: { name: string; seed: number; description: string },
): Scenario {
  const refusal = inProcessOnlyReason(trace)
  if (refusal !== null) throw new Error(`no scenario for this run: ${refusal}`)
  const results = new Map(trace.toolResults.map((r) => [r.callId, r]))
  const turns: InlineTurn[] = trace.users.map((user, i) => {
    const steps: InlineStep[] = []
    for (const r of trace.requests) {
      if (r.purpose !== 'conversation' || r.turn !== i + 1 || r.answer.kind !== 'reply' || r.answer.blocks.length === 0) continue
      const blocks = r.answer.blocks.map(replyBlock)
      const reply = r.answer.usage === undefined ? { blocks } : { blocks, usage: { ...r.answer.usage } }
      const calls = r.answer.blocks.flatMap((b) => (b.type === 'tool-call' ? [String(b['id'])] : []))
      const step: InlineStep = { reply }
      if (calls.length > 0) {
        step.toolResults = calls.map((callId) => {
          const result = results.get(callId)
          const content = (result?.content ?? [{ type: 'text', text: 'ok' }]).map(resultBlock)
          return result?.isError === true ? { callId, content, isError: true } : { callId, content }
        })
      }
      steps.push(step)
    }
    const last = steps.at(-1)
    if (last === undefined || (last.toolResults?.length ?? 0) > 0) steps.push(UNSERVED_FINAL_STEP)
    return { user: user.map(userBlock), steps }
  })
  const faults: FaultConfig[] = trace.requests.flatMap(faultSpecsOf).map((f) => {
    const fault: FaultConfig = { id: f.id, kind: f.kind as FaultConfig['kind'], when: { requestIndex: f.when.requestIndex ?? 0 } }
    const p = f.params ?? {}
    if (f.kind === 'FAULT-16') fault.params = { code: p['code'] as NonNullable<FaultConfig['params']>['code'] & string }
    if (f.kind === 'FAULT-12') fault.params = { offloadImages: Number(p['offloadImages']) }
    if (f.kind === 'FAULT-29') fault.params = { offloadImages: 1 }
    return fault
  })
  const manual: ManualAction[] = trace.manual.flatMap((m): ManualAction[] => (m.kind === 'compactNow'
    ? [{ action: 'compactNow', afterTurn: m.afterTurn }]
    : [{ action: 'compactRegion', turn: m.turn, beforeStep: m.beforeStep, start: m.start, end: m.end }]))
  const scenario: Scenario = {
    name: meta.name,
    description: meta.description,
    seed: meta.seed,
    provider: {
      wire: 'openai', name: FUZZ_ROUTE.provider, model: FUZZ_ROUTE.model, contextWindow: config.contextWindow,
      ...(config.imageTokens === null ? {} : { imageTokens: config.imageTokens }),
    },
    policy: { ...config.policy },
    pruner: config.pruner === null ? false : { ...config.pruner },
    transcript: { inline: { systemPrompt: FUZZ_SYSTEM_PROMPT, tools: [structuredClone(FUZZ_TOOL)], turns } },
    expect: { invariants: 'all' },
  }
  if (faults.length > 0) scenario.faults = faults
  if (manual.length > 0) scenario.manual = manual
  if (trace.concurrent.length > 0) {
    scenario.concurrent = trace.concurrent.map((c) => ({ ...c.action }))
    const kinds = [...new Set(trace.concurrent.map((c) => c.fault))]
    scenario.faults = [...faults, ...kinds.map((kind): FaultConfig => ({ id: `concurrent-${kind.toLowerCase()}`, kind }))]
  }
  return scenario
}

/** Writes `scenario` as YAML with a comment header (the seed and the replay commands); creates the folder. */
export async function writeScenarioFile(path: string, scenario: Scenario, header: readonly string[]): Promise<void> {
  await mkdir(dirname(path), { recursive: true })
  const comments = ['yaml-language-server: $schema=../../packages/sim/schema/scenario.schema.json', '', ...header]
  const text = `${comments.map((c) => (c === '' ? '#' : `# ${c}`)).join('\n')}\n${stringify(scenario, { lineWidth: 140 })}`
  await writeFile(path, text)
}

/** A kebab-case slug of a failure description (its INV ids or its first words). */
export function slugOfFailure(description: string): string {
  const ids = description.match(/INV-\d\d|LIVENESS/g)
  const base = ids !== null ? [...new Set(ids)].join('-') : description.split(/\s+/).slice(0, 4).join('-')
  return base.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'failure'
}

function userBlock(b: ContentBlock): InlineUserBlock {
  if (b.type === 'image') return { type: 'image', attachment: structuredClone(b['attachment']) as never }
  return { type: 'text', text: String((b as { text?: unknown }).text ?? '') }
}

function replyBlock(b: ContentBlock): InlineReplyBlock {
  switch (b.type) {
    case 'tool-call': return { type: 'tool-call', id: String(b['id']), name: String(b['name']), arguments: String(b['arguments']) }
    case 'reasoning': return { type: 'reasoning', text: String(b['text']) }
    case 'image': return { type: 'image', attachment: structuredClone(b['attachment']) as never }
    default: return { type: 'text', text: String((b as { text?: unknown }).text ?? '') }
  }
}

function resultBlock(b: ContentBlock): InlineResultBlock {
  if (b.type === 'image') return { type: 'image', attachment: structuredClone(b['attachment']) as never }
  return { type: 'text', text: String((b as { text?: unknown }).text ?? '') }
}
