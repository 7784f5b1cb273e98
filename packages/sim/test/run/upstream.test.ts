/**
 * A real summarizer behind a URL, recorded once and replayed forever (issue #20, `provider/upstream.ts`).
 * The upstream is a stand-in on loopback: a `node:http` server speaking OpenAI chat completions, streaming
 * server-sent events as the real API does (role chunk, content chunks, a finish chunk, `[DONE]`). Nothing
 * here reaches outside the machine, and replays run with the stand-in closed.
 *
 * The scenario is the pressure transcript of `scenarios/faults/fault-27-summary-not-smaller.yaml` (two
 * compactions) with `provider.summarizer: {upstream: …}`.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { readLog } from '@compaction-sim/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  canonicalJson, cassetteKey, cassettePathOf, replyOfUpstream, upstreamMessages, type CassetteFile,
} from '../../src/provider/upstream.ts'
import { REPO_ROOT, runSim, tempDir } from '../cli/run-sim.ts'

const BASE = join(REPO_ROOT, 'scenarios/faults/fault-27-summary-not-smaller.yaml')
const KEY = 'sk-test-standin-0123456789abcdef'

interface StandIn {
  url: string
  /** Bodies received, in order. */
  bodies: Array<Record<string, unknown>>
  /** Authorization headers received, in order. */
  auth: Array<string | undefined>
  close(): Promise<void>
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

/** The stand-in upstream: each reply is a short checkpoint naming its request number, streamed in three pieces. */
async function standIn(): Promise<StandIn> {
  const bodies: Array<Record<string, unknown>> = []
  const auth: Array<string | undefined> = []
  const server: Server = createServer((req, res) => {
    void bodyOf(req).then((text) => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}')
        return
      }
      const body = JSON.parse(text) as Record<string, unknown>
      bodies.push(body)
      auth.push(req.headers.authorization)
      const n = bodies.length
      const id = `chatcmpl-standin-${n}`
      const chunk = (delta: Record<string, unknown>, finish: string | null): string =>
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model: body['model'], choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(chunk({ role: 'assistant', content: '' }, null))
      res.write(chunk({ content: `## Checkpoint ${n}\nThe user asked why ` }, null))
      res.write(chunk({ content: 'repo.config.yaml fails; see src/config/load.ts.' }, null))
      res.write(chunk({}, 'stop'))
      res.end('data: [DONE]\n\n')
    })
  })
  server.listen(0, '127.0.0.1')
  await new Promise<void>((resolve) => server.once('listening', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`, bodies, auth,
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()) }),
  }
}

let tmp: { dir: string; cleanup: () => Promise<void> }
let base = ''
let upstream: StandIn

beforeAll(async () => {
  tmp = await tempDir()
  const text = await readFile(BASE, 'utf8')
  base = text.slice(0, text.indexOf('faults:\n'))
  upstream = await standIn()
})
afterAll(async () => {
  await upstream.close()
  await tmp.cleanup()
})

/** Writes scenario `name` with `summarizer` (a YAML flow value) and returns its path. */
async function scenario(name: string, summarizer: string): Promise<string> {
  const text = base.replace('name: fault-27-summary-not-smaller', `name: ${name}`)
    .replace('  contextWindow: 2000\n', `  contextWindow: 2000\n  summarizer: ${summarizer}\n`)
  const file = join(tmp.dir, `${name}.yaml`)
  await writeFile(file, text)
  return file
}

const upstreamOf = (url: string): string => `{upstream: {url: '${url}', model: stand-in-7b, apiKeyEnv: STANDIN_KEY}}`

async function summaryTexts(outDir: string): Promise<string[]> {
  const report = JSON.parse(await readFile(join(outDir, 'report.json'), 'utf8')) as { scenarios: Array<{ artifacts: { log: string } }> }
  const { events } = await readLog(join(outDir, report.scenarios[0]?.artifacts.log ?? 'missing'), { dialect: 'seed' })
  return events.filter((e) => e.type === 'compaction/summary')
    .map((e) => ((e.data as unknown as { summary: Array<{ text?: string }> }).summary).map((b) => b.text ?? '').join(''))
}

describe('record once, replay forever (issue #20)', () => {
  it('--record writes a cassette; replays with the upstream closed give a byte-identical report.json; a missing entry exits 2', async () => {
    const file = await scenario('upstream-record', upstreamOf(upstream.url))
    const cassette = cassettePathOf(file)
    expect(cassette).toBe(join(tmp.dir, 'upstream-record.cassette.json'))
    const recordDir = join(tmp.dir, 'out-record')
    const recorded = await runSim(['run', file, '--record', '--out-dir', recordDir, '--reporter', 'json'], { env: { STANDIN_KEY: KEY } })
    expect(recorded.stderr).not.toContain('Error')
    expect(recorded.exitCode).toBe(0)

    // The stand-in was asked once per distinct compaction request, with the key from the environment.
    expect(upstream.bodies.length).toBeGreaterThanOrEqual(1)
    expect(upstream.auth.every((a) => a === `Bearer ${KEY}`)).toBe(true)
    const first = upstream.bodies[0] as { model: string; stream: boolean; messages: Array<{ role: string; content: string }> }
    expect(first.model).toBe('stand-in-7b')
    expect(first.stream).toBe(true)
    expect(first.messages.some((m) => m.content.includes('repo.config.yaml'))).toBe(true)

    // The cassette: one entry per request, keyed by the digest of the canonical body; never the key itself.
    const text = await readFile(cassette, 'utf8')
    expect(text).not.toContain(KEY)
    const doc = JSON.parse(text) as CassetteFile
    expect(doc.kind).toBe('compaction-sim/cassette')
    const keys = Object.keys(doc.entries)
    expect(keys).toEqual(upstream.bodies.map((b) => cassetteKey(b as never)).sort())
    expect(keys).toEqual([...keys].sort())
    for (const key of keys) expect(doc.entries[key]?.response.body).toContain('data: [DONE]')

    // The log holds what the upstream said.
    const texts = await summaryTexts(recordDir)
    expect(texts[0]).toBe('## Checkpoint 1\nThe user asked why repo.config.yaml fails; see src/config/load.ts.')
    expect(texts.length).toBe(upstream.bodies.length)

    // Replay, twice, with the stand-in closed: nothing reaches it, and the reports are byte-identical.
    const asked = upstream.bodies.length
    await upstream.close()
    const replays: string[] = []
    for (const dir of ['out-replay-1', 'out-replay-2']) {
      const replayed = await runSim(['run', file, '--out-dir', join(tmp.dir, dir), '--reporter', 'json'])
      expect(replayed.exitCode).toBe(0)
      replays.push(await readFile(join(tmp.dir, dir, 'report.json'), 'utf8'))
    }
    expect(upstream.bodies.length).toBe(asked)
    const recordReport = await readFile(join(recordDir, 'report.json'), 'utf8')
    expect(replays[0]).toBe(recordReport)
    expect(replays[1]).toBe(recordReport)
    expect(await summaryTexts(join(tmp.dir, 'out-replay-1'))).toEqual(texts)
    expect(JSON.parse(recordReport).summary).toMatchObject({ passed: 1 })

    // A missing entry: exit 2, naming the request and its key, never a call to the network.
    const [dropped, ...rest] = keys
    const entries = Object.fromEntries(rest.map((k) => [k, doc.entries[k]]))
    await writeFile(cassette, JSON.stringify({ ...doc, entries }))
    const missing = await runSim(['run', file, '--out-dir', join(tmp.dir, 'out-missing'), '--reporter', 'json'])
    expect(missing.exitCode).toBe(2)
    const error = (JSON.parse(missing.stdout) as { scenarios: Array<{ error?: string; errorKind?: string }> }).scenarios[0]
    expect(error?.errorKind).toBe('input')
    expect(error?.error).toMatch(/no cassette entry for compaction request #\d+ \(route mock-2k, key sha256:[0-9a-f]{64}\)/)
    expect(error?.error).toContain(dropped)
    expect(error?.error).toContain('upstream-record.cassette.json')
    expect(error?.error).toContain('--record')
    expect(upstream.bodies.length).toBe(asked)

    // Re-recording with the upstream gone fails clearly too (exit 2, the URL named), and keeps what was recorded.
    const offline = await runSim(['run', file, '--record', '--out-dir', join(tmp.dir, 'out-offline'), '--reporter', 'json'], {
      env: { STANDIN_KEY: KEY },
    })
    expect(offline.exitCode).toBe(2)
    expect(offline.stdout).toContain(`POST ${upstream.url}/chat/completions failed`)
    expect(Object.keys((JSON.parse(await readFile(cassette, 'utf8')) as CassetteFile).entries)).toEqual(rest)
    upstream = await standIn() // afterAll closes it again
  })

  it('--record without the key variable exits 2 naming it; no cassette is written', async () => {
    const file = await scenario('upstream-nokey', upstreamOf(upstream.url))
    upstream.bodies.length = 0
    const run = await runSim(['run', file, '--record', '--out-dir', join(tmp.dir, 'out-nokey'), '--reporter', 'json'])
    expect(run.exitCode).toBe(2)
    expect(run.stdout).toContain('environment variable STANDIN_KEY (apiKeyEnv) is not set')
    await expect(readFile(cassettePathOf(file), 'utf8')).rejects.toThrow(/ENOENT/)
    expect(upstream.bodies).toEqual([])
  })

  it('a replay with no cassette at all exits 2 naming the first request', async () => {
    const file = await scenario('upstream-none', upstreamOf(upstream.url))
    await rm(cassettePathOf(file), { force: true })
    upstream.bodies.length = 0
    const run = await runSim(['run', file, '--out-dir', join(tmp.dir, 'out-none'), '--reporter', 'json'])
    expect(run.exitCode).toBe(2)
    expect(run.stdout).toMatch(/no cassette entry for compaction request #\d+ \(route mock-2k/)
    expect(upstream.bodies).toEqual([])
  })

  it('--record cannot be combined with --seeds', async () => {
    const file = await scenario('upstream-seeds', upstreamOf(upstream.url))
    const run = await runSim(['run', file, '--record', '--seeds', '1..2'])
    expect(run.exitCode).toBe(2)
    expect(run.stderr).toContain('--seeds cannot be combined with --record')
  })
})

describe('upstream summarizer validation', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['bad-url', "{upstream: {url: 'not a url'}}", /\/provider\/summarizer\/upstream\/url.*absolute http\(s\) URL/],
    ['ftp-url', "{upstream: {url: 'ftp://127.0.0.1/v1'}}", /\/provider\/summarizer\/upstream\/url.*http or https/],
    ['query-url', "{upstream: {url: 'http://127.0.0.1/v1?key=abc'}}", /\/provider\/summarizer\/upstream\/url.*credentials, a query/],
    ['key-in-env', "{upstream: {url: 'http://127.0.0.1/v1', apiKeyEnv: 'sk-proj-0123456789abcdefghij'}}", /\/provider\/summarizer\/upstream\/apiKeyEnv.*looks like a key/],
    ['unknown-key', "{upstream: {url: 'http://127.0.0.1/v1', key: 'x'}}", /\/provider\/summarizer\/upstream/],
    ['no-url', '{upstream: {model: m}}', /\/provider\/summarizer\/upstream/],
  ]
  for (const [name, value, pattern] of cases) {
    it(`${name}: exit 2 with file:line and the field`, async () => {
      const file = await scenario(`upstream-${name}`, value)
      const run = await runSim(['run', file, '--out-dir', join(tmp.dir, `out-${name}`), '--reporter', 'json'])
      expect(run.exitCode).toBe(2)
      const error = (JSON.parse(run.stdout) as { scenarios: Array<{ error?: string; errorKind?: string }> }).scenarios[0]
      expect(error?.errorKind).toBe('input')
      expect(error?.error).toContain(`upstream-${name}.yaml:`)
      expect(error?.error).toMatch(pattern)
    })
  }
})

describe('cassette keys and replies', () => {
  it('keys are the digest of canonical JSON: key order does not matter, content does', () => {
    expect(canonicalJson({ b: [1, { d: 2, c: 'x' }], a: null, skip: undefined })).toBe('{"a":null,"b":[1,{"c":"x","d":2}]}')
    expect(cassetteKey({ model: 'm', messages: [], stream: true })).toBe(cassetteKey({ stream: true, messages: [], model: 'm' }))
    expect(cassetteKey({ model: 'm', messages: [] })).not.toBe(cassetteKey({ model: 'n', messages: [] }))
    expect(cassetteKey({ model: 'm' })).toMatch(/^sha256:[0-9a-f]{64}$/)
  })

  it('tool calls, tool results and images are flattened to text; reasoning is dropped', () => {
    const messages = upstreamMessages([
      { role: 'assistant', content: [{ type: 'reasoning', text: 'hmm' }, { type: 'text', text: 'Reading.' }, { type: 'tool-call', id: 'c1', name: 'read_file', arguments: '{"path":"a.ts"}' }] },
      { role: 'user', content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'export {}' }] }] },
      { role: 'user', content: [{ type: 'image', attachment: { attachmentId: 'sha256:x', mediaType: 'image/png', bytes: 1 } }] },
      { role: 'assistant', content: [{ type: 'reasoning', text: 'only thinking' }] },
    ] as never)
    expect(messages).toEqual([
      { role: 'assistant', content: 'Reading.\n[tool call read_file {"path":"a.ts"}]' },
      { role: 'user', content: '[tool result c1] export {}' },
      { role: 'user', content: '[image image/png]' },
    ])
  })

  it('reads a streamed and a JSON completion; length is max-tokens; an in-band error is refused', () => {
    const entry = (body: string) => ({ url: 'u', request: {}, response: { status: 200, contentType: '', body } })
    const sse = 'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: {"choices":[{"delta":{"content":"b"},"finish_reason":"length"}]}\n\ndata: [DONE]\n\n'
    expect(replyOfUpstream(entry(sse), 'k')).toEqual({ blocks: [{ type: 'text', text: 'ab' }], finish: 'max-tokens' })
    const json = '{"choices":[{"message":{"role":"assistant","content":"whole"},"finish_reason":"stop"}]}'
    expect(replyOfUpstream(entry(json), 'k')).toEqual({ blocks: [{ type: 'text', text: 'whole' }], finish: 'stop' })
    expect(() => replyOfUpstream(entry('data: {"error":{"message":"overloaded"}}\n\n'), 'k')).toThrow(/in-band error/)
  })
})
