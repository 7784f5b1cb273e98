/**
 * Secrets (issue #11, design §8): API keys and Authorization headers never appear in captures, logs or
 * reports. Keys are planted three ways — the reference subject's configured key through a full `sim run`
 * (scenario with a fault, so error paths are covered too), the same subject pointed at a `sim serve`-style
 * server (whose capture proves the key was sent, and redacted), and every secret-bearing header against a
 * `sim serve` child process — then every output file, stdout and stderr are searched for the key.
 */
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { scenarioTranscript } from '../../src/run/transcript.ts'
import { loadScenario } from '../../src/scenario/load.ts'
import { resolveScenario } from '../../src/scenario/resolve.ts'
import { serve } from '../../src/serve/serve.ts'
import { runReferenceSession } from '../../src/subjects/reference.ts'
import { REPO_ROOT, runSim, tempDir } from '../cli/run-sim.ts'
import { SERVE_HOOK_TIMEOUT_MS, startServe } from './support/child.ts'

/** The key the reference subject's HTTP adapter is configured with (`subjects/reference.ts`). */
const REFERENCE_KEY = 'sk-compaction-sim'
const PLANTED = {
  'authorization': 'Bearer sk-planted-9d2e41b7c0',
  'x-api-key': 'sk-ant-planted-44c1e0a9f3',
  'api-key': 'azure-planted-71f0c2d8',
  'proxy-authorization': 'Basic cGxhbnRlZDpwcm94eQ==',
  'cookie': 'session=planted-cookie-5b8e',
} as const

let dir: string
let cleanup: () => Promise<void>

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
})
afterAll(async () => {
  await cleanup()
})

/** Every file under `root` (recursively) as text, with its path. */
async function filesUnder(root: string): Promise<Array<{ path: string; text: string }>> {
  const out: Array<{ path: string; text: string }> = []
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    out.push({ path, text: await readFile(path, 'utf8') })
  }
  return out
}

function leaks(haystacks: ReadonlyArray<{ path: string; text: string }>, needles: readonly string[]): string[] {
  return haystacks.flatMap((h) => needles.filter((n) => h.text.includes(n)).map((n) => `${h.path}: ${n}`))
}

describe('secrets never reach captures, logs or reports', () => {
  it('a full sim run (reference subject with its API key) writes no key into any output', async () => {
    const outDir = join(dir, 'run')
    const result = await runSim(['run', 'scenarios/smoke/no-pressure.yaml', 'scenarios/smoke/overflow-recovery.yaml', '--out-dir', outDir,
      '--reporter', 'pretty', '--reporter', 'json', '--reporter', 'junit'])
    expect(result.exitCode).toBe(0)
    const files = await filesUnder(outDir)
    expect(files.map((f) => f.path.slice(outDir.length + 1)).sort()).toContain('smoke--overflow-recovery.requests.jsonl')
    expect(files.length).toBeGreaterThanOrEqual(9)
    const all = [...files, { path: 'stdout', text: result.stdout }, { path: 'stderr', text: result.stderr }]
    expect(leaks(all, [REFERENCE_KEY, 'Bearer'])).toEqual([])
  }, 300_000)

  it('the reference subject sends its key over a real socket, and the server capture holds only [redacted]', async () => {
    const file = join(REPO_ROOT, 'scenarios/smoke/no-pressure.yaml')
    const scenario = resolveScenario(await loadScenario(file), { file })
    const transcript = await scenarioTranscript(scenario, scenario.seed)
    const server = await serve({ scenario: file })
    const logPath = join(dir, 'reference.jsonl')
    const session = await runReferenceSession({ scenario, transcript, logPath, baseUrl: server.baseURL, seed: 1 })
    const captured = await server.close()
    expect(session.outcomes.map((o) => o.reason.kind)).toEqual(['completed', 'completed'])
    expect(captured.map((c) => c.headers['authorization'])).toEqual(['[redacted]', '[redacted]'])
    const texts = [
      { path: 'capture', text: JSON.stringify(captured) },
      { path: logPath, text: await readFile(logPath, 'utf8') },
      { path: 'requests', text: JSON.stringify(session.requests) },
    ]
    expect(leaks(texts, [REFERENCE_KEY])).toEqual([])
  })

  it('sim serve: every secret-bearing header is redacted from the capture, and no key reaches stdout or stderr', async () => {
    const capturePath = join(dir, 'serve.capture.jsonl')
    const child = await startServe(['--capture', capturePath])
    const headers = { 'content-type': 'application/json', ...PLANTED }
    const body = JSON.stringify({ model: 'mock-128k', stream: true, messages: [{ role: 'user', content: 'hi' }] })
    const ok = await fetch(`${child.ready.baseURL}/chat/completions`, { method: 'POST', headers, body })
    await ok.text()
    const refused = await fetch(`${child.ready.baseURL}/chat/completions`, { method: 'POST', headers, body: '{not json' })
    await refused.text()
    const models = await fetch(`${child.ready.baseURL}/models`, { headers: PLANTED })
    await models.text()
    expect([ok.status, refused.status, models.status]).toEqual([200, 400, 200])
    expect(await child.stop('SIGTERM')).toBe(0)
    const capture = await readFile(capturePath, 'utf8')
    const captured = JSON.parse(capture.trim()) as { headers: Record<string, string> }
    for (const name of Object.keys(PLANTED)) expect(captured.headers[name]).toBe('[redacted]')
    const secrets = Object.values(PLANTED).map((v) => v.replace(/^(Bearer|Basic) /, ''))
    const all = [
      { path: capturePath, text: capture },
      { path: 'stdout', text: JSON.stringify(child.lines) },
      { path: 'stderr', text: child.stderr() },
    ]
    expect(leaks(all, secrets)).toEqual([])
    expect(child.lines.filter((l) => l['type'] === 'request').map((l) => l['status'])).toEqual([200, 400, 200])
  }, SERVE_HOOK_TIMEOUT_MS)
})
