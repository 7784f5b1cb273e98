/**
 * What a check run reads besides the log (`src/checker/run-inputs.ts`, lines 1–149), through its exported
 * functions and `checkLog`, with temporary files. Every expectation is written out by hand from §1.1, §3.2,
 * §5.1, §12.0 and the module's documented contract. It pins:
 * - `CheckInputError`: its name, and the `file:line: reason` / `file: reason` / `reason` message forms;
 * - `discoverManifest` (§1.1): `<stem>.manifest.json` with only a trailing `.jsonl`/`.jsonl.zst(d)` stripped,
 *   then `run-manifest.json` in the log's folder;
 * - `loadManifest`: an unreadable file and a non-JSON file are `MANIFEST` input errors naming the file, with the
 *   underlying error as the cause;
 * - `validateManifest`: each field rule (root object, scenario, compaction, pruner, routes and their
 *   `contextWindow`, faults, crashes, the explicit seq lists), each error naming the field; absent optional
 *   fields are accepted and normalised;
 * - `resolveRunInputs`: a §3.2 or §5.1 rejection becomes a `MANIFEST` input error naming the manifest (cause
 *   kept), any other failure is rethrown as is; only routes with a `contextWindow` give a manifest capacity.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CompactionConfigError, PruneConfigError, type RunManifest } from '@compaction-sim/core'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  CheckInputError, discoverManifest, loadManifest, resolveRunInputs, validateManifest,
} from '../../src/checker/run-inputs.ts'
import { checkLog } from '../../src/checker/run.ts'

let dir = ''
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'run-inputs-a-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** The `CheckInputError` that `run` throws (synchronously or as a rejection); fails the test otherwise. */
async function inputErrorOf(run: () => unknown): Promise<CheckInputError> {
  try {
    await run()
  } catch (error) {
    expect(error).toBeInstanceOf(CheckInputError)
    return error as CheckInputError
  }
  throw new Error('expected a CheckInputError, nothing was thrown')
}

/** The message `validateManifest` gives for `field` (§1.1), under `file` (null: none). */
const fieldError = (file: string | null, field: string, what: string): string =>
  `${file === null ? '' : `${file}: `}field ${field}: expected ${what} (run manifest, §1.1)`

const MANIFEST_FILE = '/runs/a.manifest.json'

describe('CheckInputError: name and the file:line message forms', () => {
  it('is named CheckInputError', () => {
    expect(new CheckInputError('LOG', 'truncated', 'a.jsonl', 3).name).toBe('CheckInputError')
  })

  it('file and line: "file:line: reason"', () => {
    const e = new CheckInputError('LOG', 'truncated', 'a.jsonl', 3)
    expect(e.message).toBe('a.jsonl:3: truncated')
    expect([e.code, e.file, e.line, e.reason]).toEqual(['LOG', 'a.jsonl', 3, 'truncated'])
  })

  it('a file but no line: "file: reason"', () => {
    expect(new CheckInputError('MANIFEST', 'not JSON', 'm.json').message).toBe('m.json: not JSON')
    expect(new CheckInputError('MANIFEST', 'not JSON', 'm.json', null).message).toBe('m.json: not JSON')
  })

  it('no file: the reason alone, even when a line is given', () => {
    expect(new CheckInputError('REQUESTS', 'bad request', null).message).toBe('bad request')
    expect(new CheckInputError('REQUESTS', 'bad request', null, 4).message).toBe('bad request')
  })
})

describe('discoverManifest: the §1.1 candidates next to the log', () => {
  it('strips only a trailing .jsonl: run.jsonl.bak looks for run.jsonl.bak.manifest.json', async () => {
    await writeFile(join(dir, 'run.jsonl.bak.manifest.json'), '{}')
    await writeFile(join(dir, 'run.bak.manifest.json'), '{}')
    expect(await discoverManifest(join(dir, 'run.jsonl.bak'))).toBe(join(dir, 'run.jsonl.bak.manifest.json'))
  })

  it('strips .jsonl.zst: run.jsonl.zst looks for run.manifest.json', async () => {
    await writeFile(join(dir, 'run.manifest.json'), '{}')
    expect(await discoverManifest(join(dir, 'run.jsonl.zst'))).toBe(join(dir, 'run.manifest.json'))
  })

  it('falls back to run-manifest.json in the folder', async () => {
    await writeFile(join(dir, 'run-manifest.json'), '{}')
    expect(await discoverManifest(join(dir, 'run.jsonl'))).toBe(join(dir, 'run-manifest.json'))
  })

  it('a directory named like a candidate is no manifest: null', async () => {
    await mkdir(join(dir, 'run.manifest.json'))
    expect(await discoverManifest(join(dir, 'run.jsonl'))).toBeNull()
  })

  it('checkLog finds run-manifest.json for a log path and reports it as the policy source', async () => {
    const manifest = join(dir, 'run-manifest.json')
    await writeFile(manifest, JSON.stringify({ scenario: 's', compaction: {}, routes: [], faults: [] }))
    const log = join(dir, 'run.jsonl')
    await writeFile(log, '')
    const r = await checkLog(log, { dialect: 'seed' })
    expect(r.kind).toBe('report')
    if (r.kind !== 'report') return
    expect([r.policySource, r.manifestPath]).toEqual(['manifest', manifest])
  })
})

describe('loadManifest: unreadable and non-JSON files are MANIFEST input errors naming the file', () => {
  it('a missing file: "cannot read the run manifest", the fs error as the cause', async () => {
    const path = join(dir, 'missing.manifest.json')
    const e = await inputErrorOf(() => loadManifest(path))
    expect(e.message).toBe(`${path}: cannot read the run manifest: ENOENT: no such file or directory, open '${path}'`)
    expect([e.code, e.file, e.line]).toEqual(['MANIFEST', path, null])
    expect((e.cause as NodeJS.ErrnoException).code).toBe('ENOENT')
  })

  it('a file that is not JSON: "the run manifest is not JSON", the SyntaxError as the cause', async () => {
    const path = join(dir, 'bad.manifest.json')
    await writeFile(path, 'not json')
    const e = await inputErrorOf(() => loadManifest(path))
    expect(e.cause).toBeInstanceOf(SyntaxError)
    expect(e.message).toMatch(/ is not valid JSON$/)
    expect(e.message).toBe(`${path}: the run manifest is not JSON: ${(e.cause as SyntaxError).message}`)
    expect([e.code, e.file, e.line]).toEqual(['MANIFEST', path, null])
  })

  it('a JSON file that is no object: the (root) field error naming the file', async () => {
    const path = join(dir, 'list.manifest.json')
    await writeFile(path, '[1]')
    const e = await inputErrorOf(() => loadManifest(path))
    expect(e.message).toBe(fieldError(path, '(root)', 'one JSON object'))
  })

  it('checkLog with a manifest path that does not exist: an input error, not a report', async () => {
    const path = join(dir, 'nope.json')
    const r = await checkLog([], { dialect: 'seed', manifest: path })
    expect(r.kind).toBe('input-error')
    if (r.kind !== 'input-error') return
    expect(r.error.message).toBe(`${path}: cannot read the run manifest: ENOENT: no such file or directory, open '${path}'`)
  })
})

describe('validateManifest: each §1.1 field rule names its field', () => {
  const bad = async (raw: unknown, file: string | null = MANIFEST_FILE): Promise<string> =>
    (await inputErrorOf(() => validateManifest(raw, file))).message

  it('the root must be one JSON object', async () => {
    const e = await inputErrorOf(() => validateManifest(42, MANIFEST_FILE))
    expect([e.code, e.file, e.line]).toEqual(['MANIFEST', MANIFEST_FILE, null])
    expect(e.message).toBe(fieldError(MANIFEST_FILE, '(root)', 'one JSON object'))
    expect(await bad([], null)).toBe(fieldError(null, '(root)', 'one JSON object'))
  })

  it('scenario must be a string', async () => {
    expect(await bad({ scenario: 5 })).toBe(fieldError(MANIFEST_FILE, 'scenario', 'a string'))
  })

  it('compaction must be an object', async () => {
    expect(await bad({ compaction: 'auto' })).toBe(fieldError(MANIFEST_FILE, 'compaction', 'an object (BasicCompactionConfig)'))
  })

  it('pruner must be an object', async () => {
    expect(await bad({ pruner: [1] })).toBe(fieldError(MANIFEST_FILE, 'pruner', 'an object (ToolResultPruneConfig)'))
  })

  it('routes must be an array of {provider, model}', async () => {
    expect(await bad({ routes: { provider: 'p', model: 'm' } })).toBe(fieldError(MANIFEST_FILE, 'routes', 'an array'))
    expect(await bad({ routes: [{ provider: 'p', model: 'm' }, { provider: 'p', model: 7 }] }))
      .toBe(fieldError(MANIFEST_FILE, 'routes[1]', '{provider, model, contextWindow?, imageTokens?}'))
    // A route that is not an object (null would throw on a field read) and one whose provider is not a string.
    expect(await bad({ routes: [{ provider: 'p', model: 'm' }, null] }))
      .toBe(fieldError(MANIFEST_FILE, 'routes[1]', '{provider, model, contextWindow?, imageTokens?}'))
    expect(await bad({ routes: [{ provider: 'p', model: 'm' }, { provider: 7, model: 'm' }] }))
      .toBe(fieldError(MANIFEST_FILE, 'routes[1]', '{provider, model, contextWindow?, imageTokens?}'))
  })

  it('a route contextWindow must be a positive integer', async () => {
    expect(await bad({ routes: [{ provider: 'p', model: 'm', contextWindow: 10 }, { provider: 'p', model: 'n', contextWindow: 0 }] }))
      .toBe(fieldError(MANIFEST_FILE, 'routes[1].contextWindow', 'a positive integer'))
  })

  it('faults must be an array of FaultSpecs with a string kind and target', async () => {
    expect(await bad({ faults: 'none' })).toBe(fieldError(MANIFEST_FILE, 'faults', 'an array'))
    expect(await bad({ faults: [{ id: 'f1', kind: 'drop', target: 'x' }, { id: 'f2', kind: 3, target: 'x' }] }))
      .toBe(fieldError(MANIFEST_FILE, 'faults[1]', 'a FaultSpec {id, kind, target, when}'))
    expect(await bad({ faults: [{ id: 'f1', kind: 'drop', target: 'x' }, { id: 'f2', kind: 'drop', target: null }] }))
      .toBe(fieldError(MANIFEST_FILE, 'faults[1]', 'a FaultSpec {id, kind, target, when}'))
  })

  it('crashes must be an array of {afterSeq: seq}', async () => {
    expect(await bad({ crashes: 7 })).toBe(fieldError(MANIFEST_FILE, 'crashes', 'an array'))
    expect(await bad({ crashes: [{ afterSeq: 3 }, { afterSeq: -1 }] })).toBe(fieldError(MANIFEST_FILE, 'crashes[1].afterSeq', 'a seq'))
  })

  it('explicitRegionStarts and explicitSeriesHeaders must be arrays of seqs', async () => {
    expect(await bad({ explicitRegionStarts: [1, -2] })).toBe(fieldError(MANIFEST_FILE, 'explicitRegionStarts', 'an array of seqs'))
    expect(await bad({ explicitSeriesHeaders: [0, 1.5] })).toBe(fieldError(MANIFEST_FILE, 'explicitSeriesHeaders', 'an array of seqs'))
    expect(await bad({ explicitSeriesHeaders: 4 })).toBe(fieldError(MANIFEST_FILE, 'explicitSeriesHeaders', 'an array of seqs'))
  })

  it('an empty object is a valid manifest: scenario "", compaction {}, no routes, no faults', () => {
    expect(validateManifest({}, MANIFEST_FILE)).toEqual({ scenario: '', compaction: {}, routes: [], faults: [] })
  })

  it('valid fields are kept as given', () => {
    const raw = {
      scenario: 's', compaction: { auto: false }, pruner: { headChars: 10 },
      routes: [{ provider: 'p', model: 'm', contextWindow: 100 }], faults: [{ id: 'f', kind: 'k', target: 't', when: {} }],
      crashes: [{ afterSeq: 0 }], explicitRegionStarts: [0, 4], explicitSeriesHeaders: [],
    }
    expect(validateManifest(raw, null)).toEqual(raw)
  })
})

describe('resolveRunInputs: §3.2 / §5.1 rejections as MANIFEST input errors, manifest capacities', () => {
  const manifest = (fields: Partial<RunManifest>): RunManifest => ({ scenario: 's', compaction: {}, routes: [], faults: [], ...fields })

  it('a compaction config §3.2 rejects names the manifest, the CompactionConfigError as the cause', async () => {
    const m = manifest({ compaction: { auto: 'yes' } as unknown as RunManifest['compaction'] })
    const e = await inputErrorOf(() => resolveRunInputs(m, MANIFEST_FILE, 'seed'))
    expect(e.message).toBe(`${MANIFEST_FILE}: compaction: invalid compaction config: auto must be a boolean, got "yes" (§3.2 rule 3)`)
    expect([e.code, e.file, e.line]).toEqual(['MANIFEST', MANIFEST_FILE, null])
    expect(e.cause).toBeInstanceOf(CompactionConfigError)
  })

  it('a pruner config §5.1 rejects names the manifest, the PruneConfigError as the cause', async () => {
    const m = manifest({ pruner: { thresholdChars: 0 } })
    const e = await inputErrorOf(() => resolveRunInputs(m, MANIFEST_FILE, 'seed'))
    expect(e.message).toBe(`${MANIFEST_FILE}: pruner: pruner config thresholdChars: must be a positive integer, got 0 (§5.1)`)
    expect([e.code, e.file, e.line]).toEqual(['MANIFEST', MANIFEST_FILE, null])
    expect(e.cause).toBeInstanceOf(PruneConfigError)
  })

  it('an error that is no §3.2 rejection while reading compaction is rethrown as is', () => {
    const boom = new Error('boom')
    const compaction = { get auto(): boolean { throw boom } }
    const m = manifest({ compaction: compaction as unknown as RunManifest['compaction'] })
    expect(() => resolveRunInputs(m, MANIFEST_FILE, 'seed')).toThrow(boom)
  })

  it('an error that is no §5.1 rejection while reading the pruner is rethrown as is', () => {
    const boom = new Error('boom')
    const pruner = { get thresholdChars(): number { throw boom } }
    const m = manifest({ pruner: pruner as unknown as NonNullable<RunManifest['pruner']> })
    expect(() => resolveRunInputs(m, MANIFEST_FILE, 'seed')).toThrow(boom)
  })

  it('only routes with a contextWindow give a manifest capacity', () => {
    const m = manifest({ routes: [{ provider: 'mock', model: 'small' }, { provider: 'mock', model: 'big', contextWindow: 4000 }] })
    expect([...resolveRunInputs(m, MANIFEST_FILE, 'seed').manifestCapacity]).toEqual([['mock\u0000big', 4000]])
  })

  it('no manifest: no capacities, the defaults as the policy source', () => {
    const inputs = resolveRunInputs(null, null, 'seed')
    expect([...inputs.manifestCapacity]).toEqual([])
    expect([inputs.policySource, inputs.manifestPath, inputs.manifest]).toEqual(['defaults', null, null])
  })
})
