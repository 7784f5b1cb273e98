/**
 * The error classes of the compaction engine (survivors of the mutation run, `pnpm mutate`): the summarizer
 * error keeps its target fields, and the hardened HARD-3 / HARD-4 errors carry their
 * stable name, code, figures and the exact message text (docs/hardened.md). Every expectation is written out by hand.
 */
import { describe, expect, it } from 'vitest'
import { CheckpointBudgetError, NotRelievedError, SummarizerError } from '../../src/compaction/errors.ts'

describe('SummarizerError', () => {
  it('keeps the target fields it was given', () => {
    const err = new SummarizerError({ code: 'UNKNOWN', message: 'down' }, { provider: 'mock', model: 'mock-4k', maxTokens: 512 })
    expect(err).toMatchObject({ name: 'SummarizerError', message: 'down', code: 'UNKNOWN', provider: 'mock', model: 'mock-4k', maxTokens: 512 })
  })
})

describe('hardened shrink errors', () => {
  it('CheckpointBudgetError (HARD-3): name, code, figures and message', () => {
    const err = new CheckpointBudgetError(900, 700)
    expect(err.name).toBe('CheckpointBudgetError')
    expect(err.code).toBe('CHECKPOINT_BUDGET')
    expect(err.checkpointTokens).toBe(900)
    expect(err.budgetTokens).toBe(700)
    expect(err.message).toBe('checkpoint over its budget (hardened HARD-3): 900 route tokens > 700 (threshold − envelope − retained surface − margin)')
  })

  it('NotRelievedError (HARD-4): name, code, figures and message', () => {
    const err = new NotRelievedError(420, 400)
    expect(err.name).toBe('NotRelievedError')
    expect(err.code).toBe('NOT_RELIEVED')
    expect(err.checkpointTokens).toBe(420)
    expect(err.shadowedRouteTokens).toBe(400)
    expect(err.message).toBe('summary gives no metered relief (hardened HARD-4): 420 route tokens >= 400 route tokens shadowed')
  })
})
