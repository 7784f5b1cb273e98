/**
 * Runs the registered checks over the one model fold: builds each check's hooks for the run, dispatches
 * every item to the hooks that asked for its type, and collects violations (bounded per id), skipped
 * instances and coverage. A hook that throws is a bug in sim: the check is disabled and the failure is
 * recorded as an internal error, so one broken check never hides the others' verdicts.
 */
import type { LogEvent } from '@compaction-sim/core'
import type { CheckerModel } from './model.ts'
import type {
  CheckHooks, CheckId, Coverage, FoldItem, InvariantCheck, Reporter, RunContext, Violation,
} from './types.ts'

/** Violations kept per invariant id; the rest are counted in `suppressed` (a corrupt log cannot flood memory). */
export const VIOLATIONS_PER_ID_MAX = 1000

/** A check that threw: its id and what it threw. */
export interface InternalFailure {
  id: CheckId | 'model'
  message: string
}

type Hook = (event: LogEvent, item: FoldItem, model: CheckerModel) => void

interface Live {
  check: InvariantCheck<CheckerModel>
  hooks: CheckHooks<CheckerModel>
  disabled: boolean
}

/** A hook with the check it belongs to (so a throw disables that check). */
interface BoundHook {
  readonly live: Live
  readonly hook: Hook
}

/** The hooks that see one event type, built once per type and run (dispatch table). */
interface TypeHooks {
  readonly before: BoundHook[]
  readonly after: BoundHook[]
}

interface Tally {
  kept: number
  suppressed: number
  skipped: number
  firstSkipReason: string
}

/** One run of every applicable check over one log. */
export class Dispatcher {
  private readonly live: Live[] = []
  /** The live checks that have an `input` hook (most do not: this list keeps the per-line cost down). */
  private readonly inputs: Live[] = []
  private readonly coverage = new Map<CheckId, Coverage>()
  private readonly tallies = new Map<CheckId, Tally>()
  private readonly byType = new Map<string, TypeHooks>()
  private readonly violationsList: Violation[] = []
  private readonly failures: InternalFailure[] = []
  private readonly reporters = new Map<CheckId, Reporter>()
  private current: FoldItem | null = null

  constructor(checks: readonly InvariantCheck<CheckerModel>[], ctx: RunContext) {
    for (const check of checks) {
      const applicability = check.applicability?.(ctx) ?? { kind: 'applies' }
      if (applicability.kind !== 'applies') {
        this.coverage.set(check.id, { id: check.id, status: applicability.kind, reason: applicability.reason, skipped: 0 })
        continue
      }
      this.tallies.set(check.id, { kept: 0, suppressed: 0, skipped: 0, firstSkipReason: '' })
      const entry: Live = { check, hooks: {}, disabled: false }
      try {
        entry.hooks = check.create(ctx, this.reporter(check.id))
        this.live.push(entry)
        if (entry.hooks.input !== undefined) this.inputs.push(entry)
      } catch (error) {
        this.fail(entry, error)
      }
    }
  }

  /** Every violation so far, in detection order. */
  get violations(): readonly Violation[] { return this.violationsList }
  /** Checks that threw. */
  get internalFailures(): readonly InternalFailure[] { return this.failures }
  /** Violations dropped beyond the per-id bound. */
  get suppressed(): number {
    let n = 0
    for (const t of this.tallies.values()) n += t.suppressed
    return n
  }

  /** Passes one item through `input`, `before`, the model, and `after`. Returns false if the model itself failed. */
  item(item: FoldItem, model: CheckerModel): boolean {
    this.current = item
    // Problems the input stage found on this line are reported under the id that owns each rule.
    const problems = item.problems
    for (let i = 0; i < problems.length; i++) {
      const p = problems[i] as (typeof problems)[number]
      this.reporters.get(p.id)?.violation(p.seq < 0 ? item.seq : p.seq, p.message)
    }
    const inputs = this.inputs
    for (let i = 0; i < inputs.length; i++) {
      const l = inputs[i] as Live
      if (l.disabled) continue
      try {
        (l.hooks.input as NonNullable<CheckHooks<CheckerModel>['input']>)(item, model)
      } catch (error) {
        this.fail(l, error)
      }
    }
    const event = item.event
    if (event === null || item.duplicate) {
      model.skip(item)
      return true
    }
    const hooks = this.hooksFor(item.type)
    this.run(hooks.before, event, item, model)
    try {
      model.fold(item, event)
    } catch (error) {
      this.failures.push({ id: 'model', message: `fold of seq ${item.seq} failed: ${describe(error)}` })
      return false
    }
    this.run(hooks.after, event, item, model)
    return true
  }

  private run(hooks: readonly BoundHook[], event: LogEvent, item: FoldItem, model: CheckerModel): void {
    for (let i = 0; i < hooks.length; i++) {
      const h = hooks[i] as BoundHook
      if (h.live.disabled) continue
      try {
        h.hook(event, item, model)
      } catch (error) {
        this.fail(h.live, error)
      }
    }
  }

  /** Runs every `end` hook. */
  end(model: CheckerModel): void {
    this.current = null
    for (const l of this.live) {
      const end = l.hooks.end
      if (end !== undefined && !l.disabled) this.guard(l, () => end(model))
    }
  }

  /** Coverage of every registered check, in the order given at construction. */
  coverageOf(checks: readonly InvariantCheck<CheckerModel>[]): Coverage[] {
    return checks.map((c) => {
      const fixed = this.coverage.get(c.id)
      if (fixed !== undefined) return fixed
      const t = this.tallies.get(c.id)
      if (t === undefined || t.skipped === 0) return { id: c.id, status: 'evaluated', reason: '', skipped: 0 }
      return { id: c.id, status: 'partial', reason: t.firstSkipReason, skipped: t.skipped }
    })
  }

  private hooksFor(type: string): TypeHooks {
    let hooks = this.byType.get(type)
    if (hooks !== undefined) return hooks
    hooks = { before: [], after: [] }
    for (const l of this.live) {
      const types = l.hooks.types
      if (types !== undefined && !types.includes(type)) continue
      if (l.hooks.before !== undefined) hooks.before.push({ live: l, hook: l.hooks.before })
      if (l.hooks.after !== undefined) hooks.after.push({ live: l, hook: l.hooks.after })
    }
    this.byType.set(type, hooks)
    return hooks
  }

  private guard(l: Live, run: () => void): void {
    try {
      run()
    } catch (error) {
      this.fail(l, error)
    }
  }

  private fail(l: Live, error: unknown): void {
    l.disabled = true
    const at = this.current === null ? 'at the end of the log' : `at seq ${this.current.seq}`
    this.failures.push({ id: l.check.id, message: `${at}: ${describe(error)}` })
  }

  private reporter(id: CheckId): Reporter {
    const reporter: Reporter = {
      violation: (seq, message, excerptOf) => {
        const tally = this.tallies.get(id)
        if (tally === undefined) return
        if (tally.kept >= VIOLATIONS_PER_ID_MAX) {
          tally.suppressed++
          return
        }
        tally.kept++
        const v: Violation = { id, seq, message }
        const excerpt = excerptOf ?? (this.current !== null && this.current.seq === seq ? this.current.excerpt : undefined)
        if (excerpt !== undefined) v.excerpt = excerpt
        this.violationsList.push(v)
      },
      skip: (_seq, reason) => {
        const tally = this.tallies.get(id)
        if (tally === undefined) return
        if (tally.skipped === 0) tally.firstSkipReason = reason
        tally.skipped++
      },
    }
    this.reporters.set(id, reporter)
    return reporter
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error)
}
