/**
 * The files API as route data (docs/files.md): `POST /api/uploads`, `POST /api/uploads/:id/complete`,
 * `GET /api/files/:id` (302 to a signed link), `DELETE /api/account/avatar` and
 * `DELETE /api/orgs/:id/logo` (admins).
 */
import { originOf } from '../audit/log.js';
import { ErrorBody } from '../http/errors.js';
import { ref, requireUser, route, type MembershipResolver, type RouteGroup } from '../http/routes.js';
import { CreateUpload, StoredFile, Upload, UploadPath } from './schemas.js';
import { StoreUnavailable } from './driver.js';
import { type FileService, storeUnavailable } from './service.js';

const error = ref(ErrorBody);

/** A store failure is 503 with Retry-After (nothing was written). */
const orUnavailable = async <T>(call: () => Promise<T>): Promise<T> => {
  try {
    return await call();
  } catch (err) {
    if (err instanceof StoreUnavailable) throw storeUnavailable();
    throw err;
  }
};

export function storageRoutes(files: FileService, memberships: MembershipResolver): RouteGroup {
  return {
    prefix: '/api',
    tags: ['Files'],
    auth: 'required',
    bodyLimit: 16 * 1024,
    memberships,
    routes: [
      route({
        method: 'POST',
        path: '/uploads',
        summary: 'Start an upload',
        description:
          'Declares a file (its purpose, name, type and size) and answers where to send its bytes: `method` POST with `fields` then `file` ' +
          '(S3: a presigned POST fixing the key, the type and the size range) or PUT with the bytes (disk: a signed URL, single use, 15 minutes). ' +
          'A type or size the purpose does not allow is 400 `file-rejected`; an organization file past its plan’s `storage-bytes` is 402 `usage-limit`.',
        status: 201,
        schemas: { body: ref(CreateUpload), response: { 201: ref(Upload), 400: error, 402: error, 403: error, 404: error, 503: error } },
        handler: ({ parameters, user, request }) =>
          orUnavailable(() => files.createUpload({ accountId: requireUser(user).id, origin: originOf(request) }, parameters.body)),
      }),
      route({
        method: 'POST',
        path: '/uploads/:id/complete',
        summary: 'Complete an upload',
        description:
          'Reads the stored object’s size and first bytes: when they are as declared and as the purpose allows, the file is kept (an image with its 64 and 256 px WebP renditions) ' +
          'and attached (an avatar, a logo); otherwise 400 `file-rejected` and the object is deleted.',
        status: 201,
        schemas: { params: UploadPath, response: { 201: ref(StoredFile), 400: error, 404: error, 503: error } },
        handler: ({ parameters, user, request }) =>
          orUnavailable(() => files.complete({ accountId: requireUser(user).id, origin: originOf(request) }, parameters.path.id)),
      }),
      route({
        method: 'GET',
        path: '/files/:id',
        summary: 'Download a file',
        description: 'A 302 to a signed link valid 5 minutes, for whoever may read what the file belongs to.',
        schemas: { params: UploadPath, response: { 302: null, 404: error } },
        async handler({ parameters, user, reply }) {
          reply.code(302).header('location', await files.linkFor(requireUser(user).id, parameters.path.id));
          return undefined;
        },
      }),
      route({
        method: 'DELETE',
        path: '/account/avatar',
        summary: 'Remove the avatar',
        schemas: { response: { 204: null, 404: error } },
        async handler({ user, request }) {
          await files.removeAvatar({ accountId: requireUser(user).id, origin: originOf(request) });
          return undefined;
        },
      }),
      route({
        method: 'DELETE',
        path: '/orgs/:id/logo',
        summary: "Remove the organization's logo",
        orgRole: 'admin',
        schemas: { params: UploadPath, response: { 204: null, 404: error } },
        async handler({ parameters, user, request }) {
          await files.removeLogo({ accountId: requireUser(user).id, origin: originOf(request) }, parameters.path.id);
          return undefined;
        },
      }),
    ],
  };
}
