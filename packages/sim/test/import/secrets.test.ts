/**
 * Secrets on import (issue #20): a secret of every kind of `SECRET_PATTERNS` is planted in a session of every
 * import format — in the system prompt, user text, tool-call arguments, tool results and reasoning — and
 * `sim import` must leave none of them in any output: the scenario YAML, a sidecar transcript, stdout and
 * stderr. Each kind's placeholder must appear (so each pattern did the work), and `--keep-secrets` must keep
 * the planted values (so the plants reached the output at all).
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IMPORT_FORMATS, SECRET_PATTERNS, importSession } from '../../src/import/index.ts'
import { runSim, tempDir } from '../cli/run-sim.ts'
import { formatSession, png, type Turn } from './long-sessions.ts'

/** One planted secret per pattern kind: the text planted and the part that must never reach an output. */
const PLANTED: Record<string, { text: string; secret: string }> = {
  'private-key': {
    text: '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAplantedPrivateKeyBodyLine0123456789abcdef\nQ29tcGFjdGlvblNpbVBsYW50ZWQ=\n-----END RSA PRIVATE KEY-----',
    secret: 'MIIEowIBAAKCAQEAplantedPrivateKeyBodyLine0123456789abcdef',
  },
  'anthropic-key': { text: 'sk-ant-api03-PlantedAnthropicKey0123456789abcdefXYZ', secret: 'PlantedAnthropicKey0123456789abcdefXYZ' },
  'openai-key': { text: 'sk-proj-PlantedOpenAiProjectKey0123456789abcd', secret: 'PlantedOpenAiProjectKey0123456789abcd' },
  'aws-access-key-id': { text: 'AKIAPLANTED123456789', secret: 'AKIAPLANTED123456789' },
  'aws-secret-key': { text: 'aws_secret_access_key = PlantedAwsSecret0123456789abcdefghijKLMN', secret: 'PlantedAwsSecret0123456789abcdefghijKLMN' },
  'github-token': { text: 'ghp_PlantedGithubToken0123456789abcdefghijkl', secret: 'PlantedGithubToken0123456789abcdefghijkl' },
  'slack-token': { text: 'xoxb-1234567890-PlantedSlackToken42', secret: 'PlantedSlackToken42' },
  'google-api-key': { text: 'AIzaPlantedGoogleKey0123456789abcdefghij', secret: 'PlantedGoogleKey0123456789abcdefghij' },
  'jwt': {
    text: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkLWp3dCJ9.PlantedJwtSignature0123456789',
    secret: 'PlantedJwtSignature0123456789',
  },
  'bearer-token': { text: 'Authorization: Bearer PlantedBearerToken0123456789', secret: 'PlantedBearerToken0123456789' },
  'secret-assignment': { text: 'password=PlantedPassword0123', secret: 'PlantedPassword0123' },
  'email': { text: 'mail planted.person@example.org please', secret: 'planted.person@example.org' },
}

/** A two-turn session with every planted text in every place a session carries text. */
function plantedTurns(): Turn[] {
  const all = Object.values(PLANTED).map((p) => p.text).join('\n')
  return [
    {
      user: `Here are my credentials:\n${all}`, image: png(3, 2, [10, 20, 30]),
      steps: [{
        reasoning: `The user pasted ${PLANTED['openai-key']?.text} and ${PLANTED['email']?.text}`, text: `Checking ${PLANTED['jwt']?.text}`,
        calls: [
          { id: 'call_s1', name: 'http_get', input: { url: 'https://api.example.com', headers: { Authorization: `Bearer ${PLANTED['bearer-token']?.secret}` }, note: all }, output: all, failed: false },
          { id: 'call_s2', name: 'read_file', input: { path: '.env' }, output: `${PLANTED['aws-secret-key']?.text}\n${PLANTED['private-key']?.text}\n`, failed: true },
        ],
      }],
      final: `Rotate ${PLANTED['github-token']?.text} and ${PLANTED['slack-token']?.text} now.`,
    },
    { user: `Also ${PLANTED['google-api-key']?.text}`, image: null, steps: [], final: `And ${PLANTED['anthropic-key']?.text}.` },
  ]
}

let dir: string
let cleanup: () => Promise<void>

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
})
afterAll(async () => {
  await cleanup()
})

async function outputsUnder(root: string): Promise<Array<{ path: string; text: string }>> {
  const files = await readdir(root)
  return Promise.all(files.filter((f) => f.endsWith('.yaml') || f.endsWith('.transcript.jsonl'))
    .map(async (f) => ({ path: f, text: await readFile(join(root, f), 'utf8') })))
}

describe('planted secrets never reach an import output', () => {
  it('every listed kind has a plant', () => {
    expect(Object.keys(PLANTED).sort()).toEqual(SECRET_PATTERNS.map((p) => p.kind).sort())
  })

  it.each(IMPORT_FORMATS.map((f) => [f]))('%s: redacted in the scenario YAML, stdout and stderr; placeholders of every kind', async (format) => {
    const system = `You are a bot. Contact admin ${PLANTED['email']?.text}; key ${PLANTED['aws-access-key-id']?.text}.`
    const source = join(dir, `${format}-session.${format === 'claude-code' || format === 'codex' || format === 'dsh' ? 'jsonl' : 'json'}`)
    await writeFile(source, formatSession(format, plantedTurns(), system))
    const outDir = join(dir, `out-${format}`)
    await mkdir(outDir)
    const toFile = await runSim(['import', format, source, '-o', join(outDir, 'session.yaml')])
    const toStdout = await runSim(['import', format, source])
    expect(toFile.exitCode).toBe(0)
    expect(toStdout.exitCode).toBe(0)
    const outputs = [...await outputsUnder(outDir), { path: 'stdout', text: toStdout.stdout },
      { path: 'stderr (-o)', text: toFile.stderr }, { path: 'stderr', text: toStdout.stderr }]
    const leaks = outputs.flatMap((o) => Object.entries(PLANTED).filter(([, p]) => o.text.includes(p.secret)).map(([kind]) => `${o.path}: ${kind}`))
    expect(leaks).toEqual([])
    for (const kind of Object.keys(PLANTED)) expect(toStdout.stdout, kind).toContain(`[REDACTED:${kind}]`)
    expect(toStdout.stderr).toMatch(/secrets redacted: .*\d+ openai-key/)
    // Redaction inside tool-call arguments keeps them valid JSON.
    const { transcript } = await importSession(format, source)
    const args = transcript.turns.flatMap((t) => t.steps.flatMap((s) => s.reply.blocks.filter((b) => b.type === 'tool-call')))
      .map((b) => String((b as unknown as Record<string, unknown>)['arguments']))
    expect(args.length).toBe(2)
    for (const text of args) expect(() => JSON.parse(text) as unknown).not.toThrow()
    expect(args.join('')).toContain('[REDACTED:bearer-token]')

    const kept = await runSim(['import', format, source, '--keep-secrets'])
    expect(kept.exitCode).toBe(0)
    const missing = Object.entries(PLANTED).filter(([, p]) => !kept.stdout.includes(p.secret))
    expect(missing.map(([kind]) => kind)).toEqual([])
    expect(kept.stdout).not.toContain('[REDACTED:')
  })
})
