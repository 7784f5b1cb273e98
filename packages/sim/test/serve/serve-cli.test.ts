/**
 * `sim serve` as a real child process (issue #11 "Done when"): a Python client using only `urllib` streams a
 * scenario's turns over SSE and writes a session log and request capture that `sim check` accepts; the
 * official `openai` and `@anthropic-ai/sdk` clients, as the adapters of a reference-core session, run a
 * scenario with an injected overflow (FAULT-01) through `sim serve` and `sim check` accepts their logs too.
 * Also: the ready line, one JSON line per request, the capture written on SIGINT/SIGTERM with exit 0, and
 * the loopback-only default. Four servers start in parallel (tsx start-up dominates the run time).
 */
import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Transcript } from '@compaction-sim/fixtures'
import { scenarioTranscript } from '../../src/run/transcript.ts'
import { loadScenario } from '../../src/scenario/load.ts'
import { resolveScenario, type ResolvedScenario } from '../../src/scenario/resolve.ts'
import { serve, ServeConfigError } from '../../src/serve/serve.ts'
import { REPO_ROOT, runSim, tempDir } from '../cli/run-sim.ts'
import { SERVE_HOOK_TIMEOUT_MS, startServe, type ServeChild } from './support/child.ts'
import { AnthropicSdkAdapter, OpenAiSdkAdapter } from './support/sdk-adapters.ts'
import { runSdkSession } from './support/sdk-session.ts'

const run = promisify(execFile)
const NO_PRESSURE = 'scenarios/smoke/no-pressure.yaml'
const OVERFLOW = 'scenarios/smoke/overflow-recovery.yaml'
const PY_KEY = 'sk-planted-python-5f1c0e'

let dir: string
let cleanup: () => Promise<void>
let python: ServeChild
let openaiServe: ServeChild
let anthropicServe: ServeChild
let exposed: ServeChild

async function scenarioOf(file: string): Promise<{ scenario: ResolvedScenario; transcript: Transcript }> {
  const path = join(REPO_ROOT, file)
  const scenario = resolveScenario(await loadScenario(path), { file: path })
  return { scenario, transcript: await scenarioTranscript(scenario, scenario.seed) }
}

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  ;[python, openaiServe, anthropicServe, exposed] = await Promise.all([
    startServe(['--scenario', NO_PRESSURE, '--capture', join(dir, 'python.capture.jsonl')]),
    startServe(['--scenario', OVERFLOW, '--capture', join(dir, 'openai.capture.jsonl')]),
    startServe(['--scenario', OVERFLOW, '--wire', 'anthropic', '--capture', join(dir, 'anthropic.capture.jsonl')]),
    startServe(['--host', '0.0.0.0']),
  ])
}, SERVE_HOOK_TIMEOUT_MS)
afterAll(async () => {
  await Promise.all([python, openaiServe, anthropicServe, exposed].map((c) => c?.stop('SIGKILL')))
  await cleanup()
})

describe('sim serve: a non-JS client (Python, urllib only)', () => {
  it('prints one ready line with a loopback baseURL and the scenario seed', () => {
    expect(python.ready).toMatchObject({ type: 'ready', seed: 1, wire: 'openai', model: 'mock-128k', faults: [] })
    expect(python.ready.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/)
  })

  it('streams the scenario turns; sim check passes on the log and capture it wrote; SIGINT writes the capture, exit 0', async () => {
    const { transcript } = await scenarioOf(NO_PRESSURE)
    const script = {
      provider: 'openai', model: 'mock-128k', systemPrompt: transcript.systemPrompt,
      turns: transcript.turns.map((t) => t.user.map((b) => (b.type === 'text' ? b.text : '')).join('')),
    }
    await writeFile(join(dir, 'script.json'), JSON.stringify(script))
    const log = join(dir, 'python.jsonl')
    const requests = join(dir, 'python.requests.jsonl')
    const { stdout } = await run('python3', [
      join(REPO_ROOT, 'packages/sim/test/serve/support/client.py'), '--base-url', python.ready.baseURL,
      '--script', join(dir, 'script.json'), '--log', log, '--requests', requests,
    ], { env: { PATH: process.env['PATH'] ?? '', SIM_CLIENT_API_KEY: PY_KEY } })
    expect(JSON.parse(stdout)).toEqual({ events: 30, requests: 2 })

    const check = await runSim(['check', log, '--requests', requests, '--json'])
    expect(check.stderr).toBe('')
    expect(check.exitCode).toBe(0)
    const doc = JSON.parse(check.stdout) as { files: Array<{ ok: boolean; events: number; violations: unknown[]; notEvaluated?: unknown }> }
    expect(doc.files[0]).toMatchObject({ ok: true, events: 30, violations: [] })
    const replies = (await readFile(log, 'utf8')).split('\n').filter((l) => l.includes('"assistant/message"'))
      .map((l) => (JSON.parse(l) as { data: { message: { content: unknown } } }).data.message.content)
    expect(replies).toEqual(transcript.turns.map((t) => t.steps[0]?.reply.blocks))

    // Negative control: a capture that disagrees with the log (the system prompt dropped from a request) fails.
    const lines = (await readFile(requests, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { messages: unknown[] })
    lines[1]?.messages.shift()
    await writeFile(join(dir, 'tampered.requests.jsonl'), lines.map((l) => `${JSON.stringify(l)}\n`).join(''))
    expect((await runSim(['check', log, '--requests', join(dir, 'tampered.requests.jsonl')])).exitCode).toBe(1)

    expect(await python.stop('SIGINT')).toBe(0)
    const kinds = python.lines.map((l) => [l['type'], l['method'] ?? '', l['path'] ?? '', l['status'] ?? ''].map(String).join(' '))
    expect(kinds).toEqual([
      'ready   ', 'request GET /v1/models/mock-128k 200', 'request POST /v1/chat/completions 200',
      'request POST /v1/chat/completions 200', 'closed   ',
    ])
    expect(python.lines.at(-1)).toMatchObject({ type: 'closed', signal: 'SIGINT', requests: 2, refused: 0 })
    const capture = await readFile(join(dir, 'python.capture.jsonl'), 'utf8')
    const captured = capture.trim().split('\n').map((l) => JSON.parse(l) as { headers: Record<string, string>; outcome: string })
    expect(captured.map((c) => [c.headers['authorization'], c.outcome])).toEqual([['[redacted]', 'reply'], ['[redacted]', 'reply']])
    expect(capture + JSON.stringify(python.lines) + python.stderr()).not.toContain(PY_KEY)
  }, 300_000)
})

describe('sim serve: the official clients as adapters of a session with an injected overflow (FAULT-01)', () => {
  it('openai: the BadRequestError becomes CONTEXT_WINDOW_EXCEEDED, the session recovers, sim check passes', async () => {
    expect(openaiServe.ready).toMatchObject({ wire: 'deepseek', model: 'deepseek-chat', faults: ['overflow-turn-2'] })
    const { scenario, transcript } = await scenarioOf(OVERFLOW)
    const client = new OpenAI({ apiKey: 'sk-planted-openai-sdk', baseURL: openaiServe.ready.baseURL, maxRetries: 0 })
    const routes = [{ provider: scenario.provider.name, model: scenario.provider.model, contextWindow: 8000 }]
    const session = await runSdkSession(scenario, transcript, new OpenAiSdkAdapter(client, routes), dir, 'openai-sdk')
    expect(session.outcomes.map((o) => o.kind)).toEqual(['completed', 'completed'])
    expect(session.requests.map((r) => [r.purpose, r.outcome, r.failureCode ?? null])).toEqual([
      ['conversation', 'tool-calls', null], ['conversation', 'stop', null], ['conversation', 'error', 'CONTEXT_WINDOW_EXCEEDED'],
      ['compaction', 'stop', null], ['conversation', 'stop', null],
    ])
    const check = await runSim(['check', session.logPath, '--requests', session.requestsPath])
    expect(check.stdout).toContain('ok no violations')
    expect(check.exitCode).toBe(0)
    expect(await openaiServe.stop('SIGTERM')).toBe(0)
    const served = openaiServe.lines.filter((l) => l['type'] === 'request')
    expect(served.map((l) => [l['purpose'], l['outcome'], l['status']])).toEqual([
      ['conversation', 'reply', 200], ['conversation', 'reply', 200], ['conversation', 'reject', 400],
      ['compaction', 'reply', 200], ['conversation', 'reply', 200],
    ])
    expect(served[2]).toMatchObject({ expectedFailureCode: 'CONTEXT_WINDOW_EXCEEDED' })
  }, 300_000)

  it('anthropic (--wire anthropic): "prompt is too long" becomes CONTEXT_WINDOW_EXCEEDED, sim check passes', async () => {
    expect(anthropicServe.ready).toMatchObject({ wire: 'anthropic', faults: ['overflow-turn-2'] })
    const { scenario, transcript } = await scenarioOf(OVERFLOW)
    const baseURL = anthropicServe.ready.baseURL.replace(/\/v1$/, '') // the SDK appends /v1/messages itself
    const client = new Anthropic({ apiKey: 'sk-ant-planted-sdk', baseURL, maxRetries: 0 })
    const routes = [{ provider: scenario.provider.name, model: scenario.provider.model, contextWindow: 8000 }]
    const session = await runSdkSession(scenario, transcript, new AnthropicSdkAdapter(client, routes), dir, 'anthropic-sdk')
    expect(session.outcomes.map((o) => o.kind)).toEqual(['completed', 'completed'])
    expect(session.requests.map((r) => r.failureCode ?? r.outcome)).toEqual(['tool-calls', 'stop', 'CONTEXT_WINDOW_EXCEEDED', 'stop', 'stop'])
    const check = await runSim(['check', session.logPath, '--requests', session.requestsPath])
    expect(check.stdout).toContain('ok no violations')
    expect(check.exitCode).toBe(0)
    expect(await anthropicServe.stop('SIGTERM')).toBe(0)
    const capture = (await readFile(join(dir, 'anthropic.capture.jsonl'), 'utf8')).trim().split('\n')
      .map((l) => JSON.parse(l) as { path: string; wire: string; headers: Record<string, string> })
    const seen = capture.map((c) => `${c.wire} ${c.path} ${c.headers['authorization']}`)
    expect(seen).toEqual(Array(5).fill('anthropic /v1/messages [redacted]'))
  }, 300_000)
})

describe('a scenario on the anthropic wire', () => {
  it('is served by serve() (the Anthropic SDK streams its first reply) and run by sim run through the Anthropic adapter', async () => {
    const text = (await readFile(join(REPO_ROOT, NO_PRESSURE), 'utf8')).replace('wire: openai', 'wire: anthropic')
    const file = join(dir, 'no-pressure-anthropic.yaml')
    await writeFile(file, text)
    const s = await serve({ scenario: file })
    expect([s.wire, s.seed, s.model]).toEqual(['anthropic', 1, 'mock-128k'])
    const client = new Anthropic({ apiKey: 'sk-ant-planted-wire', baseURL: s.baseURL.replace(/\/v1$/, ''), maxRetries: 0 })
    const stream = client.messages.stream({ model: 'mock-128k', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] })
    const message = await stream.finalMessage()
    expect(message.content).toEqual([{ type: 'text', text: 'It prints the path prefixed with `??`, for example `?? notes.txt`.' }])
    await s.close()
    const result = await runSim(['run', file, '--out-dir', join(dir, 'anthropic-run'), '--reporter', 'json'])
    expect(result.exitCode).toBe(0)
    const report = JSON.parse(result.stdout) as { scenarios: Array<{ status: string; skipReason?: string }> }
    expect(report.scenarios[0]).toMatchObject({ status: 'passed', violations: [] })
  }, 300_000)
})

describe('sim serve: binding', () => {
  it('refuses a non-loopback address unless asked explicitly (ServeConfigError), and binds loopback by default', async () => {
    await expect(serve({ host: '0.0.0.0' })).rejects.toThrow(ServeConfigError)
    await expect(serve({ host: '192.168.1.20' })).rejects.toThrow(/refusing to bind 192\.168\.1\.20: not a loopback address/)
    const s = await serve()
    expect(s.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/)
    const port = new URL(s.baseURL).port
    const busy = await runSim(['serve', '--port', port])
    expect(busy.exitCode).toBe(2)
    expect(busy.stderr).toContain(`cannot listen on 127.0.0.1:${port}`)
    await s.close()
  })

  it('binds a non-loopback address only when --host names it, and warns on stderr', async () => {
    expect(exposed.ready.baseURL).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/v1$/)
    expect(exposed.stderr()).toContain('warning: binding 0.0.0.0: the mock provider is reachable from other machines')
    expect(await exposed.stop('SIGINT')).toBe(0)
    expect(exposed.lines.at(-1)).toMatchObject({ type: 'closed', signal: 'SIGINT', requests: 0 })
  })
})
