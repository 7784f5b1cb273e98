import { LogError } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { ExitCode, UsageError, classifyError } from '../../src/cli/exit-codes.ts'

describe('classifyError', () => {
  it('maps the exit-code contract of design §5', () => {
    expect(ExitCode).toEqual({ Ok: 0, Failed: 1, Usage: 2, Internal: 3 })
  })

  it('a usage error exits 2 with its message', () => {
    expect(classifyError(new UsageError('Unknown argument: bogus'))).toEqual({
      exitCode: 2, message: 'Unknown argument: bogus', internal: false,
    })
  })

  it('a core LogError exits 2 with its file:line message', () => {
    const error = new LogError('CORRUPT_LINE', 'not JSON', { file: 'a.jsonl', line: 3 })
    expect(classifyError(error)).toEqual({ exitCode: 2, message: 'a.jsonl:3: not JSON', internal: false })
  })

  it('anything else is an internal error, exit 3', () => {
    expect(classifyError(new TypeError('x is undefined'))).toEqual({
      exitCode: 3, message: 'TypeError: x is undefined', internal: true,
    })
    expect(classifyError('thrown string')).toEqual({ exitCode: 3, message: 'thrown string', internal: true })
  })
})
