/**
 * The `/metrics` listener: its own node:http server on METRICS_HOST:METRICS_PORT, apart from
 * the public port, so metrics are never public by accident. It answers `GET /metrics` only.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Scrape {
  contentType: string;
  body(): Promise<string>;
}

export interface MetricsServer {
  /** `http://host:port` */
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(host: string, port: number, scrape: Scrape, onError: (err: Error) => void): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: metrics are at /metrics\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { 'content-type': 'text/plain', allow: 'GET, HEAD' }).end('Method not allowed\n');
      return;
    }
    scrape.body().then(
      (body) => res.writeHead(200, { 'content-type': scrape.contentType, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : body),
      (err: Error) => {
        onError(err);
        res.writeHead(500, { 'content-type': 'text/plain' }).end('Collecting the metrics failed\n');
      },
    );
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
