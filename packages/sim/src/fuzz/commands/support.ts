/** Shared helpers of the fuzz commands: deterministic filler text, usage reports and the post-command check. */
import type { ContentBlock, TokenUsage } from '@compaction-sim/core'
import { imageRef, type Phase, type SessionDriver } from '../driver.ts'
import { adopt, assertAgrees, ModelDisagreementError, type SessionModel } from '../model.ts'

/** `n` characters of deterministic filler built from `word`. */
export function filler(n: number, word: string): string {
  return `${word} `.repeat(Math.ceil(n / (word.length + 1))).slice(0, Math.max(1, n))
}

/** `count` image blocks tagged `tag`. */
export function images(count: number, tag: string): ContentBlock[] {
  return Array.from({ length: count }, (_, i) => ({
    type: 'image', attachment: imageRef(String((tag.length + i) % 10), `${tag}-${i}.png`),
  }))
}

/** A provider usage report reading `ratio` of the session's window as input. */
export function usageAt(driver: SessionDriver, ratio: number): TokenUsage {
  return { inputTokens: Math.floor(driver.config.contextWindow * ratio), outputTokens: 20 }
}

/**
 * After a command: the observed phase must be one of `allowed`; the model adopts the observed facts it
 * could not predict, then must agree with the subject (`assertAgrees`); then the driver's `afterCommand` hook
 * runs (the per-command checker of `runSession`).
 */
export async function settleModel(model: SessionModel, driver: SessionDriver, command: string, allowed: readonly Phase[]): Promise<void> {
  if (!allowed.includes(driver.phase)) {
    throw new ModelDisagreementError(`after ${command}: phase ${driver.phase}, expected one of ${allowed.join(', ')}${errorText(driver)}`)
  }
  adopt(model, driver)
  model.turns = driver.log.state.lastTurn
  assertAgrees(model, driver, command)
  await driver.afterCommand?.(command)
}

function errorText(driver: SessionDriver): string {
  return driver.error === null ? '' : ` (loop error: ${driver.error instanceof Error ? driver.error.message : String(driver.error)})`
}
