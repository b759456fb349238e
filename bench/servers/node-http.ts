// Peer (a): raw node:http answering the same JSON body as /api/health.
import { createServer } from 'node:http';
const started = Date.now();
createServer((_req, res) => {
  const body = JSON.stringify({ status: 'ok', db: 'ok', version: '0.1.0', 'uptime-s': Math.round((Date.now() - started) / 1000) });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));
// a clean exit on SIGTERM: the bench stops servers so, and V8 writes a profile (--cpu-prof) only on one
process.on('SIGTERM', () => process.exit(0));
