// Peer (d): bare Express 5.
import express from 'express';
const app = express();
const started = Date.now();
app.get('/api/health', (_req, res) => {
  res.json({ status: 'ok', db: 'ok', version: '0.1.0', 'uptime-s': Math.round((Date.now() - started) / 1000) });
});
app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));
// a clean exit on SIGTERM: the bench stops servers so, and V8 writes a profile (--cpu-prof) only on one
process.on('SIGTERM', () => process.exit(0));
