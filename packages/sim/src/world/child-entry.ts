/**
 * Where a child process or worker thread of sim starts, and with which Node flags — the one place that
 * knows whether sim runs from its TypeScript sources (in the repository: tsx, vitest) or from the built
 * `dist/` of an installed package. From source, a child is `node --conditions=source --import tsx <x>.ts`
 * (the `source` export condition makes the workspace packages resolve to their sources too); from `dist`,
 * it is plain `node <x>.js`: no tsx, no TypeScript. A user subject module written in TypeScript still needs
 * a loader in the child: it gets tsx when tsx resolves from the module's folder (or from sim's), or nothing
 * on a Node that strips types itself; otherwise Node's own error for the `.ts` file ends up in the child's stderr.
 */
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'

/**
 * True when sim runs from its TypeScript sources, false when it runs from the built `dist/` JavaScript. The path
 * decides, not the whole URL: in a pool worker thread tsx's scoped loader (`worker-entry.mjs`) appends a query.
 */
export const FROM_SOURCE: boolean = new URL(import.meta.url).pathname.endsWith('.ts')

/** File endings Node 20 cannot load without a TypeScript loader. */
const TYPESCRIPT_FILE = /\.(c|m)?tsx?$/i

/**
 * The file of a child entry named by its source URL (`new URL('./crash-child.ts', import.meta.url)`): the
 * `.ts` file itself from source, the `.js` file tsc emitted for it from `dist`. Returns an absolute path.
 */
export function childEntryFile(sourceUrl: URL): string {
  const path = fileURLToPath(sourceUrl)
  return FROM_SOURCE ? path : path.replace(/\.ts$/, '.js')
}

/**
 * The Node flags a child needs before its entry file: from source, the `source` condition and the tsx
 * loader; from `dist`, none — unless one of `modules` (absolute paths of user modules the child imports, such
 * as a `--subject module:` file) is TypeScript, then tsx's loader when it resolves (see the module doc).
 */
export function childNodeArgs(modules: readonly string[] = []): string[] {
  if (FROM_SOURCE) return ['--conditions=source', '--import', tsxLoaderUrl(import.meta.url) ?? 'tsx']
  const typescript = modules.find((m) => TYPESCRIPT_FILE.test(m))
  if (typescript === undefined || nodeStripsTypes()) return []
  const loader = tsxLoaderUrl(pathToFileURL(typescript).href) ?? tsxLoaderUrl(import.meta.url)
  return loader === undefined ? [] : ['--import', loader]
}

/**
 * The sweep worker thread's module (tinypool `filename`, a file URL): from `dist`, the emitted `worker.js`;
 * from source, `worker-entry.mjs`, which loads `worker.ts` through tsx (a worker does not inherit `--import`).
 */
export function workerEntryUrl(): string {
  return new URL(FROM_SOURCE ? '../sweep/worker-entry.mjs' : '../sweep/worker.js', import.meta.url).href
}

/** The Node flags of a sweep worker thread: the `source` condition from source (so packages resolve to `src/`), none from `dist`. */
export function workerExecArgv(): string[] {
  return FROM_SOURCE ? ['--conditions=source'] : []
}

/** tsx's ESM loader as resolved from `fromUrl`, or undefined when tsx is not installed there. */
function tsxLoaderUrl(fromUrl: string): string | undefined {
  try {
    return pathToFileURL(createRequire(fromUrl).resolve('tsx')).href
  } catch {
    return undefined // tsx is not installed next to that module
  }
}

/** True on a Node that runs TypeScript files itself (type stripping on by default, Node ≥ 22.18). */
function nodeStripsTypes(): boolean {
  return (process.features as { typescript?: unknown }).typescript === 'strip' || (process.features as { typescript?: unknown }).typescript === 'transform'
}
