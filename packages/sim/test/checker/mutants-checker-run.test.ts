/**
 * The checker's entry point `checkLog` (`src/checker/run.ts`): how input failures and internal failures become
 * results, and how the report is assembled. Every expectation is written out by hand from §1.1, §12 and the
 * module's documented contract (`checkLog` never rejects). It pins:
 * - an invalid world record value is a `WORLD` input error naming `<world record>` with at most five schema
 *   problems joined by `; `, the `WorldRecordError` kept as the cause; an unreadable world record path is a
 *   `WORLD` input error naming that path;
 * - an unreadable manifest path is the `MANIFEST` input error as thrown; `manifest: null` disables discovery;
 * - a log that cannot be read, or has a corrupt non-final line, is a `LOG` input error naming `file` (and line),
 *   the `LogError` kept as the cause; a torn final line is reported as `tornTail`, not counted as an event;
 * - an untyped failure (while resolving inputs or reading events) is a report with one `model` internal error
 *   `Name: message`, `ok: false`, and every other field at its empty value;
 * - a request capture value is validated with 1-based element numbers;
 * - without `knownTypes`, no extra type is known;
 * - `ok` is true only with no violations.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CheckInputError } from '../../src/checker/run-inputs.ts'
import { checkLog, type CheckResult } from '../../src/checker/run.ts'
import { WorldRecordError } from '../../src/world/record-file.ts'
import { appendixB, reportOf } from './support.ts'

let dir = ''
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'checker-run-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** The input error of a result, failing the test when it is a report. */
function inputErrorOf(result: CheckResult): CheckInputError {
  if (result.kind !== 'input-error') throw new Error(`expected an input error, got a report: ${JSON.stringify(result.violations)}`)
  expect(result.error).toBeInstanceOf(CheckInputError)
  return result.error
}

describe('world record inputs', () => {
  it('an invalid world record value is a WORLD input error naming <world record> with the first five schema problems', async () => {
    const result = await checkLog(appendixB(), { dialect: 'seed', world: {} as never })
    expect(result.kind).toBe('input-error')
    expect(result.path).toBeNull()
    expect(result.dialect).toBe('seed')
    const error = inputErrorOf(result)
    const reason = 'not a world record: / must have required property \'schemaVersion\'; / must have required property \'kind\'; '
      + '/ must have required property \'wire\'; / must have required property \'captureOffset\'; / must have required property \'logOffset\''
    expect(error.code).toBe('WORLD')
    expect(error.file).toBe('<world record>')
    expect(error.line).toBeNull()
    expect(error.reason).toBe(reason)
    expect(error.message).toBe(`<world record>: ${reason}`)
    expect(error.cause).toBeInstanceOf(WorldRecordError)
    expect((error.cause as WorldRecordError).message).toBe(`<world record>: ${reason}`)
  })

  it('an unreadable world record path is a WORLD input error naming that path', async () => {
    const file = join(dir, 'missing.world.json')
    const result = await checkLog(appendixB(), { dialect: 'seed', world: file })
    const error = inputErrorOf(result)
    expect(error.code).toBe('WORLD')
    expect(error.file).toBe(file)
    expect(error.line).toBeNull()
    expect(error.reason).toBe(`cannot read the world record: ENOENT: no such file or directory, open '${file}'`)
    expect(error.cause).toBeInstanceOf(WorldRecordError)
  })
})

describe('manifest inputs', () => {
  it('an unreadable manifest path is the MANIFEST input error, with path and dialect of the call', async () => {
    const file = join(dir, 'm.json')
    const result = await checkLog(appendixB(), { dialect: 'seed', manifest: file })
    expect(result.kind).toBe('input-error')
    expect(result.path).toBeNull()
    expect(result.dialect).toBe('seed')
    const error = inputErrorOf(result)
    expect(error.code).toBe('MANIFEST')
    expect(error.message).toBe(`${file}: cannot read the run manifest: ENOENT: no such file or directory, open '${file}'`)
  })

  it('manifest: null disables discovery next to a log path (a broken run-manifest.json is not read)', async () => {
    const log = join(dir, 'run.jsonl')
    await writeFile(log, '')
    await writeFile(join(dir, 'run-manifest.json'), 'not json')
    const report = reportOf(await checkLog(log, { dialect: 'seed', manifest: null }))
    expect(report.policySource).toBe('defaults')
    expect(report.manifestPath).toBeNull()
    expect(report.internalErrors).toEqual([])
  })
})

describe('log read failures', () => {
  it('a missing log file is a LOG input error naming the file, the LogError kept as the cause', async () => {
    const log = join(dir, 'none.jsonl')
    const result = await checkLog(log, { dialect: 'seed' })
    expect(result.kind).toBe('input-error')
    expect(result.path).toBe(log)
    const error = inputErrorOf(result)
    expect(error.code).toBe('LOG')
    expect(error.file).toBe(log)
    expect(error.line).toBeNull()
    expect(error.message).toBe(`${log}: cannot read the log: ENOENT: no such file or directory, open '${log}'`)
    expect((error.cause as Error).name).toBe('LogError')
  })

  it('a corrupt line before the last is a LOG input error at file:line', async () => {
    const log = join(dir, 'corrupt.jsonl')
    await writeFile(log, 'garbage\n{}\n')
    const error = inputErrorOf(await checkLog(log, { dialect: 'seed' }))
    expect(error.code).toBe('LOG')
    expect(error.file).toBe(log)
    expect(error.line).toBe(1)
    expect(error.message.startsWith(`${log}:1: `)).toBe(true)
    expect((error.cause as Error).name).toBe('LogError')
  })

  it('a torn final line is the report\'s tornTail and is not counted as an event', async () => {
    const log = join(dir, 'torn.jsonl')
    await writeFile(log, 'garbage\n')
    const report = reportOf(await checkLog(log, { dialect: 'seed' }))
    expect(report.events).toBe(0)
    expect(report.tornTail).toEqual({ line: 1, reason: 'not valid JSON: Unexpected token \'g\', "garbage" is not valid JSON' })
    expect(report.violations).toEqual([])
    expect(report.ok).toBe(true)
  })
})

describe('internal failures', () => {
  const empty = {
    kind: 'report', path: null, dialect: 'seed', events: 0, ok: false, policySource: 'defaults', manifestPath: null,
    violations: [], suppressed: 0, coverage: [], tornTail: null, meterTaint: null,
  }

  it('an untyped failure while resolving inputs is a report with one model internal error (Name: message)', async () => {
    const result = await checkLog(appendixB(), { dialect: 'seed', requests: {} as never })
    expect(result).toEqual({ ...empty, internalErrors: [{ id: 'model', message: 'TypeError: given.map is not a function' }] })
  })

  it('an untyped failure while reading events is a report with one model internal error, not a rejection', async () => {
    function* throwing(): Generator<unknown> {
      yield 1
      throw new RangeError('boom')
    }
    const result = await checkLog(throwing(), { dialect: 'seed' })
    expect(result).toEqual({ ...empty, internalErrors: [{ id: 'model', message: 'RangeError: boom' }] })
  })

  it('a non-Error failure is reported by its string form', async () => {
    const throwing: Iterable<unknown> = {
      [Symbol.iterator]: () => {
        throw 'plain' as unknown as Error
      },
    }
    const result = await checkLog(throwing, { dialect: 'seed' })
    expect(result).toEqual({ ...empty, internalErrors: [{ id: 'model', message: 'plain' }] })
  })
})

describe('request capture values', () => {
  it('an invalid capture element is a CAPTURE input error at its 1-based element number', async () => {
    const good = appendixB()
    const error = inputErrorOf(await checkLog(good, { dialect: 'seed', requests: [{} as never] }))
    expect(error.line).toBe(1)
    expect(error.file).toBeNull()
  })
})

describe('known types and ok', () => {
  it('without knownTypes, an unlisted type is judged like any other unknown type', async () => {
    const events = (type: string) => {
      const e = appendixB()
      e.push({ seq: e.length, type, data: {} } as never)
      return e
    }
    const plain = reportOf(await checkLog(events('Stryker was here'), { dialect: 'seed' }))
    expect(plain.ok).toBe(false)
    expect(plain.violations.length).toBeGreaterThan(0)
    const unknown = reportOf(await checkLog(events('x/custom'), { dialect: 'seed' }))
    expect(unknown.violations.map((v) => `${v.id}@${v.seq}`)).toEqual(plain.violations.map((v) => `${v.id}@${v.seq}`))
  })

  it('ok is true for the clean Appendix B log and false when anything is violated', async () => {
    const clean = reportOf(await checkLog(appendixB(), { dialect: 'seed' }))
    expect(clean.violations).toEqual([])
    expect(clean.ok).toBe(true)
    const bad = reportOf(await checkLog([1, 2] as never, { dialect: 'seed' }))
    expect(bad.violations.map((v) => `${v.id}@${v.seq}: ${v.message}`)).toEqual([
      'INV-02@0: expected an event object, got number', 'INV-02@1: expected an event object, got number',
    ])
    expect(bad.suppressed).toBe(0)
    expect(bad.internalErrors).toEqual([])
    expect(bad.ok).toBe(false)
  })
})
