/**
 * Mounts mock providers in-process (the default mount, design §4 item 4) with `@mswjs/interceptors` alone —
 * the request interception msw is built on, without msw's own ~20 MB of dependencies (graphql, cookie
 * handling, a prompt library, its CLI): `node:http`/`https` `ClientRequest`, `XMLHttpRequest` and the global
 * `fetch` are patched while mounted. Each route delegates to the provider's WHATWG handler, whose `Response`
 * is returned as is (`Response.error()` becomes a network error, a streamed body streams). A request to any
 * other URL fails with a network error naming it, so a run can never reach a real provider. Like msw, this
 * patches the process: never combine it with nock in one test file or process.
 */
import { BatchInterceptor } from '@mswjs/interceptors'
import { ClientRequestInterceptor } from '@mswjs/interceptors/ClientRequest'
import { FetchInterceptor } from '@mswjs/interceptors/fetch'
import { XMLHttpRequestInterceptor } from '@mswjs/interceptors/XMLHttpRequest'
import type { MockProvider } from './mock-provider.ts'

/** One intercepted route: `method` and a path under `base` (origin and path prefix, no trailing slash). */
export interface InterceptRoute {
  method: 'GET' | 'POST'
  /** Absolute URL prefix, e.g. `http://openai.mock/v1`. */
  base: string
  /** The path after `base`, e.g. `/chat/completions`; `/models/:id` matches one more path segment. */
  path: string
  handle(request: Request): Promise<Response> | Response
}

/** A live in-process mount. */
export interface InterceptMount {
  /** The base URL the (first) provider answers under (no trailing slash), e.g. `http://openai.mock/v1`. */
  baseURL: string
  /** Stops intercepting. Idempotent. */
  close(): void
}

/** `baseUrl` normalised, without a trailing slash. */
export function trimmedBaseUrl(baseUrl: string): string {
  return new URL(baseUrl).href.replace(/\/+$/, '')
}

/** True iff `url` (its origin and path; query and trailing slash ignored) is `route.base + route.path`. */
function matches(route: InterceptRoute, method: string, url: URL): boolean {
  if (method !== route.method) return false
  const here = `${url.origin}${url.pathname.replace(/\/+$/, '')}`
  const want = `${route.base}${route.path}`
  if (!want.includes('/:')) return here === want
  const [prefix] = want.split('/:') as [string]
  const rest = here.slice(prefix.length)
  return here.startsWith(prefix) && /^\/[^/]+$/.test(rest)
}

/** The routes of one provider under `baseUrl` (chat completions or messages, model metadata, model list). */
export function providerRoutes(provider: MockProvider, baseUrl: string): InterceptRoute[] {
  const base = trimmedBaseUrl(baseUrl)
  const handle = (request: Request): Promise<Response> => provider.handle(request)
  return [
    { method: 'POST', base, path: '/chat/completions', handle },
    { method: 'POST', base, path: '/messages', handle }, // the anthropic wire
    { method: 'GET', base, path: '/models/:id', handle },
    { method: 'GET', base, path: '/models', handle },
  ]
}

/**
 * Starts intercepting `routes`; every other request made while mounted fails with a network error, except the
 * URLs `passthrough` accepts, which reach the network (an upstream summarizer being recorded, issue #20).
 */
export function interceptRoutes(routes: readonly InterceptRoute[], passthrough: (url: URL) => boolean = () => false): () => void {
  const interceptor = new BatchInterceptor({
    name: 'compaction-sim-mock',
    interceptors: [new ClientRequestInterceptor(), new XMLHttpRequestInterceptor(), new FetchInterceptor()],
  })
  interceptor.on('request', async ({ request, controller }) => {
    const url = new URL(request.url)
    const route = routes.find((r) => matches(r, request.method, url))
    if (route === undefined) {
      if (passthrough(url)) return
      controller.errorWith(new TypeError(`compaction-sim mock: no mock provider route for ${request.method} ${url.href}; requests outside the mock are refused`))
      return
    }
    controller.respondWith(await route.handle(request))
  })
  interceptor.apply()
  let open = true
  return () => {
    if (!open) return
    open = false
    interceptor.dispose()
  }
}

/** Mounts `provider` under `baseUrl` (and, optionally, more providers under their own base URLs). */
export function mountIntercept(
  provider: MockProvider,
  baseUrl: string,
  more: ReadonlyArray<{ provider: MockProvider; baseUrl: string }> = [],
): InterceptMount {
  const close = interceptRoutes([...providerRoutes(provider, baseUrl), ...more.flatMap((m) => providerRoutes(m.provider, m.baseUrl))])
  return { baseURL: trimmedBaseUrl(baseUrl), close }
}
