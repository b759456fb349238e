// Peers (b) and (c): bare Fastify, without a logger or with its default pino logger writing to a file.
import Fastify from 'fastify';
const file = process.env.LOG_TO;
const app = Fastify({ logger: file ? { level: 'info', file } : false });
const started = Date.now();
app.get('/api/health', async () => ({ status: 'ok', db: 'ok', version: '0.1.0', 'uptime-s': Math.round((Date.now() - started) / 1000) }));
// the project's log-in body, schema-checked by Fastify's own Ajv: the peer's figure for the 400 of a bad body
const logIn = {
  type: 'object',
  required: ['email', 'password'],
  additionalProperties: false,
  properties: { email: { type: 'string', maxLength: 254 }, password: { type: 'string', maxLength: 128 } },
};
app.post('/api/account/log-in', { schema: { body: logIn } }, async () => ({ ok: true }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
console.log('ready');
// a clean exit on SIGTERM: the bench stops servers so, and V8 writes a profile (--cpu-prof) only on one
process.on('SIGTERM', () => process.exit(0));
