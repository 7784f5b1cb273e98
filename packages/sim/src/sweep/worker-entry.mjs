/**
 * Entry of a sweep worker thread (tinypool `filename`): Node 20 cannot run TypeScript and a worker thread does
 * not inherit `--import tsx`, so this plain module loads `worker.ts` through tsx's scoped ESM API and
 * re-exports its task function.
 */
import { tsImport } from 'tsx/esm/api'

const mod = await tsImport('./worker.ts', import.meta.url)

/** Runs one `PoolTask` (see worker.ts). */
export default mod.default
