/**
 * The one official-engine idle wait (`idleAfterRun`, shared by the subject, the recorder and the bench driver) on a
 * real cordis `Context`: it resolves on the agent's `idle` only after that agent reported `running`, ignores other
 * agents, releases its listener and timer, and rejects with the caller's error once the (fake-timer) bound passes.
 */
import { Context } from '@deepseek-ai/cordis'
import type {} from '@deepseek-ai/dsh-agent'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { idleAfterRun, type AgentStatusSource } from '../src/index.ts'

type Status = { agent: { id: string }; status: string }
const emit = (ctx: Context, payload: Status): void => {
  (ctx as unknown as { emit(name: string, payload: Status): void }).emit('agent/status', payload)
}
const settled = async (promise: Promise<void>): Promise<string> => {
  let state = 'pending'
  promise.then(() => { state = 'resolved' }, (err: unknown) => { state = `rejected: ${(err as Error).message}` })
  await new Promise((resolve) => setImmediate(resolve))
  return state
}

/** `ctx` as an `AgentStatusSource` that counts how often its subscriptions were disposed. */
const counting = (ctx: Context): { source: AgentStatusSource; disposed: () => number } => {
  let disposed = 0
  const source: AgentStatusSource = {
    on: (name, listener) => {
      const dispose = ctx.on(name, listener)
      return () => { disposed++; return dispose() }
    },
  }
  return { source, disposed: () => disposed }
}

afterEach(() => { vi.useRealTimers() })

describe('idleAfterRun', () => {
  it('resolves on idle after running, not on an idle before running or on another agent; then frees listener and timer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const ctx = new Context()
    const { source, disposed } = counting(ctx)
    const wait = idleAfterRun(source, { id: 'a' }, { timeoutMs: 60_000, onTimeout: (m) => new Error(m) })
    expect(vi.getTimerCount()).toBe(1)
    emit(ctx, { agent: { id: 'a' }, status: 'idle' })
    emit(ctx, { agent: { id: 'b' }, status: 'running' })
    emit(ctx, { agent: { id: 'b' }, status: 'idle' })
    expect(await settled(wait)).toBe('pending')
    emit(ctx, { agent: { id: 'a' }, status: 'running' })
    expect(await settled(wait)).toBe('pending')
    emit(ctx, { agent: { id: 'a' }, status: 'idle' })
    expect(await settled(wait)).toBe('resolved')
    expect([disposed(), vi.getTimerCount()]).toEqual([1, 0])
  })

  it('rejects with the caller\'s error after timeoutMs and releases its listener', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const ctx = new Context()
    const { source, disposed } = counting(ctx)
    const calls: string[] = []
    const wait = idleAfterRun(source, { id: 'a' }, {
      timeoutMs: 500,
      onTimeout: (message) => { calls.push(message); return new RangeError(`turn 3: ${message}`) },
    })
    const outcome = wait.then(() => 'resolved', (err: unknown) => `${(err as Error).name}: ${(err as Error).message}`)
    vi.advanceTimersByTime(499)
    expect(calls).toEqual([])
    vi.advanceTimersByTime(1)
    expect(await outcome).toBe('RangeError: turn 3: agent did not become idle within 500 ms')
    expect(disposed()).toBe(1)
  })
})
