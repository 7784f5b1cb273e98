/**
 * The nock mount (its own file: msw and nock must never share a test file or process). The same handler
 * answers `fetch` and a plain `node:http` client (called through the module object: nock patches it, an ESM
 * named import of a builtin would keep the unpatched function); fault timing behaves as on the other mounts.
 */
import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assembleAttempt, CallId } from '@compaction-sim/core'
import { mountNock, type NockMount } from '../../src/provider/mount-nock.ts'
import type { MockProvider } from '../../src/provider/mock-provider.ts'
import type { PlannedOutcome } from '../../src/provider/types.ts'
import { imageOffloadRejection, overflowRejection } from '../../src/provider/wire-response.ts'
import { adapter, call, failureOf, prompt, provider, run } from './support.ts'

const BASE = 'http://nock.mock/v1'
const outcomes: PlannedOutcome[] = []
let mock: MockProvider
let mount: NockMount

beforeAll(() => {
  mock = provider('deepseek', outcomes)
  mount = mountNock(mock, BASE)
})
afterAll(() => mount.close())

describe('nock mount', () => {
  const llm = adapter('deepseek', BASE)

  it('serves a streamed reply with usage to the fetch-based adapter', async () => {
    const blocks = [
      { type: 'reasoning', text: 'thinking hard' },
      { type: 'text', text: 'answer' },
      { type: 'tool-call', id: CallId('call_9'), name: 'run', arguments: '{"cmd":"ls"}' },
    ]
    outcomes.push({ kind: 'reply', reply: { blocks, usage: { inputTokens: 9, outputTokens: 3, cacheReadTokens: 6 } } })
    const attempt = assembleAttempt(await run(llm, call(prompt('hi'))))
    expect(attempt).toEqual({ blocks, usage: { inputTokens: 9, outputTokens: 3, cacheReadTokens: 6 }, finish: { kind: 'tool-calls' } })
    expect(mock.captured.at(-1)?.headers['authorization']).toBe('[redacted]')
  })

  it('maps rejections and fault timings to the §1.2.2 codes', async () => {
    outcomes.push(
      { kind: 'reject', rejection: overflowRejection('deepseek', 8000, 8200) },
      { kind: 'reject', rejection: imageOffloadRejection(1) },
      { kind: 'reset' },
      { kind: 'interrupt', reply: { blocks: [{ type: 'text', text: 'half of an answer' }] }, afterChunks: 2, cut: { kind: 'error' } },
      { kind: 'interrupt', reply: { blocks: [{ type: 'text', text: 'half of an answer' }] }, afterChunks: 2, cut: { kind: 'close' } },
      { kind: 'empty' },
    )
    const codes: string[] = []
    for (let i = 0; i < 6; i++) codes.push(failureOf(await run(llm, call(prompt(`r${i}`)))).code)
    expect(codes).toEqual(['CONTEXT_WINDOW_EXCEEDED', 'IMAGE_OFFLOAD_REQUIRED', 'TRANSPORT', 'TRANSPORT', 'TRANSPORT', 'EMPTY_RESPONSE'])
  })

  it('answers a plain node:http client with the model metadata', async () => {
    const body = await new Promise<string>((resolve, reject) => {
      const req = http.request(`${BASE}/models/mock-8k`, (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => {
          text += d
        })
        res.on('end', () => resolve(text))
        res.on('error', reject)
      })
      req.on('error', reject)
      req.end()
    })
    expect(JSON.parse(body)).toEqual({
      id: 'mock-8k',
      object: 'model',
      created: 0,
      owned_by: 'compaction-sim',
      context_window: 8000,
      image_tokens: 85,
    })
  })

  it('resolves model metadata through the adapter', async () => {
    expect(await llm.resolveModel('mock', 'mock-4k')).toEqual({
      provider: 'mock',
      id: 'mock-4k',
      name: 'mock-4k',
      context: { contextWindow: 4000 },
    })
  })
})
