/**
 * A system built with a fixed configuration (memory database, test profile, one OIDC provider,
 * billing plans), for scripts that read what the running code registers: the OpenAPI snapshot
 * (openapi-snapshot.ts) and the names new:resource must not take (resources/registries.ts).
 */
import { loadConfig } from '../src/config.js';
import { buildSystem, type System } from '../src/system.js';
import { memoryDatabaseImage } from '../test/support/migrated.js';

export async function buildSnapshotSystem(): Promise<System> {
  // from the tests' migrated image (kept in the temporary directory): initdb and the migrations run once per set of migrations
  const image = await memoryDatabaseImage();
  return buildSystem(
    loadConfig({
      APP_ENV: 'test',
      DATABASE_URL: 'memory://',
      JWT_SECRET: 'snapshot-secret-0123456789abcdefghijklmnopqrstuvwxyz',
      PORT: '0',
      BILLING_PLANS: 'pro=price_pro,team=price_team',
      OIDC_PROVIDERS: 'acme',
      OIDC_ACME_ISSUER: 'https://idp.example.com',
      OIDC_ACME_CLIENT_ID: 'client',
      OIDC_ACME_CLIENT_SECRET: 'secret',
    }),
    { memoryDatabaseImage: image },
  );
}
