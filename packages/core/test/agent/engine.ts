/** The real compaction engine for agent tests, built over a harness world (the pruner with its defaults on request). */
import { CompactionEngine } from '../../src/compaction/engine.ts'
import { resolvePruneConfig, type ToolResultPruneConfig } from '../../src/prune/config.ts'
import type { AgentCompactionEngine } from '../../src/agent/compaction-port.ts'
import { ROUTE, type EngineInputs } from './harness.ts'

/** An engine factory for `world({ makeEngine })`. */
export function withEngine(options: { pruner?: boolean | ToolResultPruneConfig } = {}): (inputs: EngineInputs) => AgentCompactionEngine {
  return (inputs) => new CompactionEngine({
    log: inputs.log, runtime: inputs.runtime, policy: inputs.policy, clock: inputs.clock, warn: inputs.warn,
    newCompactionId: inputs.newCompactionId, newMessageId: inputs.newMessageId,
    agentRoute: { provider: ROUTE.provider, model: ROUTE.model }, sessionId: 'session-1',
    ...(options.pruner === true ? { pruner: resolvePruneConfig(undefined) } : {}),
    ...(typeof options.pruner === 'object' ? { pruner: resolvePruneConfig(options.pruner) } : {}),
  })
}
