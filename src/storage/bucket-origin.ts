/**
 * The bucket's origin, for the client page's Content-Security-Policy (docs/files.md): the browser
 * posts uploads there (`connect-src`) and the signed links redirect there (`img-src`). Resolved by
 * the SDK's own endpoint rules, with the client's own FIPS and dual-stack settings (the SDK reads
 * them from the environment), so it is the origin `createPresignedPost` and `getSignedUrl` put in
 * their URLs: `https://<bucket>.s3.<region>.amazonaws.com` on AWS (path-style, or a bucket name
 * with dots: `https://s3.<region>.amazonaws.com`; other partitions their own domain), the
 * endpoint's origin with S3_FORCE_PATH_STYLE, `<bucket>.<endpoint host>` without it.
 */
import { S3Client } from '@aws-sdk/client-s3';
import type { S3Settings } from './settings.js';

export async function bucketOrigin(settings: S3Settings): Promise<string> {
  // no request is sent and no credential is read: the client only resolves its endpoint rules
  const client = new S3Client({
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
  });
  try {
    const { config } = client;
    const [useFips, useDualStack] = await Promise.all([config.useFipsEndpoint(), config.useDualstackEndpoint()]);
    const endpoint = config.endpointProvider({
      Bucket: settings.bucket,
      Region: settings.region,
      ForcePathStyle: settings.forcePathStyle,
      UseFIPS: useFips,
      UseDualStack: useDualStack,
      Accelerate: config.useAccelerateEndpoint ?? false,
      ...(settings.endpoint ? { Endpoint: settings.endpoint } : {}),
    });
    return endpoint.url.origin;
  } finally {
    client.destroy();
  }
}
