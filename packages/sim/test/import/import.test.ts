/**
 * `sim import` and the `transcript: {import}` source (issue #20 "Importers"): every format imports each of
 * its fixture files (packages/fixtures/imports, DSH from the recorded logs) into a scenario that keeps images
 * as attachment references and parallel calls, lists what it dropped (stderr and header comment), and runs
 * through `sim run` with the checker clean (reference; DSH for the fixtures it supports); a malformed file of
 * each format exits 2 naming `file:line` or the JSON path and the field; the generated 500-turn sessions
 * import with every turn, call, text character and image byte kept (import only: no run).
 */
import { copyFile, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ContentBlock } from '@compaction-sim/core'
import type { Transcript } from '@compaction-sim/fixtures'
import { IMPORT_FORMATS, importSession, type ImportFormat } from '../../src/import/index.ts'
import { scenarioTranscript } from '../../src/run/transcript.ts'
import { loadScenario } from '../../src/scenario/load.ts'
import { resolveScenario } from '../../src/scenario/resolve.ts'
import { REPO_ROOT, runSim, tempDir } from '../cli/run-sim.ts'
import { writeLongSession, type LongSessionFacts } from './long-sessions.ts'

const FIXTURES = join(REPO_ROOT, 'packages/fixtures/imports')
const DSH_LOGS = join(REPO_ROOT, 'packages/fixtures/transcripts/recorded/dsh-0.1.0-rc.8')

/** Each format's fixture files; the first one has tool calls and images. */
const FIXTURE_FILES: Record<ImportFormat, readonly string[]> = {
  'openai-chat': [join(FIXTURES, 'openai-chat/tools-images.json'), join(FIXTURES, 'openai-chat/plain.json')],
  'openai-responses': [join(FIXTURES, 'openai-responses/tools-images.json'), join(FIXTURES, 'openai-responses/plain.json')],
  'anthropic-messages': [join(FIXTURES, 'anthropic-messages/tools-images.json'), join(FIXTURES, 'anthropic-messages/plain.json')],
  'claude-code': [join(FIXTURES, 'claude-code/tools-images.jsonl'), join(FIXTURES, 'claude-code/plain.jsonl')],
  'codex': [join(FIXTURES, 'codex/tools-images.jsonl'), join(FIXTURES, 'codex/plain.jsonl')],
  'dsh': [join(DSH_LOGS, 'image-inputs.jsonl'), join(DSH_LOGS, 'tool-heavy.jsonl')],
}

let dir: string
let cleanup: () => Promise<void>
/** The scenario written for each fixture, by `${format}:${index}`. */
const written = new Map<string, { path: string; yaml: string; stderr: string }>()

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  for (const format of IMPORT_FORMATS) {
    for (const [i, file] of FIXTURE_FILES[format].entries()) {
      const path = join(dir, `${format}-${i}.yaml`)
      const result = await runSim(['import', format, file, '-o', path])
      if (result.exitCode !== 0) throw new Error(`sim import ${format} ${file}: exit ${result.exitCode}\n${result.stderr}`)
      written.set(`${format}:${i}`, { path, yaml: await readFile(path, 'utf8'), stderr: result.stderr })
    }
  }
})
afterAll(async () => {
  await cleanup()
})

async function transcriptOf(path: string): Promise<Transcript> {
  const scenario = resolveScenario(await loadScenario(path), { file: path })
  return scenarioTranscript(scenario, scenario.seed)
}

const blocksOf = (t: Transcript): ContentBlock[] => t.turns.flatMap((turn) => [
  ...turn.user, ...turn.steps.flatMap((s) => [...s.reply.blocks, ...s.toolResults.flatMap((r) => r.content), ...s.steer ?? []]),
])

describe('sim import: fixtures of every format', () => {
  it.each(IMPORT_FORMATS.map((f) => [f]))('%s: the tools-and-images fixture keeps images as references and parallel calls', async (format) => {
    const { path, yaml } = written.get(`${format}:0`) as { path: string; yaml: string }
    const transcript = await transcriptOf(path)
    expect(transcript.turns.length).toBeGreaterThanOrEqual(1)
    const images = blocksOf(transcript).filter((b) => b.type === 'image')
    expect(images.length).toBeGreaterThan(0)
    for (const image of images) {
      const attachment = (image as unknown as Record<string, unknown>)['attachment'] as { bytes: number; mediaType: string; attachmentId: string }
      expect(attachment.mediaType).toMatch(/^image\//)
      if (format !== 'dsh') expect(attachment.bytes).toBeGreaterThan(0)
    }
    expect(yaml).not.toMatch(/base64|iVBORw0KGgo/) // no inline image bytes (a PNG's base64 starts so)
    // The recorded DSH logs have images (image-inputs) and parallel calls (tool-heavy) in different files.
    const withCalls = format === 'dsh' ? await transcriptOf((written.get('dsh:1') as { path: string }).path) : transcript
    const parallel = withCalls.turns.some((t) => t.steps.some((s) => s.reply.blocks.filter((b) => b.type === 'tool-call').length >= 2))
    expect(parallel).toBe(true)
    for (const turn of transcript.turns) {
      for (const step of turn.steps) {
        const calls = step.reply.blocks.filter((b) => b.type === 'tool-call').map((b) => String((b as unknown as Record<string, unknown>)['id'])).sort()
        expect(step.toolResults.map((r) => r.callId).sort()).toEqual(calls)
      }
    }
  })

  it('images keep their decoded size and their pixel size (openai-chat data URL, anthropic base64)', async () => {
    for (const format of ['openai-chat', 'anthropic-messages', 'claude-code', 'codex'] as const) {
      const transcript = await transcriptOf((written.get(`${format}:0`) as { path: string }).path)
      const first = blocksOf(transcript).find((b) => b.type === 'image') as { attachment: { width: number; height: number; bytes: number } }
      expect(first.attachment.width, format).toBeGreaterThan(0)
      expect(first.attachment.height, format).toBeGreaterThan(0)
    }
    const chat = await transcriptOf((written.get('openai-chat:0') as { path: string }).path)
    const source = JSON.parse(await readFile(FIXTURE_FILES['openai-chat'][0] as string, 'utf8')) as {
      messages: Array<{ content: Array<{ image_url?: { url: string } }> }>
    }
    const url = source.messages[1]?.content[1]?.image_url?.url as string
    const bytes = Buffer.from(url.split(',')[1] as string, 'base64')
    const image = chat.turns[0]?.user.find((b) => b.type === 'image') as { attachment: { bytes: number; width: number; height: number } }
    expect(image.attachment).toMatchObject({ bytes: bytes.length, width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) })
  })

  it('what is dropped is listed on stderr and in the scenario header comment', () => {
    const claude = written.get('claude-code:0') as { yaml: string; stderr: string }
    for (const text of [claude.yaml, claude.stderr]) {
      expect(text).toMatch(/line 1: summary line/)
      expect(text).toMatch(/sidechain user record/)
      expect(text).toMatch(/toolUseResult/)
      expect(text).toMatch(/line 14: user record — on an abandoned branch/)
    }
    const responses = written.get('openai-responses:0') as { yaml: string; stderr: string }
    for (const text of [responses.yaml, responses.stderr]) {
      expect(text).toContain('/input/8: web_search_call item')
      expect(text).toContain('/input/1: encrypted reasoning')
    }
    const anthropic = written.get('anthropic-messages:0') as { yaml: string }
    expect(anthropic.yaml).toMatch(/^# .*\/messages\/5\/content\/0: redacted_thinking block/m)
  })

  it('claude-code: split assistant lines join one reply; the abandoned branch is not replayed', async () => {
    const transcript = await transcriptOf((written.get('claude-code:0') as { path: string }).path)
    expect(transcript.turns).toHaveLength(2)
    const first = transcript.turns[0]?.steps[0]?.reply.blocks.map((b) => b.type)
    expect(first).toEqual(['reasoning', 'tool-call', 'tool-call'])
    const text = JSON.stringify(transcript)
    expect(text).toContain('round to cents')
    expect(text).not.toContain('Should I keep the test change?')
    expect(text).not.toContain('No other matches.') // sidechain
  })

  it('anthropic-messages: text beside tool results is the step\'s steering message; a failed result stays an error', async () => {
    const transcript = await transcriptOf((written.get('anthropic-messages:0') as { path: string }).path)
    const step = transcript.turns[0]?.steps[1]
    expect(step?.steer).toEqual([{ type: 'text', text: 'You lack describe rights; use the panel instead.' }])
    expect(step?.toolResults[0]?.isError).toBe(true)
    expect(transcript.systemPrompt).toBe('You are a careful SRE assistant.')
    expect(transcript.tools.map((t) => t.name)).toEqual(['kubectl', 'screenshot'])
  })

  it('every imported fixture runs through sim run on the reference subject with the checker clean', async () => {
    const files = [...written.values()].map((w) => w.path)
    const result = await runSim(['run', ...files, '--out-dir', join(dir, 'run-reference'), '--reporter', 'json'])
    const report = JSON.parse(result.stdout) as { scenarios: Array<{ file: string; status: string; violations: unknown[] }> }
    expect(report.scenarios.map((s) => [s.file, s.status])).toEqual(files.map((f) => [f, 'passed']))
    expect(report.scenarios.every((s) => s.violations.length === 0)).toBe(true)
    expect(result.exitCode).toBe(0)
  })

  it('the fixtures the official engine supports pass under --subject dsh too (one per format)', async () => {
    // Steering and out-of-order results are features DSH does not declare; these fixtures use neither.
    const keys = ['openai-chat:1', 'openai-responses:1', 'anthropic-messages:1', 'claude-code:0', 'codex:0', 'dsh:1']
    const files = keys.map((k) => (written.get(k) as { path: string }).path)
    const result = await runSim(['run', ...files, '--subject', 'dsh', '--out-dir', join(dir, 'run-dsh'), '--reporter', 'json'])
    const report = JSON.parse(result.stdout) as { scenarios: Array<{ file: string; status: string }> }
    expect(report.scenarios.map((s) => [s.file, s.status])).toEqual(files.map((f) => [f, 'passed']))
    expect(result.exitCode).toBe(0)
  })
})

describe('transcript: {import: {format, path}}', () => {
  it('imports the session when the run starts, relative to the scenario file, and the run passes', async () => {
    await copyFile(FIXTURE_FILES.codex[0] as string, join(dir, 'session.jsonl'))
    const file = join(dir, 'import-source.yaml')
    await writeFile(file, [
      'name: import-source', 'seed: 3', 'provider: { wire: openai, model: mock-4k, contextWindow: 4000 }',
      'transcript:', '  import: { format: codex, path: session.jsonl }', 'expect: { invariants: all }', '',
    ].join('\n'))
    const transcript = await transcriptOf(file)
    expect(transcript.systemPrompt).toBe('You are Codex, a coding agent. Keep changes minimal.')
    expect(transcript.turns).toHaveLength(2)
    const result = await runSim(['run', file, '--out-dir', join(dir, 'run-source'), '--reporter', 'json'])
    expect((JSON.parse(result.stdout) as { summary: { passed: number } }).summary.passed).toBe(1)
    expect(result.exitCode).toBe(0)
  })

  it('a bad format or a path outside the scenario folder is a load error at the field (exit 2)', async () => {
    const bad = join(dir, 'import-bad.yaml')
    await writeFile(bad, 'name: b\nseed: 1\nprovider: { wire: openai, model: m }\ntranscript:\n  import: { format: gemini, path: s.json }\n')
    const result = await runSim(['run', bad, '--out-dir', join(dir, 'run-bad')])
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toMatch(/import-bad\.yaml:5:\d+: \/transcript\/import\/format/)
    const outside = join(dir, 'import-outside.yaml')
    await writeFile(outside, 'name: o\nseed: 1\nprovider: { wire: openai, model: m }\ntranscript:\n  import: { format: codex, path: ../../etc/passwd }\n')
    const refused = await runSim(['run', outside, '--out-dir', join(dir, 'run-outside')])
    expect(refused.exitCode).toBe(2)
    expect(refused.stderr).toMatch(/\/transcript\/import\/path escapes the scenario's folder/)
  })
})

/** One malformed file per format: its text and the message `sim import` must print. */
const MALFORMED: Record<ImportFormat, { name: string; text: string; message: RegExp }> = {
  'openai-chat': {
    name: 'bad-chat.json',
    text: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'f' } }] }] }),
    message: /bad-chat\.json: \/messages\/1\/tool_calls\/0\/id must be the tool call id \(a string\) \(got undefined\)/,
  },
  'openai-responses': {
    name: 'bad-responses.json',
    text: JSON.stringify([{ type: 'message', role: 'user', content: 'hi' }, { type: 'function_call', name: 'f', arguments: '{}' }]),
    message: /bad-responses\.json: \/1\/call_id must be the call id \(a string\)/,
  },
  'anthropic-messages': {
    name: 'bad-anthropic.json',
    text: JSON.stringify([{ role: 'user', content: 'hi' }, { role: 'assistant', content: [{ type: 'tool_use', name: 'f', input: {} }] }]),
    message: /bad-anthropic\.json: \/1\/content\/0\/id must be the tool_use id \(a string\)/,
  },
  'claude-code': {
    name: 'bad-claude.jsonl',
    text: [
      JSON.stringify({ type: 'user', uuid: 'a', parentUuid: null, message: { role: 'user', content: 'hi' } }),
      JSON.stringify({ type: 'assistant', uuid: 'b', parentUuid: 'a', message: { role: 'assistant', content: [{ type: 'text' }] } }),
      JSON.stringify({ type: 'assistant', uuid: 'c', parentUuid: 'b' }),
    ].join('\n'),
    message: /bad-claude\.jsonl:3: \/message must be an object \{role, content\} \(got undefined\)/,
  },
  'codex': {
    name: 'bad-codex.jsonl',
    text: [
      JSON.stringify({ type: 'session_meta', payload: { id: 'x' } }),
      '{"type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text"}]}}',
    ].join('\n'),
    message: /bad-codex\.jsonl:2: \/payload\/content\/0\/text must be the text of the part \(got undefined\)/,
  },
  'dsh': {
    name: 'bad-dsh.jsonl',
    text: [
      JSON.stringify({ type: 'turn/start', seq: 0, time: 1, data: { turn: 1 } }), '{"type": "turn/end", "seq": 1,',
      JSON.stringify({ type: 'turn/end', seq: 2, time: 1, data: { turn: 1, reason: { kind: 'completed' } } }),
    ].join('\n'),
    message: /bad-dsh\.jsonl:2: not valid JSON/,
  },
}

describe('sim import: malformed files', () => {
  it.each(IMPORT_FORMATS.map((f) => [f]))('%s: exit 2 with file:line or the JSON path, and the field', async (format) => {
    const { name, text, message } = MALFORMED[format]
    const file = join(dir, name)
    await writeFile(file, text)
    const result = await runSim(['import', format, file, '-o', join(dir, `${name}.yaml`)])
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toMatch(message)
    expect(result.stderr).not.toMatch(/Internal|at .*\.ts:\d+/)
  })

  it('a JSONL line that is not JSON names its line; a missing file says so', async () => {
    const file = join(dir, 'torn.jsonl')
    await writeFile(file, `${JSON.stringify({ type: 'summary', summary: 's' })}\n{"type": "user", "message": \n`)
    const torn = await runSim(['import', 'claude-code', file])
    expect(torn.exitCode).toBe(2)
    expect(torn.stderr).toMatch(/torn\.jsonl:2: is not JSON/)
    const missing = await runSim(['import', 'openai-chat', join(dir, 'nope.json')])
    expect(missing.exitCode).toBe(2)
    expect(missing.stderr).toMatch(/nope\.json: no such file/)
  })
})

function factsOf(t: Transcript): LongSessionFacts {
  const out: LongSessionFacts = { turns: t.turns.length, toolCalls: 0, textChars: 0, argumentChars: 0, imageBytes: 0, images: 0 }
  for (const block of blocksOf(t)) {
    if (block.type === 'text' || block.type === 'reasoning') out.textChars += String(block['text']).length
    if (block.type === 'tool-call') {
      out.toolCalls++
      out.argumentChars += String(block['arguments']).length
    }
    if (block.type === 'image') {
      out.images++
      out.imageBytes += (block['attachment'] as { bytes: number }).bytes
    }
  }
  return out
}

describe('generated 500-turn sessions (import only)', () => {
  it.each(IMPORT_FORMATS.map((f) => [f]))('%s: every turn, call, text character and image byte is kept', async (format) => {
    const { path, expected } = await writeLongSession(format, dir, 20)
    expect(expected.turns).toBe(500)
    const { transcript } = await importSession(format, path)
    expect(factsOf(transcript)).toEqual(expected)
  })

  it('sim import writes a too-large transcript to a sidecar JSONL file the scenario names', async () => {
    const { path, expected } = await writeLongSession('codex', dir, 21)
    const out = join(dir, 'long-codex.yaml')
    const result = await runSim(['import', 'codex', path, '-o', out])
    expect(result.exitCode).toBe(0)
    const yaml = await readFile(out, 'utf8')
    expect(yaml).toMatch(/^transcript:\n {2}file: long-codex\.transcript\.jsonl$/m)
    expect(factsOf(await transcriptOf(out))).toEqual(expected)
  })
})
