/**
 * The storage module's settings (docs/files.md, "Settings"): the driver (`STORAGE=disk`, the
 * default, in STORAGE_DIR; or `STORAGE=s3` with S3_BUCKET and its credentials, any S3-compatible
 * store through S3_ENDPOINT) and the files' limits.
 */
import { ConfigError, int, oneOf, type Env } from '../runtime/settings.js';

export interface S3Settings {
  bucket: string;
  region: string;
  endpoint: string | undefined;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  forcePathStyle: boolean;
}

export interface StorageSettings {
  driver: 'disk' | 's3';
  /** the disk driver's directory */
  dir: string;
  s3: S3Settings | undefined;
  /** the most a file field's file may hold, bytes (FILE_MAX_BYTES) */
  fileMaxBytes: number;
  /** the most an image (avatar, logo, image field) may hold, bytes (FILE_IMAGE_MAX_BYTES) */
  imageMaxBytes: number;
  /** how long an upload's URL is valid, ms */
  uploadTtlMs: number;
  /** how long a download URL is valid, ms */
  downloadTtlMs: number;
  /** an upload never completed is deleted after this, ms */
  pendingTtlMs: number;
}

const bool = (env: Env, name: string, fallback: boolean): boolean => {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, `must be true or false, got "${env[name]}"`);
};

export function storageSettings(env: Env): StorageSettings {
  const driver = oneOf(env, 'STORAGE', ['disk', 's3'] as const, 'disk');
  let s3: S3Settings | undefined;
  if (driver === 's3') {
    const bucket = env.S3_BUCKET?.trim();
    if (!bucket) throw new ConfigError('S3_BUCKET', 'must name the bucket when STORAGE=s3');
    const endpoint = env.S3_ENDPOINT?.trim() || undefined;
    if (endpoint && !URL.canParse(endpoint)) throw new ConfigError('S3_ENDPOINT', `must be a URL, got "${endpoint}"`);
    const accessKeyId = env.S3_ACCESS_KEY_ID?.trim() || undefined;
    const secretAccessKey = env.S3_SECRET_ACCESS_KEY?.trim() || undefined;
    if (Boolean(accessKeyId) !== Boolean(secretAccessKey))
      throw new ConfigError(
        accessKeyId ? 'S3_SECRET_ACCESS_KEY' : 'S3_ACCESS_KEY_ID',
        'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together (or neither: the SDK finds credentials itself)',
      );
    s3 = {
      bucket,
      region: env.S3_REGION?.trim() || 'us-east-1',
      endpoint,
      accessKeyId,
      secretAccessKey,
      forcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', false),
    };
  }
  return {
    driver,
    dir: env.STORAGE_DIR?.trim() || './data/files',
    s3,
    fileMaxBytes: int(env, 'FILE_MAX_BYTES', 25 * 1024 * 1024, 1, 5 * 1024 * 1024 * 1024),
    imageMaxBytes: int(env, 'FILE_IMAGE_MAX_BYTES', 2 * 1024 * 1024, 1, 50 * 1024 * 1024),
    uploadTtlMs: 15 * 60_000,
    downloadTtlMs: 5 * 60_000,
    pendingTtlMs: int(env, 'FILE_PENDING_TTL', 86_400, 1, 30 * 86_400) * 1000,
  };
}
