/**
 * Public API of `@compaction-sim/subject-dsh`: the released official DSH engine (`@deepseek-ai/dsh-*` 0.1.0-rc.8)
 * as a `Subject` of `@compaction-sim/sim`. Kept out of sim so that installing sim does not pull the engine's
 * packages; `sim run --subject dsh` imports this package only when asked (`npm i -D @compaction-sim/subject-dsh`).
 * Importing this index loads no DSH package: the engine loads on the first session, after the polyfill and the
 * seeded UUIDs are installed.
 */
export { dshSubject, runDshSession, dshUnsupportedReason, DSH_DIALECT } from './dsh-subject.ts'
/** Types only: a value export of `dsh-engine.ts` would load the DSH packages before determinism is installed. */
export type { DshEngineInput, DshEngineOutput } from './dsh-engine.ts'
/** The one official-engine idle wait, shared with the recorder and the bench driver (`@compaction-sim/fixtures/record-dsh/idle`). */
export { idleAfterRun, type AgentStatusSource, type IdleAfterRunOptions } from '@compaction-sim/fixtures/record-dsh/idle'
