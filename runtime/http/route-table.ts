import createRouter, { type HTTPMethod } from 'find-my-way';

/** What a lookup found: the route for the request's method, or only the methods the path is served with. */
export type RouteLookup<R> =
  | { route: R; params: Record<string, string> }
  /** The path is served, not with this method: a 405 listing `allowed` (or a CORS preflight), named by `route`. */
  | { allowed: readonly string[]; route: R; params: Record<string, string> };

export interface RouteTable<R> {
  /**
   * Registers `route` for `method` at `path`: static segments, `:param` segments, and a trailing `*`
   * that takes the rest of the path, empty included. The first route registered for a method and a
   * path shape keeps it.
   */
  add(method: string, path: string, route: R): void;
  /** The route for `method` at `path` (the raw request path, no query string); null when nothing serves the path. */
  lookup(method: string, path: string): RouteLookup<R> | null;
}

interface Registered<R> {
  route: R;
  /** Registration order: the order of the methods an `Allow` header lists. */
  order: number;
}

/**
 * fw's one route table, on find-my-way (chosen by bench/http/router.ts, see bench/http/README.md): a
 * radix tree per method where, segment by segment, a static segment beats a param and a param beats
 * the rest-of-path wildcard, backtracking when the more literal branch leads nowhere.
 */
export function createRouteTable<R>(): RouteTable<R> {
  // Lengths are the body limit's business, not the router's (find-my-way's default caps a param at 100 characters).
  const router = createRouter({ maxParamLength: Number.MAX_SAFE_INTEGER });
  const methods: string[] = [];
  const shapes = new Set<string>();

  const find = (method: string, path: string) => {
    const found = router.find(method as HTTPMethod, path);
    return found ? { registered: found.store as Registered<R>, params: found.params as Record<string, string> } : null;
  };

  return {
    add(method, path, route) {
      const shape = `${method} ${path.replace(/:[^/]+/g, ':')}`;
      if (shapes.has(shape)) return;
      shapes.add(shape);
      if (!methods.includes(method)) methods.push(method);
      router.on(method as HTTPMethod, path, () => {}, { route, order: shapes.size } satisfies Registered<R>);
    },
    lookup(method, rawPath) {
      const path = verbatim(rawPath);
      const found = find(method, path);
      if (found) return { route: found.registered.route, params: found.params };
      const others = methods
        .map((other) => ({ method: other, found: other === method ? null : find(other, path) }))
        .filter((other) => other.found !== null)
        .sort((a, b) => a.found!.registered.order - b.found!.registered.order);
      const first = others[0];
      if (!first) return null;
      return { allowed: others.map((other) => other.method), route: first.found!.registered.route, params: first.found!.params };
    },
  };
}

/**
 * The path as find-my-way should see it so that it matches the raw path, as fw always has: find-my-way
 * decodes percent escapes (`/api/tickets/%6Eew` would reach the `new` route, a malformed escape nothing)
 * and ends the path at `#`; escaped once more, its decoding gives back the raw text. The route decodes
 * its params itself (an endpoint answers a malformed one with 400).
 */
function verbatim(path: string): string {
  if (!path.includes('%') && !path.includes('#')) return path;
  return path.replaceAll('%', '%25').replaceAll('#', '%23');
}
