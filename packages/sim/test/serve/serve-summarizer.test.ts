/**
 * `sim serve --scenario` answers compaction requests with the scenario's summarizer (issue #15), like `sim run`:
 * the reasoning-only world scenario's summary route replies with reasoning and no text, over a real socket.
 */
import { COMPACTION_INSTRUCTION, PURPOSE_HEADER } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { join } from 'node:path'
import { REASONING_ONLY_TEXT } from '../../src/provider/summarizers.ts'
import { serve } from '../../src/serve/serve.ts'
import { REPO_ROOT } from '../cli/run-sim.ts'

describe('sim serve with a summarizer', () => {
  it('serves the reasoning-only summarizer for compaction requests and the transcript for conversation ones', async () => {
    const server = await serve({ scenario: join(REPO_ROOT, 'scenarios/world/reasoning-only-summary.yaml') })
    try {
      const post = async (purpose: string | null): Promise<Record<string, unknown>> => {
        const headers: Record<string, string> = { 'content-type': 'application/json' }
        if (purpose !== null) headers[PURPOSE_HEADER] = purpose
        const messages = [{ role: 'user', content: 'Fix the loader.' }, ...(purpose === null ? [] : [{ role: 'user', content: COMPACTION_INSTRUCTION }])]
        const response = await fetch(`${server.baseURL}/chat/completions`, {
          method: 'POST', headers, body: JSON.stringify({ model: server.model, messages, max_tokens: 1000 }),
        })
        const body = await response.json() as { choices: Array<{ message: Record<string, unknown> }> }
        return body.choices[0]?.message ?? {}
      }
      expect(await post('compaction')).toEqual({ role: 'assistant', content: null, reasoning_content: REASONING_ONLY_TEXT })
      expect((await post(null))['content']).toBe('Searching for where keys are checked.')
    } finally {
      await server.close()
    }
  })
})
