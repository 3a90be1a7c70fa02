import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The paths fw's runtime answers (its entries, live stream, health, agents and its own /_fw/ routes). */
const runtimePath = /^\/(commands|queries|live|health|entries|ai|_fw)(\/|\?|$)/;

/**
 * A reverse proxy on 127.0.0.1 that puts a web server and `fw start` on one origin, as a deployment of
 * a Nuxt web/ does: the runtime's paths go to `runtimeUrl`, everything else to `webUrl`. Bodies are
 * piped both ways, so the live stream flows as it comes.
 */
export async function oneOrigin(webUrl: string, runtimeUrl: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const target = new URL(req.url ?? '/', runtimePath.test(req.url ?? '/') ? runtimeUrl : webUrl);
    const upstream = request(target, { method: req.method, headers: { ...req.headers, host: target.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
