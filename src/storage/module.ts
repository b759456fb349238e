/**
 * Files (docs/files.md): one store for every instance, on disk by default (STORAGE_DIR, beside the
 * embedded database: `npm start` needs nothing new) or any S3-compatible bucket (STORAGE=s3).
 * Purposes are declared by modules (`declares: {[STORAGE_PURPOSES_KEY]: [...]}`); this module
 * declares the avatar and the organization logo, plugs their links into the account's and the
 * organizations' shapes, and deletes the store's objects of every file row that goes, by a durable job.
 */
import { MESSAGES_KEY, phrase } from '../i18n/messages.js';
import { sql } from 'kysely';
import { accountModule } from '../account/module.js';
import { STORAGE_BYTES_METER } from '../billing/catalogue.js';
import { billingModule } from '../billing/module.js';
import type { DB } from '../db/database.js';
import { healthModule } from '../health/module.js';
import { HttpError } from '../http/errors.js';
import { apiSecurityHeaders } from '../http/security-headers.js';
import { orgsModule } from '../orgs/module.js';
import { defineModule } from '../runtime/module.js';
import { bucketOrigin } from './bucket-origin.js';
import { StorageDeletions } from './deletions.js';
import { DiskDriver } from './disk.js';
import type { StorageDriver } from './driver.js';
import { FileLinks } from './links.js';
import { LINKS_PATH, StorageMount, UPLOADS_PATH } from './mount.js';
import { AVATAR_PURPOSE, type FilePurpose, LOGO_PURPOSE, STORAGE_PURPOSES_KEY } from './purposes.js';
import { storageRoutes } from './routes.js';
import { S3Driver } from './s3.js';
import { STORAGE_SCHEMAS } from './schemas.js';
import { FileService, type StorageQuota } from './service.js';
import { storageSettings } from './settings.js';
import { StorageTokens } from './tokens.js';
import { STORAGE_MESSAGES } from './messages/index.js';
import { RESOURCES_MESSAGES } from '../resources/messages/index.js';

export const storageModule = defineModule({
  name: 'storage',
  declares: { [STORAGE_PURPOSES_KEY]: [AVATAR_PURPOSE, LOGO_PURPOSE], [MESSAGES_KEY]: [STORAGE_MESSAGES, RESOURCES_MESSAGES] },
  settings: (env) => storageSettings(env),
  async start(ctx, settings) {
    const { config, db } = ctx;
    // the browser posts uploads to the bucket and follows signed links there: the page's CSP names it
    // (first: nothing is started yet that a failure here would leave running)
    const bucket = settings.s3 ? await bucketOrigin(settings.s3) : undefined;
    const log = ctx.logs.logger('saas.storage');
    const tokens = new StorageTokens(config.encryptionKey);
    const s3 = settings.s3 ? new S3Driver(settings.s3) : undefined;
    const driver: StorageDriver = s3 ?? new DiskDriver(settings.dir, tokens, `${config.appUrl}${UPLOADS_PATH}`);
    const links = new FileLinks(tokens, `${config.appUrl}${LINKS_PATH}`, settings.downloadTtlMs);
    const purposes = new Map<string, FilePurpose>();
    for (const purpose of ctx.declared<FilePurpose>(STORAGE_PURPOSES_KEY)) {
      if (purposes.has(purpose.id)) throw new Error(`The file purpose ${purpose.id} is declared twice`);
      purposes.set(purpose.id, purpose);
    }
    const { usage } = ctx.use(billingModule);
    // an organization's files count now (a gauge): an upload past the plan's hard limit is refused before anything is stored
    const bytesOf = async (trx: DB, organizationId: string) =>
      Number(
        (
          await trx
            .selectFrom('stored_file')
            .select(sql<string>`coalesce(sum(size), 0)`.as('bytes'))
            .where('organization_id', '=', organizationId)
            .executeTakeFirst()
        )?.bytes ?? 0,
      );
    usage.useGauge(STORAGE_BYTES_METER.id, (organizationId) => bytesOf(db, organizationId));
    const quota: StorageQuota = async (trx, organizationId, adding) => {
      await sql`select pg_advisory_xact_lock(hashtextextended(${`saas:storage:${organizationId}`}, 0))`.execute(trx);
      const hard = await usage.hardLimitOf(trx, organizationId, STORAGE_BYTES_METER.id);
      if (hard === null) return;
      const used = await bytesOf(trx, organizationId);
      if (used + adding > hard)
        throw new HttpError(402, {
          type: 'usage-limit',
          message: phrase("The organization's files would hold more than its plan's {hard} bytes ({used} used)", { hard, used }),
          meter: STORAGE_BYTES_METER.id,
          limit: hard,
          used,
        });
    };
    let deletions: StorageDeletions | undefined;
    const memberships = ctx.use(orgsModule).memberships;
    const files = new FileService({
      db,
      driver,
      links,
      purposes: () => purposes,
      memberships,
      settings,
      log,
      quota,
      deletionsQueued: () => deletions?.nudge(),
    });
    deletions = new StorageDeletions({ db, driver, log, pollMs: 5000, leaseMs: 60_000 }, () => files.purgePending());
    ctx.listener.subscribe({
      channel: 'storage_deletion',
      onNotification: () => deletions?.nudge(),
      catchUp: async () => deletions?.nudge(),
      catchUpWhileDisconnected: false,
    });
    deletions.start();
    ctx.use(accountModule).shaping.useImageLinks((fileId) => links.image(fileId));
    ctx.use(orgsModule).shaping.useImageLinks((fileId) => links.image(fileId));
    ctx.use(healthModule).checkStorage((timeoutMs) =>
      Promise.race([
        driver.ping().then(
          () => true,
          () => false,
        ),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref()),
      ]),
    );
    const mount = new StorageMount({
      db,
      driver,
      tokens,
      files,
      log,
      headers: apiSecurityHeaders(config.secureCookies),
      downloadTtlMs: settings.downloadTtlMs,
    });
    return {
      pageOrigins: bucket ? { connect: [bucket], img: [bucket] } : undefined,
      services: {
        files,
        links,
        driver,
        /** readiness: resolves when the store answers */
        ping: () => driver.ping(),
      },
      schemas: STORAGE_SCHEMAS,
      routeGroups: [storageRoutes(files, memberships)],
      mounts: [{ urls: [`${UPLOADS_PATH}/*`, `${LINKS_PATH}/*`], handle: (req, res, _address, _app, say) => mount.handle(req, res, say) }],
      async stop() {
        await deletions?.stop(config.shutdownTimeoutMs);
        s3?.destroy();
      },
    };
  },
});
