/**
 * Findings of the fuzzer that have no scenario equivalent (they need an in-process crash), pinned as shrunk
 * command sequences: each must now run clean (model agreement, convergence, no §12 violation).
 */
import { describe, expect, it } from 'vitest'
import { AssistantToolBatchCommand } from '../../src/fuzz/commands/assistant-tool-batch.ts'
import { CrashRestoreCommand } from '../../src/fuzz/commands/crash-restore.ts'
import { UserTurnCommand } from '../../src/fuzz/commands/user-turn.ts'
import { describeFailure, isFailure, runSession } from '../../src/fuzz/run.ts'

describe('fuzz regressions (issue #8)', () => {
  it('FC_SEED=3: a pruned copy of a crash-repair synthetic result is no repair closer (INV-19 false positive, §11.4, §5.4)', async () => {
    const config = {
      contextWindow: 3000, imageTokens: 20, policy: { thresholdRatio: 0.5, retainRatio: 0.05, compactionRetries: 0, maxOverflowRetries: 0 },
      pruner: { headChars: 0, tailChars: 0, thresholdChars: 43 },
    }
    const commands = [new UserTurnCommand(1, 0), new AssistantToolBatchCommand(2, 0.46), new CrashRestoreCommand(0)]
    const verdict = await runSession(config, commands)
    // The shape that triggered it: the restored session's first pre-step prunes the synthetic results.
    const types = verdict.driver.log.events.map((e) => e.type)
    expect(types.slice(types.indexOf('session/end-seed'))).toEqual(expect.arrayContaining(['compaction/prune', 'tool/result']))
    expect(isFailure(verdict) ? describeFailure(verdict) : null).toBeNull()
  })
})
