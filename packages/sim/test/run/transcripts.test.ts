/**
 * Transcripts that behave like real sessions (issue 15, "Transcripts"), end to end through `runScenario`
 * over the in-process mock: tool results logged in the transcript's order (parallel calls answered out of
 * call order), results with `error` and `meta`, steering messages mid-turn, external JSONL transcript files
 * (larger than the 1 MiB scenario limit; a bad line exits 2 naming `file:line` and the field), and the
 * `shaped` generator. Every log is judged by the checker (the scenario passes only with every invariant held).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CapturedRequest, SessionEvent } from '@compaction-sim/core'
import { runScenario } from '../../src/run/run-scenario.ts'
import { scenarioTranscript, transcriptFromEvents } from '../../src/run/transcript.ts'
import type { ScenarioReport } from '../../src/report/types.ts'
import { loadScenario } from '../../src/scenario/load.ts'
import { resolveScenario } from '../../src/scenario/resolve.ts'
import { readTranscriptFile } from '../../src/scenario/transcript-file.ts'
import { missingFeatureReason } from '../../src/subjects/features.ts'
import { normalise, runSim, tempDir } from '../cli/run-sim.ts'

let tmp: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

const HEAD = `seed: 1
provider:
  wire: openai
  model: mock-128k
  contextWindow: 128000
`

/** Writes `yaml` as `<name>.yaml` in its own folder below the temp dir; returns the scenario path. */
async function scenarioFile(name: string, body: string, extra: Record<string, string> = {}): Promise<string> {
  const dir = join(tmp.dir, name)
  await mkdir(dir, { recursive: true })
  for (const [file, content] of Object.entries(extra)) await writeFile(join(dir, file), content)
  const path = join(dir, `${name}.yaml`)
  await writeFile(path, `name: ${name}\n${HEAD}${body}`)
  return path
}

interface Ran {
  report: ScenarioReport
  events: SessionEvent[]
  requests: CapturedRequest[]
}

async function run(path: string): Promise<Ran> {
  const outDir = join(tmp.dir, 'out')
  const report = await runScenario(path, { outDir, cwd: tmp.dir })
  const artifacts = report.artifacts
  if (artifacts === undefined) return { report, events: [], requests: [] }
  const lines = async (file: string): Promise<unknown[]> =>
    (await readFile(join(outDir, file), 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as unknown)
  return { report, events: await lines(artifacts.log) as SessionEvent[], requests: await lines(artifacts.requests) as CapturedRequest[] }
}

const ofType = <T extends SessionEvent['type']>(events: readonly SessionEvent[], type: T): Array<SessionEvent<T>> =>
  events.filter((e): e is SessionEvent<T> => e.type === type)

/** The `file:line…` problem lines of a failed `sim run`'s stderr (the one `error:` block), temp dir as `<tmp>`. */
const problemsOf = (stderr: string): string[] => normalise(stderr, { [tmp.dir]: '<tmp>' }).split('\n')
  .map((l) => l.replace(/^error: /, '')).filter((l) => l.startsWith('<tmp>/'))

const passed = (ran: Ran): void => {
  expect(ran.report.violations).toEqual([])
  expect(ran.report.error).toBeUndefined()
  expect(ran.report.status).toBe('passed')
}

/** The tool-result call ids of a request, in wire order. */
const wireResults = (request: CapturedRequest | undefined): string[] =>
  (request?.messages ?? []).flatMap((m) => m.content.flatMap((b) => (b.type === 'tool-result' ? [String(b.toolCallId)] : [])))

const PARALLEL = `transcript:
  inline:
    turns:
      - user: Read a.ts, b.ts and c.ts.
        steps:
          - reply:
              text: Reading all three in parallel.
              toolCalls:
                - { id: call_a, name: read, arguments: { path: a.ts } }
                - { id: call_b, name: read, arguments: { path: b.ts } }
                - { id: call_c, name: read, arguments: { path: c.ts } }
            toolResults:
              - { callId: call_c, content: 'export const c = 3' }
              - { callId: call_a, content: 'export const a = 1' }
              - { callId: call_b, content: 'export const b = 2' }
          - reply: a, b and c are constants.
expect:
  outcome: [completed]
`

describe('tool results are logged in the order the transcript gives', () => {
  it('parallel calls answered out of call order: every tool/call first, then the results c, a, b', async () => {
    const ran = await run(await scenarioFile('order-out-of-call-order', PARALLEL))
    passed(ran)
    expect(ofType(ran.events, 'tool/call').map((e) => e.data.callId)).toEqual(['call_a', 'call_b', 'call_c'])
    const results = ofType(ran.events, 'tool/result')
    expect(results.map((e) => e.data.message.source.callId)).toEqual(['call_c', 'call_a', 'call_b'])
    const lastCall = Math.max(...ofType(ran.events, 'tool/call').map((e) => e.seq))
    expect(results.every((r) => r.seq > lastCall)).toBe(true)
    const callSeq = new Map(ofType(ran.events, 'tool/call').map((e) => [String(e.data.callId), e.seq]))
    expect(results.map((r) => r.sourceEventSeqs)).toEqual(['call_c', 'call_a', 'call_b'].map((id) => [callSeq.get(id)]))
    expect(wireResults(ran.requests[1])).toEqual(['call_c', 'call_a', 'call_b'])
  })

  it('results given in call order keep sequential call/result pairs (the catalog\'s case)', async () => {
    const inOrder = PARALLEL.replace(/( {14}- \{ callId: call_c.*\n)(( {14}- .*\n){2})/, '$2$1')
    expect(inOrder).not.toBe(PARALLEL)
    const ran = await run(await scenarioFile('order-call-order', inOrder))
    passed(ran)
    const step = ran.events.filter((e) => e.type === 'tool/call' || e.type === 'tool/result').map((e) => e.type)
    expect(step).toEqual(['tool/call', 'tool/result', 'tool/call', 'tool/result', 'tool/call', 'tool/result'])
    expect(wireResults(ran.requests[1])).toEqual(['call_a', 'call_b', 'call_c'])
  })

  it('a recorded log replays with the logged order, and subjects without the feature skip the scenario', async () => {
    const path = await scenarioFile('order-replay', PARALLEL)
    const ran = await run(path)
    const replayed = transcriptFromEvents(ran.events)
    expect(replayed.turns[0]?.steps[0]?.toolResults.map((r) => r.callId)).toEqual(['call_c', 'call_a', 'call_b'])
    const scenario = resolveScenario(await loadScenario(path), { file: path })
    const subject = { name: 'plain', features: [] as const, runSession: () => { throw new Error('not run') } }
    expect(missingFeatureReason(scenario, subject)).toBeNull()
    expect(missingFeatureReason(scenario, subject, replayed)).toBe(
      'subject plain does not declare the feature this scenario needs: resultOrder (turn 1 step 1 gives its tool results out of call order)',
    )
  })
})

describe('results carry error and meta (§1.4.9)', () => {
  const body = `transcript:
  inline:
    turns:
      - user: Open the config and the lock file.
        steps:
          - reply:
              toolCalls:
                - { id: call_cfg, name: read, arguments: { path: config.json } }
                - { id: call_lock, name: read, arguments: { path: pnpm-lock.yaml } }
                - { id: call_tmp, name: read, arguments: { path: /tmp/x } }
            toolResults:
              - callId: call_cfg
                error: { code: ENOENT, name: FileNotFoundError, text: "ENOENT: no such file or directory, open 'config.json'" }
                meta: { durationMs: 3, exitCode: 2, host: ci-runner-7 }
              - { callId: call_lock, content: 'lockfileVersion: 9.0', meta: { durationMs: 41, bytes: 20 } }
              - { callId: call_tmp, error: permission denied }
          - reply: The config is missing and /tmp/x is not readable.
expect:
  outcome: [completed]
`
  it('logs error {name, code} and meta on tool/result; the model sees only content and isError', async () => {
    const ran = await run(await scenarioFile('error-meta', body))
    passed(ran)
    const [cfg, lock, tmpResult] = ofType(ran.events, 'tool/result')
    expect(cfg?.data.error).toEqual({ name: 'FileNotFoundError', code: 'ENOENT' })
    expect(cfg?.data.meta).toEqual({ durationMs: 3, exitCode: 2, host: 'ci-runner-7' })
    expect(cfg?.data.message.content[0]).toEqual({
      type: 'tool-result', toolCallId: 'call_cfg', isError: true,
      content: [{ type: 'text', text: "ENOENT: no such file or directory, open 'config.json'" }],
    })
    expect(lock?.data.error).toBeUndefined()
    expect(lock?.data.meta).toEqual({ durationMs: 41, bytes: 20 })
    expect(lock?.data.message.content[0]).toMatchObject({ isError: false })
    expect(tmpResult?.data.error).toEqual({ name: 'ToolError', code: 'TOOL_ERROR' })
    expect(tmpResult?.data.message.content[0]).toMatchObject({ isError: true, content: [{ type: 'text', text: 'permission denied' }] })
    expect(tmpResult?.data.meta).toBeUndefined()
    const wire = JSON.stringify(ran.requests[1]?.messages)
    expect(wire).toContain('no such file or directory')
    expect(wire).not.toContain('ci-runner-7')
    expect(wire).not.toContain('FileNotFoundError')
  })

  it('refuses a result with neither content nor error, an error with isError false, and error text next to content', async () => {
    const bad = body
      .replace("              - { callId: call_tmp, error: permission denied }", '              - { callId: call_tmp }')
      .replace("meta: { durationMs: 41, bytes: 20 } }", 'isError: false, error: EACCES }')
    const path = await scenarioFile('error-meta-bad', bad)
    const result = await runSim(['run', path, '--out-dir', join(tmp.dir, 'out-bad')])
    expect(result.exitCode).toBe(2)
    expect(problemsOf(result.stderr)).toEqual([
      '<tmp>/error-meta-bad/error-meta-bad.yaml:21:80: /transcript/inline/turns/0/steps/0/toolResults/1/isError is false, but the result has an error (an error result is always isError: true)',
      '<tmp>/error-meta-bad/error-meta-bad.yaml:21:94: /transcript/inline/turns/0/steps/0/toolResults/1/error gives the error text, and so does content: give the text in one of them',
      '<tmp>/error-meta-bad/error-meta-bad.yaml:22:17: /transcript/inline/turns/0/steps/0/toolResults/2 needs content or an error',
    ])
  })
})

describe('steering: a user message injected mid-turn', () => {
  const body = `transcript:
  inline:
    turns:
      - user: Fix the failing test in math.spec.ts.
        steps:
          - reply:
              toolCalls: [{ id: call_1, name: read, arguments: { path: math.spec.ts } }]
            toolResults: [{ content: 'expect(add(0.1, 0.2)).toBe(0.3)' }]
            steer: Stop — the bug is in add.ts, not in the test. Leave the test alone.
          - reply:
              toolCalls: [{ id: call_2, name: read, arguments: { path: add.ts } }]
            toolResults: [{ content: 'export const add = (a, b) => a + b' }]
          - reply: Understood; add.ts needs an epsilon comparison, the test stays.
      - user: Thanks.
        steps:
          - reply: You are welcome.
expect:
  outcome: [completed, completed]
`
  it('logs the steer as a user/message of the open turn after step/start of the next step, and the next request carries it', async () => {
    const path = await scenarioFile('steering-mid-turn', body)
    const ran = await run(path)
    passed(ran)
    const scenario = resolveScenario(await loadScenario(path), { file: path })
    const plain = { name: 'plain', features: ['crash'] as const, runSession: () => { throw new Error('not run') } }
    expect(missingFeatureReason(scenario, plain, await scenarioTranscript(scenario, 1))).toBe(
      'subject plain does not declare the feature this scenario needs: steering (turn 1 step 1 steers mid-turn)',
    )
    const users = ofType(ran.events, 'user/message')
    expect(users.map((u) => u.data.content)).toEqual([
      [{ type: 'text', text: 'Fix the failing test in math.spec.ts.' }],
      [{ type: 'text', text: 'Stop — the bug is in add.ts, not in the test. Leave the test alone.' }],
      [{ type: 'text', text: 'Thanks.' }],
    ])
    const steer = users[1] as SessionEvent<'user/message'>
    expect(steer.data.source).toEqual({ kind: 'user' })
    const before = ran.events[steer.seq - 1]
    expect(before).toMatchObject({ type: 'step/start', data: { turn: 1, step: 2 } })
    const turnEnd = ofType(ran.events, 'turn/end')[0]
    expect(steer.seq).toBeLessThan(turnEnd?.seq ?? 0)
    // Not in step 1's request; last in step 2's, right after the tool result it followed.
    const text = 'Stop — the bug is in add.ts'
    expect(JSON.stringify(ran.requests[0]?.messages)).not.toContain(text)
    const second = ran.requests[1]?.messages ?? []
    expect(second.slice(-2).map((m) => [m.role, m.content[0]?.type])).toEqual([['user', 'tool-result'], ['user', 'text']])
    expect(JSON.stringify(second.at(-1))).toContain(text)
    expect(ran.requests.map((r) => r.purpose)).toEqual(['conversation', 'conversation', 'conversation', 'conversation'])
    const replayed = transcriptFromEvents(ran.events)
    expect(replayed.turns[0]?.steps[0]?.steer).toEqual([{ type: 'text', text: 'Stop — the bug is in add.ts, not in the test. Leave the test alone.' }])
    expect(replayed.turns[0]?.user).toEqual([{ type: 'text', text: 'Fix the failing test in math.spec.ts.' }])
  })

  it('refuses a steer on the last step of a turn', async () => {
    const bad = body.replace('          - reply: You are welcome.', '          - reply: You are welcome.\n            steer: one more thing')
    const result = await runSim(['run', await scenarioFile('steering-last', bad), '--out-dir', join(tmp.dir, 'out-steer')])
    expect(result.exitCode).toBe(2)
    expect(problemsOf(result.stderr)).toEqual([
      '<tmp>/steering-last/steering-last.yaml:23:20: /transcript/inline/turns/1/steps/0/steer is on the last step of its turn: a steering message '
        + 'arrives before the next step\'s request, and this turn has none (put it in the next turn\'s user input, or on an earlier step)',
    ])
  })
})

/** One JSONL turn line of a read whose result carries `metaChars` characters of metadata (not priced, not sent). */
function turnLine(t: number, metaChars: number): string {
  const meta = metaChars > 0 ? { trace: 'x'.repeat(metaChars) } : { durationMs: t }
  return JSON.stringify({
    user: `Turn ${t}: read notes-${t}.md.`,
    steps: [
      { reply: { toolCalls: [{ id: `call_${t}`, name: 'read', arguments: { path: `notes-${t}.md` } }] }, toolResults: [{ content: `notes ${t}`, meta }] },
      { reply: `Read notes ${t}.` },
    ],
  })
}

describe('external transcript files (transcript.file, JSONL)', () => {
  const header = JSON.stringify({ systemPrompt: 'You are terse.', tools: [{ name: 'read', description: 'Read a file.' }], facts: ['notes'] })

  it('replays a JSONL file larger than the 1 MiB scenario limit, header first', async () => {
    const lines = [header, turnLine(1, 0), turnLine(2, 1_200_000), turnLine(3, 0)]
    const jsonl = `${lines.join('\n')}\n`
    expect(Buffer.byteLength(jsonl)).toBeGreaterThan(1024 * 1024)
    const path = await scenarioFile('file-transcript', 'transcript:\n  file: long-session.jsonl\nexpect:\n  outcome: [completed, completed, completed]\n', {
      'long-session.jsonl': jsonl,
    })
    const ran = await run(path)
    passed(ran)
    expect(ofType(ran.events, 'system/message')[0]?.data.content).toEqual([{ type: 'text', text: 'You are terse.' }])
    expect(ofType(ran.events, 'tool/result').map((r) => (r.data.meta as { trace?: string } | undefined)?.trace?.length ?? 0)).toEqual([0, 1_200_000, 0])
    expect(ran.requests[0]?.tools).toEqual([{ name: 'read', description: 'Read a file.', parameters: { type: 'object' } }])
    const transcript = await readTranscriptFile(join(tmp.dir, 'file-transcript', 'long-session.jsonl'), 'long-session.jsonl')
    expect(transcript.facts).toEqual(['notes'])
    expect(transcript.turns).toHaveLength(3)
  })

  it('a file without a header line gets the tools its replies call; CRLF line ends are accepted', async () => {
    const path = join(tmp.dir, 'plain.jsonl')
    await writeFile(path, `${turnLine(1, 0)}\r\n${turnLine(2, 0)}`)
    const transcript = await readTranscriptFile(path, 'plain.jsonl')
    expect(transcript.systemPrompt).toBe('')
    expect(transcript.tools.map((t) => t.name)).toEqual(['read'])
    expect(transcript.turns.map((t) => t.steps.length)).toEqual([2, 2])
  })

  it('a bad line exits 2 naming file:line and the field', async () => {
    const badCall = JSON.stringify({
      user: 'go', steps: [{ reply: { toolCalls: [{ name: 'read' }] }, toolResults: [{ callId: 'nope', content: 'x' }] }, { reply: 'ok' }],
    })
    const lines = [header, turnLine(1, 0), badCall, '{"user": 5, "steps": [{"reply": "hi"}]}', '', '{not json', turnLine(1, 0)]
    const path = await scenarioFile('file-bad-lines', 'transcript:\n  file: sessions/bad.jsonl\n', {})
    await mkdir(join(tmp.dir, 'file-bad-lines', 'sessions'), { recursive: true })
    await writeFile(join(tmp.dir, 'file-bad-lines', 'sessions', 'bad.jsonl'), `${lines.join('\n')}\n`)
    const result = await runSim(['run', path, '--out-dir', join(tmp.dir, 'out-file-bad')])
    expect(result.exitCode).toBe(2)
    expect(problemsOf(result.stderr)).toEqual([
      '<tmp>/file-bad-lines/sessions/bad.jsonl:3: /steps/0/toolResults/0/callId names no tool call of this reply (got "nope")',
      '<tmp>/file-bad-lines/sessions/bad.jsonl:4: /user must be string or array (got 5)',
      '<tmp>/file-bad-lines/sessions/bad.jsonl:5: is empty (one JSON object per line, no blank lines)',
      expect.stringMatching(/^<tmp>\/file-bad-lines\/sessions\/bad\.jsonl:6: is not JSON: /),
      '<tmp>/file-bad-lines/sessions/bad.jsonl:7: /steps/0/reply/toolCalls/0 repeats the tool call id "call_1" of line 2 /steps/0/reply/toolCalls/0',
    ])
  })

  it('refuses a file outside the scenario folder at load (file:line:column of the field), and a missing file', async () => {
    const escape = await runSim(['run', await scenarioFile('file-escape', 'transcript:\n  file: ../elsewhere.jsonl\n'), '--out-dir', join(tmp.dir, 'o1')])
    expect(escape.exitCode).toBe(2)
    expect(problemsOf(escape.stderr)).toEqual([
      '<tmp>/file-escape/file-escape.yaml:8:9: /transcript/file escapes the scenario\'s folder (got "../elsewhere.jsonl"): use a path inside '
        + 'the folder of the scenario file, or "fixtures:<path>" for packages/fixtures/transcripts',
    ])
    const missing = await runSim(['run', await scenarioFile('file-missing', 'transcript:\n  file: none.jsonl\n'), '--out-dir', join(tmp.dir, 'o2')])
    expect(missing.exitCode).toBe(2)
    expect(problemsOf(missing.stderr)).toEqual([
      expect.stringMatching(/^<tmp>\/file-missing\/file-missing\.yaml:8:9: \/transcript\/file names a file that cannot be read \(got "none\.jsonl"\): ENOENT/),
    ])
  })

  it('refuses invalid UTF-8 at its line and stops after 50 problems', async () => {
    const path = join(tmp.dir, 'utf8.jsonl')
    await writeFile(path, Buffer.concat([Buffer.from(`${turnLine(1, 0)}\n{"user": "`), Buffer.from([0xc3, 0x28]), Buffer.from('", "steps": []}\n')]))
    await expect(readTranscriptFile(path, 'utf8.jsonl')).rejects.toThrow(/^utf8\.jsonl:2: is not valid UTF-8$/)
    const many = join(tmp.dir, 'many.jsonl')
    await writeFile(many, `${Array.from({ length: 80 }, () => '[]').join('\n')}\n`)
    const error = await readTranscriptFile(many, 'many.jsonl').catch((e: unknown) => e as Error)
    const lines = String((error as Error).message).split('\n')
    expect(lines).toHaveLength(51)
    expect(lines.at(-1)).toBe('many.jsonl:50: stopped reading after 50 problems')
  })
})

describe('the shaped generator in a scenario', () => {
  it('runs explicit turn shapes: parallel calls with given sizes in reverse order, images with given bytes, dense CJK text', async () => {
    const body = `transcript:
  generate:
    generator: shaped
    turns: 2
    params:
      shapes:
        - { parallelCalls: 3, resultTokens: [200, 800, 50], resultOrder: reverse, errorCalls: [2] }
        - { images: 2, imageBytes: 800000, text: dense-cjk, userTokens: 400 }
expect:
  outcome: [completed, completed]
`
    const ran = await run(await scenarioFile('shaped-turns', body))
    passed(ran)
    const results = ofType(ran.events, 'tool/result')
    expect(results.map((r) => r.data.message.source.callId)).toEqual(['call_1_1_3', 'call_1_1_2', 'call_1_1_1'])
    expect(results.map((r) => r.data.error?.code ?? null)).toEqual([null, 'TOOL_FAILED', null])
    expect(results.map((r) => r.data.meta)).toEqual([
      { shape: 0, call: 3, resultTokens: 50 }, { shape: 0, call: 2, resultTokens: 800 }, { shape: 0, call: 1, resultTokens: 200 },
    ])
    const user2 = ofType(ran.events, 'user/message')[1]?.data.content ?? []
    expect(user2.filter((b) => b.type === 'image').map((b) => (b as { attachment: { bytes: number } }).attachment.bytes)).toEqual([800000, 800000])
    expect(String((user2[0] as { text: string }).text).length).toBe(1600)
  })

  it('a bad shape is a load error at its YAML path', async () => {
    const body = `transcript:
  generate:
    generator: shaped
    turns: 2
    params:
      shapes:
        - { parallelCalls: 3, resultTokens: [200, 8000] }
`
    const result = await runSim(['run', await scenarioFile('shaped-bad', body), '--out-dir', join(tmp.dir, 'o3')])
    expect(result.exitCode).toBe(2)
    expect(problemsOf(result.stderr)).toEqual([
      '<tmp>/shaped-bad/shaped-bad.yaml:13:45: /transcript/generate/params/shapes/0/resultTokens lists 2 sizes for 3 parallel calls; '
        + 'give one per call or a single number',
    ])
  })
})
