/** Header canonical form, equality and the reason/series decision (§10.2, §10.3, D-05). */
import { describe, expect, it } from 'vitest'
import type { EpochHeader } from '../../src/log/events.ts'
import { canonicalHeader, decideHeader, headersEqual } from '../../src/request/header.ts'

const read = { name: 'read', description: 'Read a file.', parameters: { type: 'object' } }
const base: EpochHeader = { config: { provider: 'mock', model: 'mock-4k' }, tools: [read] }

describe('canonical form and equality (§10.2)', () => {
  it('drops empty tools and false adapter-default markers', () => {
    expect(canonicalHeader({ config: base.config, tools: [], adapterDefaults: {} }, 'seed')).toEqual({ config: base.config })
    expect(canonicalHeader({ config: base.config, adapterDefaults: { maxTokens: true } }, 'seed')).toEqual({ config: base.config, adapterDefaults: { maxTokens: true } })
  })

  it('keeps a non-empty system only in the rc.8 dialect (D-02)', () => {
    expect(canonicalHeader({ ...base, system: 'be careful' }, 'dsh-0.1.0-rc.8').system).toBe('be careful')
    expect(canonicalHeader({ ...base, system: '' }, 'dsh-0.1.0-rc.8').system).toBeUndefined()
    expect(canonicalHeader({ ...base, system: 'x' }, 'seed').system).toBeUndefined()
  })

  it('treats absent tools as empty, compares stop arrays element-wise and tool order', () => {
    expect(headersEqual({ config: base.config }, { config: base.config, tools: [] })).toBe(true)
    expect(headersEqual({ config: { ...base.config, stop: ['a'] } }, { config: { ...base.config, stop: ['a'] } })).toBe(true)
    expect(headersEqual({ config: { ...base.config, stop: ['a'] } }, { config: base.config })).toBe(false)
    const other = { ...read, name: 'write' }
    expect(headersEqual({ ...base, tools: [read, other] }, { ...base, tools: [other, read] })).toBe(false)
    expect(headersEqual(base, { ...base, config: { ...base.config, temperature: 0 } })).toBe(false)
    expect(headersEqual(base, { ...base, adapterDefaults: { reasoningEffort: true } })).toBe(false)
  })
})

describe('decideHeader (§10.3)', () => {
  const input = { header: base, previous: base, epoch: 0, epochAtHeader: 0, loggedThisInstance: true, dialect: 'seed' as const }

  it('writes initial for the first header of a log and resume for a new instance', () => {
    expect(decideHeader({ ...input, previous: undefined, loggedThisInstance: false })).toEqual({ header: base, reason: 'initial' })
    expect(decideHeader({ ...input, loggedThisInstance: false })).toEqual({ header: base, reason: 'resume' })
    expect(decideHeader({ ...input, loggedThisInstance: false, epoch: 1 })).toEqual({ header: base, reason: 'resume', startsSeries: true })
  })

  it('writes change (with startsSeries at a boundary), series, or nothing', () => {
    const changed = { ...base, config: { ...base.config, model: 'mock-8k' } }
    expect(decideHeader({ ...input, header: changed })).toEqual({ header: changed, reason: 'change' })
    expect(decideHeader({ ...input, header: changed, epoch: 2, epochAtHeader: 1 })).toEqual({ header: changed, reason: 'change', startsSeries: true })
    expect(decideHeader({ ...input, epoch: 1 })).toEqual({ header: base, reason: 'series' })
    expect(decideHeader(input)).toBeNull()
  })

  it('has no series records in the rc.8 dialect (D-05)', () => {
    expect(decideHeader({ ...input, epoch: 1, dialect: 'dsh-0.1.0-rc.8' })).toBeNull()
    expect(decideHeader({ ...input, loggedThisInstance: false, epoch: 1, dialect: 'dsh-0.1.0-rc.8' })).toEqual({ header: base, reason: 'resume' })
  })
})
