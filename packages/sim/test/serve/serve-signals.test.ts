/**
 * `sim serve` fixes from a new user's first run (issue #17): without a scenario the model it announces
 * (`mock-128k`) is listed by `GET /v1/models/<id>` while any model name is still served; and SIGTERM at high
 * load — repeated, as a process-group kill plus a forwarded signal deliver it — still finishes the capture
 * and prints `closed` with exit 0 instead of dying with 143. The child is real; no assertion depends on time
 * (a generous watchdog only bounds a hang).
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serve, SERVE_DEFAULT_MODEL } from '../../src/serve/serve.ts'
import { tempDir } from '../cli/run-sim.ts'
import { startServe } from './support/child.ts'

const WATCHDOG_MS = 90_000
const CHAT_BODY = (model: string): string => JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] })

let tmp: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

describe('sim serve without a scenario', () => {
  it('GET /v1/models/mock-128k reports the announced model; other model names are still served', async () => {
    const serving = await serve({})
    try {
      expect(serving.model).toBe(SERVE_DEFAULT_MODEL)
      const one = await fetch(`${serving.baseURL}/models/${serving.model}`)
      expect([one.status, await one.json()]).toEqual([200, {
        id: 'mock-128k', object: 'model', created: 0, owned_by: 'compaction-sim', context_window: 128_000,
      }])
      const list = await fetch(`${serving.baseURL}/models`)
      expect(((await list.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id)).toEqual(['mock-128k'])
      const unknown = await fetch(`${serving.baseURL}/models/gpt-unknown`)
      expect(unknown.status).toBe(404)
      await unknown.text()
      for (const model of ['mock-128k', 'any-model-name']) {
        const chat = await fetch(`${serving.baseURL}/chat/completions`, { method: 'POST', body: CHAT_BODY(model) })
        expect([model, chat.status, (await chat.text()).includes('Mock reply')]).toEqual([model, 200, true])
      }
    } finally {
      await serving.close()
    }
  })
})

describe('sim serve under SIGTERM at high load', () => {
  it('repeated SIGTERMs during a burst of requests: exit 0, `closed` last, and the capture holds every counted request', async () => {
    const capture = join(tmp.dir, 'burst.capture.jsonl')
    const child = await startServe(['--capture', capture])
    const watchdog = setTimeout(() => child.signal('SIGKILL'), WATCHDOG_MS)
    let stopping = false
    const client = async (): Promise<void> => {
      while (!stopping) {
        try {
          const response = await fetch(`${child.ready.baseURL}/chat/completions`, { method: 'POST', body: CHAT_BODY('mock-128k') })
          await response.text()
        } catch {
          return // the server closed the connection: it is shutting down
        }
      }
    }
    const clients = Array.from({ length: 32 }, client)
    // Ordering signal, not a timer: signal only once the server has answered a good number of requests.
    while (child.lines.filter((l) => l['type'] === 'request').length < 40) await new Promise((r) => setTimeout(r, 5))
    const pounding = setInterval(() => { child.signal('SIGTERM') }, 1)
    child.signal('SIGTERM')
    const ended = await child.exited
    clearInterval(pounding)
    clearTimeout(watchdog)
    stopping = true
    await Promise.all(clients)
    expect([ended, child.stderr()]).toEqual([{ code: 0, signal: null }, ''])
    const closed = child.lines.at(-1) ?? {}
    expect(closed).toMatchObject({ type: 'closed', signal: 'SIGTERM', capture })
    const counted = child.lines.filter((l) => l['type'] === 'request' && l['index'] !== null)
    const captured = (await readFile(capture, 'utf8')).split('\n').filter((l) => l !== '')
    expect(captured.length).toBe(closed['requests'])
    expect(counted.length).toBe(closed['requests'])
    expect(captured.map((l) => (JSON.parse(l) as { index: number }).index)).toEqual(captured.map((_, i) => i))
  }, 120_000)
})
