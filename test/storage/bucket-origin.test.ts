/**
 * The bucket's origin the client page's CSP names (docs/files.md, "The bucket's CORS"): for each
 * kind of S3 setting it is the origin of the URLs the S3 driver itself answers, the presigned
 * POST's (the upload) and the presigned GET's (where a signed link redirects). Nothing is sent:
 * presigning is local.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bucketOrigin } from '../../src/storage/bucket-origin.js';
import { S3Driver } from '../../src/storage/s3.js';
import type { S3Settings } from '../../src/storage/settings.js';

const base: S3Settings = {
  bucket: 'files',
  region: 'us-east-1',
  endpoint: undefined,
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  forcePathStyle: false,
};

const cases: Array<[string, Partial<S3Settings>, string]> = [
  ['AWS, virtual-hosted', {}, 'https://files.s3.us-east-1.amazonaws.com'],
  ['AWS in another region', { region: 'eu-west-3' }, 'https://files.s3.eu-west-3.amazonaws.com'],
  ['AWS, path-style', { region: 'eu-west-3', forcePathStyle: true }, 'https://s3.eu-west-3.amazonaws.com'],
  ['AWS, a bucket name with dots (path-style by the SDK)', { bucket: 'media.example.com', region: 'eu-west-3' }, 'https://s3.eu-west-3.amazonaws.com'],
  ['AWS China', { region: 'cn-north-1' }, 'https://files.s3.cn-north-1.amazonaws.com.cn'],
  ['an endpoint, path-style (MinIO)', { endpoint: 'http://minio:9000', forcePathStyle: true }, 'http://minio:9000'],
  [
    'an endpoint, virtual-hosted (R2)',
    { region: 'auto', endpoint: 'https://account.r2.cloudflarestorage.com' },
    'https://files.account.r2.cloudflarestorage.com',
  ],
  ['an endpoint on an IP address', { endpoint: 'http://127.0.0.1:9000' }, 'http://127.0.0.1:9000'],
];

describe("The bucket's origin for the page's CSP", () => {
  for (const [name, settings, expected] of cases) {
    it(`${name}: ${expected}, where the driver's upload and download URLs go`, async () => {
      const s3 = { ...base, ...settings };
      const driver = new S3Driver(s3);
      try {
        const expiresAt = new Date(Date.now() + 60_000);
        const upload = await driver.uploadTarget({ key: 'files/x', contentType: 'image/png', maxBytes: 100, expiresAt });
        const download = await driver.downloadUrl({ key: 'files/x', contentType: 'image/png', disposition: 'inline', expiresAt });
        const origin = await bucketOrigin(s3);
        assert.equal(origin, expected);
        assert.equal(new URL(upload.url).origin, origin, 'the presigned POST');
        assert.equal(new URL(download).origin, origin, 'the presigned GET');
      } finally {
        driver.destroy();
      }
    });
  }
});
