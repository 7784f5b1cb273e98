/**
 * The pressure decision of §3.5 steps 1–8 on the Appendix B running example (route mock/mock-4k, window
 * 4,000, default policy → threshold 3,200, retain 640), and the listener's warning gate of §3.9.
 * Measurements are built by hand with the `P_route` prices of §4.4 Example 4 and the Appendix B pressure figures.
 */
import { appendixBEvents } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { EventLog } from '../../src/log/event-log.ts'
import type { LlmModelInfo } from '../../src/log/llm.ts'
import type { Measurement } from '../../src/meter/measurement.ts'
import { CompactionConfigError, resolveCompactionConfig, TargetPressureConfigError } from '../../src/policy/config.ts'
import {
  CompactionBusyError, evaluatePressure, ModelContextError, PressureWarningGate, routedTarget, type PressureInput,
} from '../../src/policy/pressure.ts'
import { selectCompactableRange } from '../../src/range/select.ts'
import { filler, logAt, measurementOf } from '../range/surface-builder.ts'
import { user } from '../support/events.ts'

/** Appendix B `P_route` of every node that is on the surface somewhere in turns 1–3 (§4.4 Example 4). */
const PRICES = { 2: 28, 3: 20, 10: 15, 15: 1303, 23: 101, 28: 152, 37: 77, 42: 22, 47: 14, 49: 1925 }

function appendixB(length: number): EventLog {
  return EventLog.fromEvents(appendixBEvents().slice(0, length), { dialect: 'seed' })
}

function modelInfo(contextWindow?: number): (provider: string, model: string) => Promise<LlmModelInfo> {
  return async (provider, model) => {
    const info: LlmModelInfo = { provider, id: model, name: model }
    if (contextWindow !== undefined) info.context = { contextWindow }
    return info
  }
}

function input(log: EventLog, totalTokens: number, extra: Partial<PressureInput> = {}): PressureInput {
  return {
    log,
    spec: resolveCompactionConfig({}),
    measure: () => measurementOf(log, PRICES, totalTokens),
    resolveModelInfo: modelInfo(4000),
    ...extra,
  }
}

async function rejectionOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p
  } catch (err) {
    return err
  }
  throw new Error('the promise resolved')
}

describe('evaluatePressure (§3.5 steps 1–8)', () => {
  it('step 1: no header → no-target, without measuring or resolving capacity (§2.7)', async () => {
    const log = logAt([[1, user('hi')]])
    const calls: string[] = []
    const decision = await evaluatePressure(input(log, 0, {
      measure: () => { calls.push('measure'); return measurementOf(log, { 1: 3 }) },
      resolveModelInfo: async (p, m) => { calls.push('resolve'); return { provider: p, id: m, name: m } },
    }))
    expect(decision).toEqual({ kind: 'no-target' })
    expect(calls).toEqual([])
  })

  it('step 1: a header whose provider or model is empty is no routed target', async () => {
    for (const config of [{ provider: '', model: 'm' }, { provider: 'p', model: '' }]) {
      const log = logAt([[1, { time: 0, type: 'request/header', data: { header: { config }, reason: 'initial' } }]])
      expect(routedTarget(log)).toBeNull()
      expect(await evaluatePressure(input(log, 0))).toEqual({ kind: 'no-target' })
    }
  })

  it('Appendix B after #50: pressure 3,762 ≥ 3,200 → above; selection with R = 640 gives span {3..42} (§4.4 Example 4)', async () => {
    const log = appendixB(51)
    const decision = await evaluatePressure(input(log, 3762))
    expect(decision.kind).toBe('above')
    if (decision.kind !== 'above') return
    expect(decision.compact).toEqual({ contextWindow: 4000, thresholdTokens: 3200, retainTokens: 640 })
    expect(decision.policy.route).toEqual({ provider: 'mock', model: 'mock-4k' })
    expect(decision.measurement.totalTokens).toBe(3762)
    const range = selectCompactableRange(log, decision.measurement, decision.compact.retainTokens)
    expect(range?.shadowedSeqs).toEqual([3, 10, 15, 23, 28, 37, 42])
  })

  it('pressure exactly at the threshold qualifies (§0.3 "threshold": at or above)', async () => {
    expect((await evaluatePressure(input(appendixB(51), 3200))).kind).toBe('above')
  })

  it('step 8 / §3.11: below pressure (Appendix B after #40, 1,922) returns below and writes nothing', async () => {
    const log = appendixB(41)
    const before = [...log.events]
    const decision = await evaluatePressure(input(log, 1922))
    expect(decision).toMatchObject({ kind: 'below', compact: { thresholdTokens: 3200, retainTokens: 640 } })
    expect(log.length).toBe(41)
    expect(log.events).toEqual(before)
  })

  it('step 4: re-measures when the log advanced during the capacity await, and compares the fresh figure', async () => {
    const log = appendixB(51)
    const figures = [3762, 2277]
    const measured: Measurement[] = []
    const decision = await evaluatePressure(input(log, 0, {
      measure: () => {
        const m = measurementOf(log, PRICES, figures[measured.length])
        measured.push(m)
        return m
      },
      resolveModelInfo: async (provider, model) => {
        log.append(filler()) // another entry point wrote meanwhile
        return { provider, id: model, name: model, context: { contextWindow: 4000 } }
      },
    }))
    expect(measured.map((m) => m.logRevision)).toEqual([51, 52])
    expect(decision).toMatchObject({ kind: 'below', measurement: { logRevision: 52, totalTokens: 2277 } })
  })

  it('step 4: measures once when the log did not advance', async () => {
    const log = appendixB(51)
    let count = 0
    await evaluatePressure(input(log, 0, { measure: () => { count++; return measurementOf(log, PRICES, 3762) } }))
    expect(count).toBe(1)
  })

  it('step 4: resolveModelInfo gets the exact route and the signal; its errors propagate', async () => {
    const log = appendixB(51)
    const signal = new AbortController().signal
    const seen: unknown[] = []
    const boom = new Error('NO_ADAPTER')
    const err = await rejectionOf(evaluatePressure(input(log, 3762, {
      signal,
      resolveModelInfo: async (provider, model, s) => { seen.push(provider, model, s); throw boom },
    })))
    expect(seen).toEqual(['mock', 'mock-4k', signal])
    expect(err).toBe(boom)
  })

  it('step 5: a live lock throws CompactionBusyError (code busy), even below pressure', async () => {
    const log = appendixB(51)
    log.append({ time: 0, type: 'compaction/start', data: { compactionId: 'cmp-other' as never, turn: 3 } })
    const err = await rejectionOf(evaluatePressure(input(log, 10)))
    expect(err).toBeInstanceOf(CompactionBusyError)
    expect(err).toMatchObject({ code: 'busy', bracket: { compactionId: 'cmp-other', startSeq: 51 } })
  })

  it('step 5 is evaluated after the await: a bracket opened during the lookup is busy, one closed during it is not (§11.1)', async () => {
    const opened = appendixB(51)
    const openDuring = input(opened, 3762, {
      resolveModelInfo: async (provider, model) => {
        opened.append({ time: 0, type: 'compaction/start', data: { compactionId: 'cmp-x' as never, turn: 3 } })
        return { provider, id: model, name: model, context: { contextWindow: 4000 } }
      },
    })
    expect(await rejectionOf(evaluatePressure(openDuring))).toBeInstanceOf(CompactionBusyError)

    const closed = appendixB(51)
    closed.append({ time: 0, type: 'compaction/start', data: { compactionId: 'cmp-y' as never, turn: 3 } })
    const closeDuring = input(closed, 0, {
      measure: () => measurementOf(closed, PRICES, 3762),
      resolveModelInfo: async (provider, model) => {
        closed.append({ time: 0, type: 'compaction/end', data: { compactionId: 'cmp-y' as never, turn: 3 } })
        return { provider, id: model, name: model, context: { contextWindow: 4000 } }
      },
    })
    expect((await evaluatePressure(closeDuring)).kind).toBe('above')
  })

  it('step 6: missing capacity throws TargetPressureConfigError NO_CAPACITY keyed "mock/mock-4k"', async () => {
    const err = await rejectionOf(evaluatePressure(input(appendixB(51), 3762, { resolveModelInfo: modelInfo(undefined) })))
    expect(err).toBeInstanceOf(TargetPressureConfigError)
    expect(err).toMatchObject({ code: 'NO_CAPACITY', key: 'mock/mock-4k', message: 'no context capacity for mock/mock-4k' })
  })

  it('§2.7: an adapter-reported window that is not a positive integer is the runtime\'s INVALID_MODEL_CONTEXT (operational)', async () => {
    for (const w of [0, -1, 4000.5, Number.NaN]) {
      const err = await rejectionOf(evaluatePressure(input(appendixB(51), 3762, { resolveModelInfo: modelInfo(w) })))
      expect(err).toBeInstanceOf(ModelContextError)
      expect(err).toMatchObject({ code: 'INVALID_MODEL_CONTEXT', key: 'mock/mock-4k', failure: { code: 'INVALID_MODEL_CONTEXT' } })
      expect(err).not.toBeInstanceOf(TargetPressureConfigError)
    }
  })

  it('step 7: an absolute retainTokens not below the scaled threshold throws RETAIN_NOT_BELOW_THRESHOLD keyed by route', async () => {
    const spec = resolveCompactionConfig({ retainTokens: 3200 })
    const err = await rejectionOf(evaluatePressure(input(appendixB(51), 3762, { spec })))
    expect(err).toBeInstanceOf(TargetPressureConfigError)
    expect(err).toMatchObject({ code: 'RETAIN_NOT_BELOW_THRESHOLD', key: 'mock/mock-4k' })
  })

  it('step 2: the route override applies (exact provider and model)', async () => {
    const override = { provider: 'mock', model: 'mock-4k', thresholdRatio: 0.95, retainTokens: 100 }
    const spec = resolveCompactionConfig({ modelPolicies: [override] })
    const decision = await evaluatePressure(input(appendixB(51), 3762, { spec }))
    expect(decision).toMatchObject({ kind: 'below', compact: { thresholdTokens: 3800, retainTokens: 100 } })
  })
})

describe('PressureWarningGate (§3.9)', () => {
  const missing = (key: string): TargetPressureConfigError =>
    new TargetPressureConfigError('NO_CAPACITY', key, `no context capacity for ${key}`)

  it('warns once per key for target-pressure config errors, per gate (engine) lifetime', () => {
    const gate = new PressureWarningGate()
    expect(gate.shouldWarn(missing('mock/a'))).toBe(true)
    expect(gate.shouldWarn(missing('mock/a'))).toBe(false)
    expect(gate.shouldWarn(new TargetPressureConfigError('RETAIN_NOT_BELOW_THRESHOLD', 'mock/a', 'x'))).toBe(false)
    expect(gate.shouldWarn(missing('mock/b'))).toBe(true)
    expect(gate.shouldWarn(missing('other/a'))).toBe(true)
    expect(new PressureWarningGate().shouldWarn(missing('mock/a'))).toBe(true) // a new lifecycle starts empty (§11.5)
  })

  it('warns every time for operational failures: busy, INVALID_MODEL_CONTEXT, summary failures, anything else', () => {
    const gate = new PressureWarningGate()
    const busy = new CompactionBusyError({ startSeq: 51 as never, compactionId: 'cmp', turn: 3 })
    const operational: unknown[] = [
      busy, new ModelContextError('mock/a', 0), new Error('still above threshold'),
      new CompactionConfigError('RATIO', 'thresholdRatio', 'x'), 'a string',
    ]
    for (let round = 0; round < 3; round++) for (const err of operational) expect(gate.shouldWarn(err)).toBe(true)
  })
})
