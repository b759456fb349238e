/**
 * GitHub's OAuth 2 endpoints and the two REST API calls the app makes, as a GitHub Enterprise
 * Server would serve them (`/login/oauth/*`, `/api/v3/*`), on 127.0.0.1. The authorization page
 * approves at once as `signedIn` (the person signed in at GitHub); the token endpoint checks the
 * client secret, the code's redirect URI and the PKCE verifier, as GitHub does.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export interface GitHubPerson {
  id: number;
  login: string;
  name: string | null;
  emails: Array<{ email: string; primary: boolean; verified: boolean }>;
}

export interface FakeGitHub {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** who is signed in at GitHub: the next authorization approves as this person */
  signedIn: GitHubPerson | undefined;
  /** the authorization requests' query parameters, newest last */
  authorizations: URLSearchParams[];
  stop(): Promise<void>;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeGitHub(): Promise<FakeGitHub> {
  const clientId = 'gh-client';
  const clientSecret = `gh-secret-${randomBytes(12).toString('hex')}`;
  const codes = new Map<string, { person: GitHubPerson; redirectUri: string; challenge: string | null }>();
  const tokens = new Map<string, GitHubPerson>();
  const fake: FakeGitHub = { baseUrl: '', clientId, clientSecret, signedIn: undefined, authorizations: [], stop: async () => undefined };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', fake.baseUrl);
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      fake.authorizations.push(url.searchParams);
      const redirectUri = url.searchParams.get('redirect_uri') ?? '';
      if (url.searchParams.get('client_id') !== clientId || !fake.signedIn) return json(res, 400, { error: 'bad request' });
      const code = randomBytes(10).toString('hex');
      codes.set(code, { person: fake.signedIn, redirectUri, challenge: url.searchParams.get('code_challenge') });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const form = new URLSearchParams(await readBody(req));
      const grant = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) return json(res, 200, { error: 'incorrect_client_credentials' });
      const verifier = form.get('code_verifier') ?? '';
      const pkceOk = grant?.challenge === null || grant?.challenge === createHash('sha256').update(verifier).digest('base64url');
      if (!grant || grant.redirectUri !== form.get('redirect_uri') || !pkceOk) return json(res, 400, { error: 'bad_verification_code' });
      const token = `gho_${randomBytes(16).toString('hex')}`;
      tokens.set(token, grant.person);
      return json(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
    }
    const person = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /i, ''));
    if (req.method === 'GET' && url.pathname.startsWith('/api/v3/')) {
      if (!person) return json(res, 401, { message: 'Bad credentials' });
      if (url.pathname === '/api/v3/user') return json(res, 200, { id: person.id, login: person.login, name: person.name });
      if (url.pathname === '/api/v3/user/emails')
        return json(
          res,
          200,
          person.emails.map((e) => ({ ...e, visibility: null })),
        );
    }
    json(res, 404, { message: 'Not Found' });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => json(res, 500, { message: 'error' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  fake.stop = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return fake;
}
