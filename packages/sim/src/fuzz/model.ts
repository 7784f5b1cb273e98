/**
 * The plain-data model of the model-based suite (issue #8) and the agreement check run after every command:
 * the model's phase, turn count and pending tool batch must match the driven subject, tool pairing must be
 * balanced as the model predicts (INV-08), no live lock may outlive a command, and `replaceGeneration` never
 * goes backwards within a lifecycle. Cheap (no log replay): the checker runs on the whole log per run.
 */
import type { SessionDriver, Phase, SummaryFault } from './driver.ts'
import { plural } from '../plural.ts'

/** What the model knows about the session; plain data, copied by fast-check between commands. */
export interface SessionModel {
  phase: Phase
  /** The log's last turn number. */
  turns: number
  /** Tool calls of the batch awaiting results. */
  pendingCalls: number
  /** The last observed `replaceGeneration` (a lower bound for the next). */
  generation: number
  /** Summarizer faults armed and not yet consumed, as far as the model knows (an upper bound). */
  armed: SummaryFault[]
  /** A counter for unique tool-call ids. */
  nextCall: number
  /** In-process crashes so far. */
  crashes: number
  /** A live compaction lock (an orphan left by an injected FAULT-60/61 storage fault, §7.12). */
  lockLive: boolean
  /** `compaction/end` rejections armed and not yet fired. */
  appendArmed: number
}

/** The model of a fresh session. */
export function initialModel(): SessionModel {
  return { phase: 'idle', turns: 0, pendingCalls: 0, generation: 0, armed: [], nextCall: 0, crashes: 0, lockLive: false, appendArmed: 0 }
}

/** A disagreement between the model and the subject (a failed command). */
export class ModelDisagreementError extends Error {
  override readonly name = 'ModelDisagreementError'
}

/** Throws `ModelDisagreementError` naming the first disagreement between `model` and `driver`. */
export function assertAgrees(model: SessionModel, driver: SessionDriver, command: string): void {
  const fail = (what: string): never => { throw new ModelDisagreementError(`after ${command}: ${what}`) }
  driver.commandsRun++
  if (driver.error !== null) fail(`the loop rejected: ${driver.error instanceof Error ? driver.error.message : String(driver.error)}`)
  const state = driver.log.state
  if (driver.phase !== model.phase) fail(`phase is ${driver.phase}, the model says ${model.phase}`)
  if (state.lastTurn !== model.turns) fail(`last turn is ${state.lastTurn}, the model says ${model.turns}`)
  if ((state.openTurn === null) !== (model.phase === 'idle')) fail(`open turn ${state.openTurn} in phase ${model.phase}`)
  if (state.surface.firstNegativePosition !== -1) fail(`tool pairing negative at position ${state.surface.firstNegativePosition} (INV-08)`)
  const open = state.surface.balanceAt(driver.log.nodes.length)
  if (open !== model.pendingCalls) fail(`${plural(open, 'tool call')} without result on the surface, the model says ${model.pendingCalls}`)
  if ((state.lock.state === 'live') !== model.lockLive) {
    fail(`lock is ${state.lock.state}, the model says ${model.lockLive ? 'live' : 'not live'}`)
  }
  // INV-19: a bracket outlives its pass only through a rejected end append (FAULT-60/61).
  if (state.lock.state === 'live' && driver.appendFaultsFired === 0) {
    fail(`a live compaction lock without a storage fault (bracket ${state.lock.bracket.compactionId})`)
  }
  if (state.surface.replaceGeneration < model.generation) {
    fail(`replaceGeneration went back from ${model.generation} to ${state.surface.replaceGeneration}`)
  }
}

/** Observed facts the model adopts after a command whose outcome the model allows several ways. */
export function adopt(model: SessionModel, driver: SessionDriver): void {
  model.phase = driver.phase
  model.pendingCalls = driver.pendingCalls.length
  model.generation = driver.log.state.surface.replaceGeneration
  model.armed = [...driver.armed]
  model.lockLive = driver.log.state.lock.state === 'live'
  model.appendArmed = driver.appendFaultsArmed
}
