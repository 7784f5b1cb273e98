/**
 * Builders for the WORLD check tests that run one check's own hooks (`create` / `after` / `end`) over a hand-written
 * log, request capture and world record, without `checkLog`: a check that throws fails the test itself.
 */
import type { CapturedRequest, LogEvent } from '@compaction-sim/core'
import type { FoldItem, RunContext } from '../../src/checker/types.ts'
import { WORLD_CHECKS } from '../../src/checker/world.ts'
import type { WorldRecord, WorldRequest, WorldRoute } from '../../src/provider/world-record.ts'

export type Purpose = 'conversation' | 'compaction'

/** One log line of a direct run: its type and data (seq = its index). */
export interface HookEvent { type: string; data?: Record<string, unknown> }

/** A captured request on route p/m with no messages. */
export function captured(index: number, purpose: Purpose, at: number, outcome: CapturedRequest['outcome'] = 'stop', extra: Partial<CapturedRequest> = {}): CapturedRequest {
  return { index, logRevisionAtDispatch: at, time: 0, purpose, provider: 'p', model: 'm', messages: [], outcome, ...extra }
}

/** A world request the world answered with a streamed `stop` reply on route m. */
export function served(index: number, purpose: Purpose, extra: Partial<WorldRequest> = {}): WorldRequest {
  return {
    index, purpose, model: 'm', route: 'm', stream: true, images: [],
    answer: { kind: 'reply', status: 200, finish: 'stop' }, failureClass: null, usage: null, usageDelivery: 'omitted',
    ...extra,
  } as WorldRequest
}

/** A world record on the openai wire holding `requests` and `routes`. */
export function worldOf(requests: WorldRequest[], routes: Array<Pick<WorldRoute, 'model' | 'contextWindow'>> = []): WorldRecord {
  return { schemaVersion: 1, kind: 'compaction-sim/world-record', wire: 'openai', captureOffset: 0, logOffset: 0, routes, requests } as unknown as WorldRecord
}

/** The `id@seq: message` (and `skip@seq: reason`) lines of WORLD check `id` run through its own hooks over `events`. */
export function runWorldHooks(id: string, events: readonly HookEvent[], requests: CapturedRequest[] | null, world: WorldRecord): string[] {
  const check = WORLD_CHECKS.find((c) => c.id === id)
  if (check === undefined) throw new Error(`no ${id}`)
  const ctx = worldContext(requests, world)
  const out: string[] = []
  const hooks = check.create(ctx, {
    violation: (seq, message) => { out.push(`${id}@${seq}: ${message}`) },
    skip: (seq, reason) => { out.push(`skip@${seq}: ${reason}`) },
  })
  for (const [seq, e] of events.entries()) hooks.after?.({ seq, type: e.type, data: e.data ?? {} } as unknown as LogEvent, {} as FoldItem, {} as never)
  hooks.end?.({} as never)
  return out
}

/** The context `runWorldHooks` gives a check, for its applicability. */
export function worldContext(requests: CapturedRequest[] | null, world: WorldRecord): RunContext {
  return { dialect: 'seed', inputs: { faults: [] }, requests, world } as unknown as RunContext
}
