/**
 * The official `@anthropic-ai/sdk` against the msw-mounted mock on the anthropic wire (issue #11): the shared
 * judge suite (`test/serve/support/anthropic-judges.ts`); the same suite runs over a real loopback socket in
 * `test/serve/loopback-clients.test.ts`. No nock in this file.
 */
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll } from 'vitest'
import { mountMsw, type MswMount } from '../../src/provider/mount-msw.ts'
import type { MockProvider } from '../../src/provider/mock-provider.ts'
import type { PlannedOutcome } from '../../src/provider/types.ts'
import { describeAnthropicJudges } from '../serve/support/anthropic-judges.ts'
import { provider } from './support.ts'

const outcomes: PlannedOutcome[] = []
let mock: MockProvider
let mount: MswMount
let client: Anthropic

beforeAll(() => {
  mock = provider('anthropic', outcomes)
  mount = mountMsw(mock, 'http://anthropic.mock/v1')
  client = new Anthropic({ apiKey: 'sk-ant-planted-msw', baseURL: 'http://anthropic.mock', maxRetries: 0 })
})
afterAll(() => mount.close())

describeAnthropicJudges('official @anthropic-ai/sdk against the msw mount', {
  client: () => client,
  mock: () => mock,
  queue: (...o) => { outcomes.push(...o) },
  socket: false,
})
