/**
 * `sim serve --capture` writes the world record (issue #21) beside its capture, and `sim check --world` judges a
 * log an external client wrote against it: the Python `urllib` client and the official `openai` SDK as the
 * adapter of a reference-core session pass; the same SDK session with an adapter that labels the provider's
 * `context_length_exceeded` 400 as a transient `SERVER` error (a realistic misclassification: the generic retry
 * policy then retries the overflow blind; the log is consistent with itself, so §12 alone cannot see it) fails WORLD-01 at the seq where the log records the wrong class.
 */
import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LlmError, type GenerateOptions, type LogEvent, type StreamChunk } from '@compaction-sim/core'
import type { Transcript } from '@compaction-sim/fixtures'
import { scenarioTranscript } from '../../src/run/transcript.ts'
import { loadScenario } from '../../src/scenario/load.ts'
import { resolveScenario, type ResolvedScenario } from '../../src/scenario/resolve.ts'
import { loadWorldRecord } from '../../src/world/record-file.ts'
import { REPO_ROOT, runSim, tempDir } from '../cli/run-sim.ts'
import { SERVE_HOOK_TIMEOUT_MS, startServe, type ServeChild } from './support/child.ts'
import { OpenAiSdkAdapter } from './support/sdk-adapters.ts'
import { runSdkSession } from './support/sdk-session.ts'

const run = promisify(execFile)
const NO_PRESSURE = 'scenarios/smoke/no-pressure.yaml'
const OVERFLOW = 'scenarios/smoke/overflow-recovery.yaml'

/** The bug: every provider failure the SDK raises becomes SERVER (a retryable class), overflow included. */
class MisclassifyingAdapter extends OpenAiSdkAdapter {
  override async *stream(options: GenerateOptions): AsyncIterable<StreamChunk> {
    try {
      yield* super.stream(options)
    } catch (err) {
      if (err instanceof LlmError && err.failure.code === 'CONTEXT_WINDOW_EXCEEDED') {
        throw new LlmError({ ...err.failure, code: 'SERVER' }, { cause: err })
      }
      throw err
    }
  }
}

let dir: string
let cleanup: () => Promise<void>
let python: ServeChild
let honest: ServeChild
let broken: ServeChild

async function scenarioOf(file: string): Promise<{ scenario: ResolvedScenario; transcript: Transcript }> {
  const path = join(REPO_ROOT, file)
  const scenario = resolveScenario(await loadScenario(path), { file: path })
  return { scenario, transcript: await scenarioTranscript(scenario, scenario.seed) }
}

interface CheckDoc { files: Array<{ ok: boolean; violations: Array<{ id: string; seq: number; message: string }> }> }

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  ;[python, honest, broken] = await Promise.all([
    startServe(['--scenario', NO_PRESSURE, '--capture', join(dir, 'python.capture.jsonl')]),
    startServe(['--scenario', OVERFLOW, '--capture', join(dir, 'honest.capture.jsonl')]),
    startServe(['--scenario', OVERFLOW, '--capture', join(dir, 'broken.capture.jsonl')]),
  ])
}, SERVE_HOOK_TIMEOUT_MS)
afterAll(async () => {
  await Promise.all([python, honest, broken].map((c) => c?.stop('SIGKILL')))
  await cleanup()
})

describe('sim check --world on logs written by external clients of sim serve', () => {
  it('python (urllib): the world record names both replies; sim check --world passes', async () => {
    const { transcript } = await scenarioOf(NO_PRESSURE)
    const script = {
      provider: 'openai', model: 'mock-128k', systemPrompt: transcript.systemPrompt,
      turns: transcript.turns.map((t) => t.user.map((b) => (b.type === 'text' ? b.text : '')).join('')),
    }
    await writeFile(join(dir, 'script.json'), JSON.stringify(script))
    const log = join(dir, 'python.jsonl')
    const requests = join(dir, 'python.requests.jsonl')
    await run('python3', [
      join(REPO_ROOT, 'packages/sim/test/serve/support/client.py'), '--base-url', python.ready.baseURL,
      '--script', join(dir, 'script.json'), '--log', log, '--requests', requests,
    ], { env: { PATH: process.env['PATH'] ?? '', SIM_CLIENT_API_KEY: 'sk-world-python' } })
    expect(await python.stop('SIGINT')).toBe(0)
    const worldPath = join(dir, 'python.capture.world.json')
    expect(python.lines.at(-1)).toMatchObject({ type: 'closed', world: worldPath })
    const world = await loadWorldRecord(worldPath)
    expect(world.requests.map((r) => [r.purpose, r.answer.kind, r.failureClass])).toEqual([
      ['conversation', 'reply', null], ['conversation', 'reply', null],
    ])
    expect(world.routes.map((r) => [r.model, r.contextWindow])).toEqual([['mock-128k', 128_000]])
    const check = await runSim(['check', log, '--requests', requests, '--world', worldPath, '--json'])
    expect(check.stderr).toBe('')
    expect(JSON.parse(check.stdout) as CheckDoc).toMatchObject({ files: [{ ok: true, violations: [] }] })
    expect(check.exitCode).toBe(0)

    // Negative control: a usage the world never reported, planted in the log, is WORLD-05 at its seq (INV-04 sees the
    // message disagree with its usage chunk too).
    const events = (await readFile(log, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as LogEvent & { data: Record<string, unknown> })
    const target = events.find((e) => e.type === 'assistant/message')
    if (target === undefined) throw new Error('no assistant/message in the python log')
    target.data['usage'] = { inputTokens: 1, outputTokens: 1 }
    const tampered = join(dir, 'python-tampered.jsonl')
    await writeFile(tampered, events.map((e) => `${JSON.stringify(e)}\n`).join(''))
    const bad = await runSim(['check', tampered, '--requests', requests, '--world', worldPath, '--json'])
    expect(bad.exitCode).toBe(1)
    const found = (JSON.parse(bad.stdout) as CheckDoc).files[0]?.violations.map((v) => `${v.id}@${v.seq}`) ?? []
    expect(found.filter((f) => f.startsWith('WORLD-'))).toEqual([`WORLD-05@${target.seq}`])
  }, 300_000)

  it('openai SDK: an honest adapter passes --world; one that labels the overflow SERVER fails WORLD-01 where it logs it', async () => {
    const { scenario, transcript } = await scenarioOf(OVERFLOW)
    const routes = [{ provider: scenario.provider.name, model: scenario.provider.model, contextWindow: 8000 }]
    const sdk = (child: ServeChild): OpenAI => new OpenAI({ apiKey: 'sk-world-sdk', baseURL: child.ready.baseURL, maxRetries: 0 })

    const good = await runSdkSession(scenario, transcript, new OpenAiSdkAdapter(sdk(honest), routes), dir, 'honest')
    expect(await honest.stop('SIGTERM')).toBe(0)
    const goodWorld = join(dir, 'honest.capture.world.json')
    const ok = await runSim(['check', good.logPath, '--requests', good.requestsPath, '--world', goodWorld])
    expect(ok.stdout).toContain('ok no violations')
    expect(ok.exitCode).toBe(0)
    const world = await loadWorldRecord(goodWorld)
    expect(world.requests.map((r) => r.failureClass)).toContain('CONTEXT_WINDOW_EXCEEDED')

    const wrong = await runSdkSession(scenario, transcript, new MisclassifyingAdapter(sdk(broken), routes), dir, 'broken')
    expect(await broken.stop('SIGTERM')).toBe(0)
    const badWorld = join(dir, 'broken.capture.world.json')
    // Without the world the log is consistent with itself: §12 finds nothing.
    const alone = await runSim(['check', wrong.logPath, '--requests', wrong.requestsPath])
    expect(alone.exitCode).toBe(0)
    const judged = await runSim(['check', wrong.logPath, '--requests', wrong.requestsPath, '--world', badWorld, '--json'])
    expect(judged.exitCode).toBe(1)
    const events = (await readFile(wrong.logPath, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as LogEvent & { data: Record<string, unknown> })
    // The generic retry policy retries a SERVER failure (llm/retry), as it must for that class: the overflow is retried blind.
    const logged = events.find((e) => e.type === 'llm/retry' || (e.type === 'turn/end' && (e.data['reason'] as { kind: string }).kind === 'error'))
    if (logged === undefined) throw new Error('the misclassified overflow left no failure in the log')
    const code = logged.type === 'llm/retry'
      ? (logged.data['failure'] as { code: string }).code
      : (logged.data['reason'] as { error: { code: string } }).error.code
    expect(code).toBe('SERVER')
    const failed = wrong.requests.find((r) => r.failureCode === 'SERVER')
    if (failed === undefined) throw new Error('the capture does not record the SERVER failure')
    const violations = (JSON.parse(judged.stdout) as CheckDoc).files[0]?.violations ?? []
    expect(violations.map((v) => `${v.id}@${v.seq}`).sort()).toEqual([`WORLD-01@${failed.logRevisionAtDispatch}`, `WORLD-01@${logged.seq}`].sort())
    expect(violations[0]?.message).toMatch(/answered CONTEXT_WINDOW_EXCEEDED \(HTTP 400\)/)
  }, 300_000)
})
