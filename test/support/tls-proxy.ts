/**
 * A TLS-ending reverse proxy on 127.0.0.1, as production runs behind a load balancer: https in
 * front (a generated self-signed certificate), plain http to the app behind it with
 * X-Forwarded-For and X-Forwarded-Proto: https. Its `ca` is the certificate to trust.
 */
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';

export interface TlsProxy {
  port: number;
  ca: string;
  close(): Promise<void>;
}

/** Listens on `port` (0: any) and forwards every request to `target` (`http://127.0.0.1:<port>`). */
export async function startTlsProxy(target: string, port = 0): Promise<TlsProxy> {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  });
  const to = new URL(target);
  const server = createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    const upstream = httpRequest(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, 'x-forwarded-for': req.socket.remoteAddress ?? '127.0.0.1', 'x-forwarded-proto': 'https' },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      res.statusCode = 502;
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    ca: pems.cert,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
